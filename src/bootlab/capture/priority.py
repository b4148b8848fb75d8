"""Real-time priority for the threads a console's bytes pass through on the host.

A stamp is taken when the reader wakes up; on a busy host an ordinary process may wait its
turn for a scheduler tick, a SCHED_FIFO one is run at once (the reader sleeps whenever no
byte is waiting, so it uses CPU time only for what the console sends).

An emulated UART needs more: the guest's console driver waits about 10 ms for its
transmitter, then writes over it, so every thread between the guest's UART and the capture
file must run within that time whatever the host's load, or characters are lost.  Those are
the reader and QEMU's main loop (which moves the UART's bytes to its character device once
the channel has room again); QEMU's vCPU threads must not be raised (they never sleep under
TCG).  SCHED_RESET_ON_FORK makes every thread and child of a raised one start ordinary: the
vCPU threads QEMU's main thread creates, the commands the reader runs.
"""

from __future__ import annotations

import contextlib
import os

DEFAULT_PRIORITY = 10


class PriorityRefused(Exception):
    pass


def raise_thread(priority: int, tid: int = 0) -> str:
    """Run a thread (this one by default) at SCHED_FIFO `priority`; the policy as text.
    PriorityRefused when the host does not allow it (no root, no CAP_SYS_NICE)."""
    try:
        os.sched_setscheduler(tid, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(priority))
    except (OSError, ValueError) as err:
        raise PriorityRefused(getattr(err, "strerror", None) or str(err)) from None
    return f"SCHED_FIFO {priority}"


def try_raise(priority: int | None, tid: int = 0) -> str:
    """raise_thread when permitted, else the ordinary policy with the reason; 0 or None
    keeps an ordinary thread."""
    if not priority:
        return "SCHED_OTHER"
    try:
        return raise_thread(priority, tid)
    except PriorityRefused as err:
        return f"SCHED_OTHER (SCHED_FIFO refused: {err})"


@contextlib.contextmanager
def raised(priority: int | None):
    """This thread at SCHED_FIFO for the block (when permitted), its own policy again after;
    yields the policy in force, for the capture's header."""
    before = os.sched_getscheduler(0), os.sched_getparam(0)
    policy = try_raise(priority)
    try:
        yield policy
    finally:
        if policy.startswith("SCHED_FIFO"):
            os.sched_setscheduler(0, before[0], before[1])
