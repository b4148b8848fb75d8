"""A child process's output (how QEMU is watched): launching it is power-on, so the same
object is a console (read, and typed on through the child's stdin when `typed`) and a
power switch (`on` launches, `off` terminates).

stdout and stderr are merged unless stderr goes to a file.  With `small_buffer` the
child's stdout is a Unix socket with the smallest send buffer instead of a pipe: when the
host drains it slowly (see pacing.py) the child waits on its writes a few bytes at a time,
as a guest waits on a slow UART.

The child runs in its own session (a Ctrl-C meant for bootlab does not reach it: bootlab
records the boot as interrupted, then powers off) and dies with bootlab: a bootlab killed
outright (kill -9, the OOM killer) cannot power off, and a QEMU left behind would run, and
load the host, for ever.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import subprocess
import time

from . import priority
from .source import FdSource, SourceClosed, SourceLost


def dies_with_us(argv: list[str]) -> list[str]:
    """argv run so that the kernel kills it when this thread ends: PR_SET_PDEATHSIG, set by
    util-linux's setpriv, which then execs a shell that execs argv (the pid stays the
    child's).  A thread, not the process: launch from the thread that outlives the child.
    Should bootlab die before setpriv set the signal, the shell finds another parent than
    bootlab and exits instead of starting argv.  A program that is not there is reported as
    Popen would (FileNotFoundError), not as an exit status."""
    if shutil.which(argv[0]) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    return ["setpriv", "--pdeathsig", "KILL", "--", "sh", "-c", '[ "$PPID" = "$0" ] && exec "$@"', str(os.getpid()),
            *argv]


class ProcessSource(FdSource):
    """`main_priority`: run the child's main thread (not the threads it starts) at this
    SCHED_FIFO priority: QEMU's main loop, which moves an emulated UART's bytes out."""

    def __init__(self, argv: list[str], small_buffer: bool = False, stderr_path: str | None = None,
                 env: dict | None = None, main_priority: int | None = None, typed: bool = False):
        self.argv = argv
        self.typed = typed
        self.small_buffer = small_buffer
        self.stderr_path = stderr_path
        self.env = env
        self.main_priority = main_priority
        self.main_policy = "SCHED_OTHER"
        self.proc: subprocess.Popen | None = None
        self.started_ns: int | None = None
        self.name = f"exec:{argv[0]}"

    powered = True

    def open(self) -> None:
        """A process's console exists once it runs: on() launches it."""

    def on(self) -> int:
        """Power-on: launch the child; the instant it was launched."""
        if self.small_buffer:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            theirs.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1)  # the kernel's minimum
            read_end, write_end = ours.detach(), theirs.detach()
        else:
            read_end, write_end = os.pipe()
        stderr = open(self.stderr_path, "wb") if self.stderr_path else subprocess.STDOUT
        try:
            self.started_ns = time.monotonic_ns()
            self.proc = subprocess.Popen(dies_with_us(self.argv), stdin=subprocess.PIPE if self.typed else subprocess.DEVNULL,
                                         stdout=write_end, stderr=stderr, env=self.env, start_new_session=True)
        except OSError as err:
            os.close(read_end)
            raise SourceLost(f"cannot start {self.argv[0]}: {err.strerror}") from None
        finally:
            os.close(write_end)
            if self.stderr_path:
                stderr.close()
        self.main_policy = priority.try_raise(self.main_priority, self.proc.pid)
        os.set_blocking(read_end, False)
        if self.typed:
            os.set_blocking(self.proc.stdin.fileno(), False)
        self.fd = read_end
        return self.started_ns

    def off(self) -> None:
        self.stop()

    def _write_fd(self) -> int | None:
        return self.proc.stdin.fileno() if self.typed and self.proc is not None else None

    def read(self, timeout: float, limit: int | None = None) -> bytes:
        try:
            return super().read(timeout, limit)
        except SourceClosed:
            code = self.proc.wait() if self.proc else None
            raise SourceClosed(f"{self.argv[0]} exited with status {code}") from None

    def stop(self, grace: float = 2.0) -> None:
        """Power off: terminate the child (and its process group), kill it if it lingers."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                pass

    def close(self) -> None:
        self.stop()
        if self.typed and self.proc is not None:
            self.proc.stdin.close()
        super().close()

    def relays(self) -> list[tuple[str, int]]:
        if self.proc is None or self.main_priority is None:
            return []
        return [(f"{os.path.basename(self.argv[0])}'s main thread", self.proc.pid)]

    def describe(self) -> dict:
        return {"source": "exec", "argv": self.argv,
                **({"child_scheduling": self.main_policy} if self.main_priority else {})}
