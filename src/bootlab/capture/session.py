"""The capture loop: read a source, stamp, write, watch for patterns, stop cleanly.

Stops at end of stream, at a quit pattern, at the ready pattern (when asked), after a
silence or past a deadline; Ctrl-C ends it with the file complete.  With `reconnect`, a
source that goes away (a USB serial adapter unplugged) is reopened when it comes back and
the gap is marked in the capture.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from .source import Source, SourceClosed, SourceLost
from .stalls import StallWatch


@dataclass
class Stop:
    quit: re.Pattern | None = None  # stop when a line matches (grabserial -q)
    ready: re.Pattern | None = None  # note when a line matches; stop there if stop_at_ready
    stop_at_ready: bool = False
    after_ready: float | None = None  # keep reading this long after ready, then stop
    silence: float | None = None  # stop when nothing arrives for this long
    deadline: float | None = None  # stop this long after t0 (grabserial -e)
    inline: re.Pattern | None = None  # report when first seen, even mid-line (grabserial -i)
    stop_at_inline: bool = False  # and stop there (waiting for a prompt)
    failure: re.Pattern | None = None  # a line that says the boot failed (kept, reading goes on)


@dataclass
class Result:
    reason: str  # "eof", "quit", "ready", "inline", "silence", "deadline", "interrupted", "lost"
    detail: str = ""
    bytes: int = 0
    lines: int = 0
    ready_line_ns: int | None = None  # host time of the first byte of the line the ready pattern matched
    inline_ns: int | None = None
    inline_line: bytes = b""  # the line (so far) the inline pattern was seen in
    gaps: list[tuple[int, int]] = field(default_factory=list)
    failure: str = ""  # the first whole line the failure pattern matched, from the match on


def run(source: Source, writers: list, t0: int, stop: Stop, reconnect: bool = False, on_data=None) -> Result:
    """Read until a stop condition; every time is ns since t0 (monotonic).  The reader's
    stalls (and those of the threads before it, the source's relays) are capture events."""
    result = Result("eof")
    watch = StallWatch()
    for name, tid in source.relays():
        watch.add_relay(name, tid)
    source.watched(watch)
    line = bytearray()  # the current line, for pattern matching only
    line_start = 0
    last_data = time.monotonic_ns()
    ready_deadline: int | None = None
    try:
        while True:
            now = time.monotonic_ns()
            if stop.deadline is not None and now - t0 > stop.deadline * 1e9:
                result.reason = "deadline"
                break
            if stop.silence is not None and now - last_data > stop.silence * 1e9:
                result.reason, result.detail = "silence", f"nothing for {stop.silence:g} s"
                break
            if ready_deadline is not None and now > ready_deadline:
                result.reason = "ready"
                break
            try:
                data = source.read(0.05)
            except SourceClosed as err:
                result.reason, result.detail = "eof", str(err)
                break
            except SourceLost as err:
                if not reconnect:
                    result.reason, result.detail = "lost", str(err)
                    break
                gap_start = time.monotonic_ns() - t0
                for w in writers:
                    w.event(gap_start, f"disconnected {err}")
                if not _reopen(source, stop, t0):
                    result.reason, result.detail = "lost", str(err)
                    break
                gap_end = time.monotonic_ns() - t0
                result.gaps.append((gap_start, gap_end))
                for w in writers:
                    w.event(gap_end, f"reconnected after {(gap_end - gap_start) / 1e9:.3f} s")
                continue
            if not data:
                continue
            watch.look()
            for at, text in watch.take():
                for w in writers:
                    w.event(at - t0, text)
            t = time.monotonic_ns() - t0
            last_data = t + t0
            pieces = source.arrivals(t0, t, data)
            for w in writers:
                for at, piece in pieces:
                    w.chunk(at, piece)
            if on_data is not None:
                on_data(t, data)
            result.bytes += len(data)
            done = False
            for at, piece in ((at, part) for at, piece in pieces for part in piece.splitlines(keepends=True)):
                if not line:
                    line_start = at  # a line is stamped by its first byte, as in the capture
                line += piece
                text = bytes(line)
                if stop.inline is not None and result.inline_ns is None and stop.inline.search(text):
                    result.inline_ns, result.inline_line = t, text
                    if stop.stop_at_inline:
                        result.reason, done = "inline", True
                if stop.quit is not None and stop.quit.search(text):
                    result.reason, done = "quit", True
                if stop.ready is not None and result.ready_line_ns is None and stop.ready.search(text):
                    result.ready_line_ns = line_start
                    source.unthrottle()  # what follows the end of the boot is not timed
                    if stop.stop_at_ready:
                        result.reason, done = "ready", True
                    elif stop.after_ready is not None:
                        ready_deadline = t0 + t + int(stop.after_ready * 1e9)
                if piece.endswith(b"\n"):
                    said = stop.failure.search(text) if stop.failure is not None and not result.failure else None
                    if said:  # a kernel record's time stamp before it is no part of the reason
                        result.failure = text[said.start():].decode("utf-8", "replace").strip()
                    result.lines += 1
                    line.clear()
            if done:
                break
    except KeyboardInterrupt:
        result.reason = "interrupted"
    finally:
        source.watched(None)
        watch.close()
    return result


def _reopen(source: Source, stop: Stop, t0: int) -> bool:
    while True:
        if stop.deadline is not None and time.monotonic_ns() - t0 > stop.deadline * 1e9:
            return False
        try:
            source.close()
            source.open()
            return True
        except SourceLost:
            time.sleep(0.2)
