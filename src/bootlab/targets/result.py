"""What one boot of a target came to, whichever kind of target it was (QEMU or a board)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..capture import session
from ..sources import bootlab_capture, firmware, multiboot
from ..sources.kernel_messages import PANIC_WORDS
from ..sources.lines import seconds_to_ns
from ..sources.userspace import DRACUT_EMERGENCY, DROPPING
from .initramfs import STOPPED

# A line that says the boot failed, on any target: a step of the device's init that stopped
# it, the kernel's panic, an initramfs that gave a shell for want of a root (initramfs-tools,
# dracut), systemd's emergency or rescue mode, a debug firmware's failed assertion (EDK2's
# `ASSERT [XhciDxe] ...Xhci.c(1805): ...`, after which it loops or resets).  The capture reads
# on (the kernel's last words, a board rebooting), and the boot is recorded as failed with
# that line as its reason instead of as a timeout or a console that closed.
FAILED_LINE = re.compile(b"|".join([re.escape(words).encode() for words in (STOPPED, PANIC_WORDS, DRACUT_EMERGENCY)]
                                   + [rb"(?:ALERT![^\r\n]*)?" + re.escape(DROPPING).encode(),  # (with the device)
                                      rb"You are in (?:emergency|rescue) mode",
                                      # (at a line's start, or after a terminal's colour reset)
                                      rb"(?:(?<!\w)|(?<=\x1b\[m)|(?<=\x1b\[0m))"
                                      + firmware.ASSERT.pattern.removeprefix("^").encode()]))


def reset_before_ready(capture: bytes, ready_line_ns: int | None) -> str:
    """Why a capture's boot failed if the board was reset before its ready line (or before its
    end, without one): its loader spoke again with the first boot's banner, or after a
    restart's last words; '' if it was not.  A boot that reached ready after a watchdog's reset
    holds two boots' time, which a campaign must not count as one."""
    for at in multiboot.resets(capture):
        end = capture.find(b"\n", at)
        record = bootlab_capture.RECORD.match(capture[at:end if end >= 0 else len(capture)])
        if record is None:
            continue
        t = seconds_to_ns(record.group("t").decode())
        if ready_line_ns is None or t < ready_line_ns:
            said = bootlab_capture.unescape(record.group("payload"))
            loader = multiboot.LOADER.search(said)
            banner = said[loader.start() if loader else 0:].decode("utf-8", "replace").strip()[:80]
            return f"the board was reset before ready: its boot began again at {t / 1e9:.3f} s ({banner})"
    return ""


@dataclass
class BootResult:
    status: str  # "ok", "timeout", "failed", "interrupted" (stopped by the user: not a result)
    reason: str
    capture: str  # path of the capture file
    ready_line_ns: int | None  # when the ready line reached the host (the device was ready earlier)
    wall_ns: int


def declared_hung(result: session.Result) -> bool:
    """Whether the capture gave up on a device that went quiet or ran past its deadline."""
    return result.reason in ("silence", "deadline")


def classify(result: session.Result, deadline: float, ended: str) -> tuple[str, str]:
    """Status and reason of a finished capture session; `ended` says how a console that
    stopped before the ready marker ended."""
    if result.ready_line_ns is not None:
        return "ok", "ready"
    if result.failure:  # the device said why (a step of its init failed)
        return "failed", result.failure
    if declared_hung(result):
        return "timeout", f"killed: {result.reason} ({result.detail or deadline})"
    if result.reason == "interrupted":
        return "interrupted", "interrupted"
    return "failed", ended
