"""Turning raw log bytes into text lines, whatever state the bytes are in.

Logs arrive with bad UTF-8, NULs, bare CRs, ANSI colour and terminal-reset escapes,
and backspaces; parsers match on clean text but console cost counts the raw bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

# CSI sequences (colours, cursor), OSC, and two-byte escapes such as ESC c (reset).
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_]|[ -/][0-~]|.?)")
# Control characters and ESC: a line holding none needs no cleaning.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
CONTROL_BYTES = re.compile(CONTROL.pattern.encode())


def clean(text: str) -> str:
    """Text for matching: escapes and control characters (CR, NUL, backspace) removed."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    # Backspaces are dropped, not applied: U-Boot's countdown "1\b\b\b 0" keeps its 1.
    return CONTROL.sub("", text) if CONTROL.search(text) else text


# What bytes that are not UTF-8 decode to.  A UART receives such bytes while its line
# settles at power-on (0xff, 0xfe, a break), just before the first banner on its line.
NOISE = "\ufffd"


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


@dataclass(slots=True)
class Line:
    lineno: int  # 1-based line number in the file
    text: str  # decoded, not yet cleaned
    nbytes: int  # raw bytes including the line terminator


def split(data: bytes) -> Iterator[Line]:
    """Split on LF (CRLF and bare CR are kept inside the text for clean() to drop).

    A final line without a terminator is still yielded (a truncated log).
    """
    text = decode(data)
    exact = data.isascii()
    lines = text.split("\n")
    last = len(lines) - 1
    for i, line in enumerate(lines):
        if i == last and not line:
            break
        nbytes = len(line) if exact else len(line.encode("utf-8", "replace"))
        yield Line(i + 1, line, nbytes + (1 if i < last else 0))


def looks_binary(data: bytes, sample: int = 65536) -> bool:
    """True when the bytes are mostly not text (a log may hold a few NULs, not many)."""
    head = data[:sample]
    if not head:
        return False
    controls = sum(1 for b in head if b < 0x20 and b not in (9, 10, 13, 27, 8))
    invalid = head.decode("utf-8", errors="replace").count("\ufffd")
    if (controls + invalid) / len(head) > 0.1:
        return True
    return head.count(b"\n") == 0 and len(head) >= 4096


def seconds_to_ns(text: str) -> int:
    """'12.345678' -> 12345678000 exactly (no float rounding)."""
    sec, _, frac = text.strip().partition(".")
    return int(sec or 0) * 1_000_000_000 + int((frac + "000000000")[:9])
