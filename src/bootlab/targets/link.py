"""The console during a boot, for whoever must talk to the device before it boots (the
bootloader): what it reads goes into the capture like everything else, what it types is
marked there as an event, and every wait is bounded."""

from __future__ import annotations

import re
import time

from ..capture import session
from .protocols import ConsoleProtocol, StepFailed


class Link:
    def __init__(self, console: ConsoleProtocol, writers: list, t0: int, stop: session.Stop):
        self.console = console
        self.writers = writers
        self.t0 = t0
        self.stop = stop  # the boot's silence and deadline bound every wait too

    def expect(self, pattern: bytes | str | re.Pattern, timeout: float, step: str, what: str = "") -> re.Match:
        """Read (into the capture) until `pattern` is seen, even mid-line (a prompt ends
        without a newline); the match, in its line.  StepFailed naming `step` when it is not
        seen in `timeout` seconds, or the console goes silent or ends first (`what` names
        what was awaited in that message; the pattern by default)."""
        if isinstance(pattern, str):
            pattern = pattern.encode()
        if isinstance(pattern, bytes):
            pattern = re.compile(re.escape(pattern))
        elapsed = (time.monotonic_ns() - self.t0) / 1e9
        deadline = elapsed + timeout
        if self.stop.deadline is not None:
            deadline = min(deadline, self.stop.deadline)
        result = session.run(self.console, self.writers, self.t0,
                             session.Stop(inline=pattern, stop_at_inline=True, silence=self.stop.silence,
                                          deadline=deadline))
        if result.reason == "interrupted":
            raise KeyboardInterrupt
        if result.inline_ns is None:
            why = {"deadline": f"not seen in {deadline - elapsed:.1f} s", "silence": result.detail}.get(
                result.reason, f"console {result.reason} {result.detail}".strip())
            raise StepFailed(step, f"waiting for {what or repr(pattern.pattern.decode(errors='replace'))}: {why}")
        return pattern.search(result.inline_line)

    def mark(self, text: str) -> None:
        """An event in the capture, now: what was done to the device, and when."""
        t = time.monotonic_ns() - self.t0
        for w in self.writers:
            w.event(t, text)

    def record(self, data: bytes) -> None:
        """Console bytes someone else read (labgrid's driver), into the capture as they arrive."""
        t = time.monotonic_ns() - self.t0
        for w in self.writers:
            w.chunk(t, data)

    def send(self, text: str) -> None:
        """Type `text` on the console (an event in the capture says what and when)."""
        self.mark(f"sent {text!r}")
        try:
            self.console.write(text.encode())
        except OSError as err:
            raise StepFailed("console", f"cannot write to {self.console.name}: {err.strerror}") from None


class Early:
    """What someone else read from the console and typed on it before time zero was known
    (a labgrid strategy powers the board on and stops its bootloader in one transition):
    kept with the host's clock, written into the capture once time zero is (replay).  It
    stands in for a Link while it keeps: record and mark, as Link has them."""

    def __init__(self):
        self.kept: list[tuple[int, bytes | str]] = []

    def record(self, data: bytes) -> None:
        self.kept.append((time.monotonic_ns(), data))

    def mark(self, text: str) -> None:
        self.kept.append((time.monotonic_ns(), text))

    def replay(self, writers: list, t0: int) -> None:
        """Into the capture, on its clock; what came before time zero (a board's last words
        as power went off) at zero, so nothing read is lost."""
        for t, item in self.kept:
            for w in writers:
                (w.chunk if isinstance(item, bytes) else w.event)(max(0, t - t0), item)
        self.kept.clear()
