"""A serial port through pyserial: speed, parity, stop bits, flow control."""

from __future__ import annotations

import serial

from .source import FdSource, SourceLost, byte_time_ns

PARITIES = {"none": serial.PARITY_NONE, "even": serial.PARITY_EVEN, "odd": serial.PARITY_ODD,
            "mark": serial.PARITY_MARK, "space": serial.PARITY_SPACE}


class SerialSource(FdSource):
    eof_is_loss = True

    def __init__(self, device: str, baud: int = 115200, parity: str = "none", bytesize: int = 8,
                 stopbits: float = 1, xonxoff: bool = False, rtscts: bool = False):
        self.device = device
        self.settings = dict(baudrate=baud, parity=PARITIES[parity], bytesize=bytesize, stopbits=stopbits,
                             xonxoff=xonxoff, rtscts=rtscts)
        self.name = f"serial:{device}"
        self.byte_ns = byte_time_ns(baud, bytesize, parity, stopbits)
        self.port: serial.Serial | None = None

    def open(self) -> None:
        try:
            self.port = serial.Serial(self.device, timeout=0, exclusive=True, **self.settings)
        except (serial.SerialException, OSError, ValueError) as err:
            raise SourceLost(f"cannot open {self.device}: {err}") from None
        self.fd = self.port.fileno()

    def close(self) -> None:
        if self.port is not None:
            try:
                self.port.close()
            except (serial.SerialException, OSError):
                pass
            self.port = None
        self.fd = None

    def describe(self) -> dict:
        return {"source": "serial", "device": self.device, **{k: str(v) for k, v in self.settings.items()}}
