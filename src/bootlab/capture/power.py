"""Power-on as time zero, for the boot sequence (targets/strategy.py): the console device
to open before power is switched, and the events that put zero in a capture."""

from __future__ import annotations

from .pty_source import PtySource


def device_source(device: str, baud: int, **serial_options):
    """The console at `device`: a pty when it is /dev/pts/N, else a serial port (pyserial,
    loaded only then)."""
    if device.startswith("/dev/pts/"):
        return PtySource(device)
    from .serial_port import SerialSource

    return SerialSource(device, baud, **serial_options)


def mark_zero(writers, t0: int, powered: bool, issued: int | None = None) -> None:
    """The events at time zero: the host's monotonic clock there (so other host-side records
    can be lined up), power-on when zero is one, and when the power command was issued."""
    for w in writers:
        if issued is not None:
            w.event(issued - t0, "power command started")
        w.event(0, f"zero monotonic_ns={t0}")
        if powered:
            w.event(0, "power-on")
