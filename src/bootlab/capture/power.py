"""Power-on as time zero, shared by `bootlab capture`, board targets and QEMU boots: the
console device to open before power is switched, the power command, and the events that
put zero in a capture."""

from __future__ import annotations

import subprocess

from .pty_source import PtySource


def device_source(device: str, baud: int, **serial_options):
    """The console at `device`: a pty when it is /dev/pts/N, else a serial port (pyserial,
    loaded only then)."""
    if device.startswith("/dev/pts/"):
        return PtySource(device)
    from .serial_port import SerialSource

    return SerialSource(device, baud, **serial_options)


def switch(cmd: str, what: str) -> str | None:
    """Run a power (or preparation) command through the shell; why it failed, or None."""
    done = subprocess.run(cmd, shell=True, check=False, capture_output=True, text=True)
    if done.returncode == 0:
        return None
    detail = done.stderr.strip().splitlines()
    return f"{what} command failed with status {done.returncode}: {cmd}" + (f": {detail[-1]}" if detail else "")


def mark_zero(writers, t0: int, powered: bool, issued: int | None = None) -> None:
    """The events at time zero: the host's monotonic clock there (so other host-side records
    can be lined up), power-on when zero is one, and when the power command was issued."""
    for w in writers:
        if issued is not None:
            w.event(issued - t0, "power command started")
        w.event(0, f"zero monotonic_ns={t0}")
        if powered:
            w.event(0, "power-on")
