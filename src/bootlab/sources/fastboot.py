"""A bootloader's own log read over USB with fastboot: `fastboot oem dmesg` (Qualcomm's ABL on
Pixels and others), `fastboot oem log` (lk2nd), what a phone in fastboot mode says of its
boot when it has no serial console:

    root@host: fastboot oem dmesg
    (bootloader) UEFI Start     [  830]
    (bootloader)  - 0x09FC01000 [  833] Sec.efi
    (bootloader) RAM Entry 0 : Base 0x0000000080000000  Size 0x000000003CC00
    (bootloader) 000
    OKAY [  0.165s]

The fastboot tool prints each INFO reply of the bootloader as a line after `(bootloader) `;
a reply holds at most 64 bytes, so the bootloader cuts a longer line into replies of the
longest text that fits (59 characters on a Pixel 4), and a reply that long is read as
continued by the next.  The host's own lines (the command, OKAY, the total time) are not the
bootloader's.  The log was kept in the bootloader's memory, not printed on a console.  Its
times are the firmware's own (Qualcomm's UEFI: ms since the reset), read as a console's.
"""

from __future__ import annotations

from ..timeline import Boot, Clock, ConsoleLog, SourceInfo
from .console import Interpreter
from .lines import split
from .userspace import Patterns

FORMAT = "fastboot"
PREFIX = "(bootloader) "
# fastboot's replies: 64 bytes, "INFO" and the text; no bootloader cuts them shorter than this.
SHORTEST_CUT = 56


def sniff(lines: list[str]) -> float:
    if not lines:
        return 0.0
    return sum(1 for line in lines if line.startswith(PREFIX)) / len(lines)


def _replies(data: bytes) -> list[tuple[int, str]]:
    """(line number, text) of each INFO reply, in order."""
    return [(line.lineno, line.text.rstrip("\r")[len(PREFIX):]) for line in split(data)
            if line.text.startswith(PREFIX)]


def _cut_width(replies: list[tuple[int, str]]) -> int | None:
    """The length at which this bootloader cut its lines: the longest reply, when several
    are that long (one alone is a line that happened to be the longest)."""
    if not replies:
        return None
    width = max(len(text) for _, text in replies)
    if width < SHORTEST_CUT or sum(1 for _, text in replies if len(text) == width) < 2:
        return None
    return width


def parse(boot: Boot, file: str, data: bytes, patterns: Patterns) -> None:
    replies = _replies(data)
    width = _cut_width(replies)
    log = ConsoleLog(file, Clock.PRINTK, printed=False, consoled=False)
    interp = Interpreter(boot, file, patterns, log)
    k = 0
    while k < len(replies):
        lineno, text = replies[k]
        k += 1
        while width is not None and len(replies[k - 1][1]) == width and k < len(replies):
            text += replies[k][1]
            k += 1
        interp.console_line(None, text, lineno, len(text.encode("utf-8", "replace")) + 1)
    interp.close()
    boot.logs.append(log)
    boot.sources.append(SourceInfo(file, FORMAT, len(replies), 0))
