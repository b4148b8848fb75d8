"""A board in a labgrid environment: its power driver is the power switch, its console
driver the byte stream (labgrid, from PyPI, is the board-farm engine bootlab plugs into).

The environment file names a target (role) with a PowerProtocol driver (ExternalPowerDriver,
a PDU, a USB relay ...) and a ConsoleProtocol driver (SerialDriver on a RawSerialPort,
NetworkSerialPort ...); see docs/labgrid-example.yaml.
"""

from __future__ import annotations

import time

from .source import Source, SourceLost


class LabgridSource(Source):
    def __init__(self, env_file: str, role: str = "main"):
        self.env_file = env_file
        self.role = role
        self.name = f"labgrid:{env_file}:{role}"
        self.target = None
        self.console = None
        self.power = None

    def _bind(self) -> None:
        """The environment's target and its power driver (labgrid activates a driver when
        it is first asked for)."""
        if self.target is not None:
            return
        try:
            from labgrid import Environment
        except ImportError:
            raise SourceLost("labgrid is not installed: pip install 'bootlab[labgrid]'") from None
        try:
            env = Environment(config_file=self.env_file)
            self.target = env.get_target(self.role)
            if self.target is None:
                raise SourceLost(f"{self.env_file}: no target {self.role!r}")
            self.power = self.target.get_driver("PowerProtocol")
        except SourceLost:
            raise
        except Exception as err:  # labgrid raises many kinds: configuration, binding, activation
            raise SourceLost(f"{self.env_file}: {err}") from None

    def open(self) -> None:
        self._bind()
        try:
            self.console = self.target.get_driver("ConsoleProtocol")
        except Exception as err:
            raise SourceLost(f"{self.env_file}: {err}") from None

    # The same object is the boot's power switch (targets/protocols.py): labgrid's power
    # driver, reached once the environment is open.

    powered = True

    def on(self) -> int:
        """Apply power through the target's power driver; returns the instant (t = 0)."""
        try:
            self.power.on()
        except Exception as err:
            raise SourceLost(f"{self.env_file}: power: {err}") from None
        return time.monotonic_ns()

    def off(self) -> None:
        self._bind()
        try:
            self.power.off()
        except Exception as err:
            raise SourceLost(f"{self.env_file}: power: {err}") from None

    def read(self, timeout: float) -> bytes:
        try:
            return self.console.read(size=1, timeout=timeout, max_size=4096)
        except Exception as err:
            if type(err).__name__ == "TIMEOUT":
                return b""
            raise SourceLost(f"{self.name}: {err}") from None

    def uboot(self):
        """The environment's UBootDriver (bound to this console; labgrid_uboot.py)."""
        self._bind()
        try:
            return self.target.get_driver("UBootDriver", activate=False)
        except Exception as err:
            raise SourceLost(f"{self.env_file}: {err}") from None

    def strategy(self):
        """The environment's strategy (labgrid_strategy.py), the target's only one."""
        self._bind()
        try:
            return self.target.get_strategy()
        except Exception as err:
            raise SourceLost(f"{self.env_file}: {err}") from None

    def write(self, data: bytes) -> None:
        try:
            self.console.write(data)
        except Exception as err:
            raise OSError(5, f"{self.name}: {err}") from None

    def close(self) -> None:
        if self.target is not None:
            try:
                self.target.deactivate_all_drivers()
            except Exception:
                pass
            self.target = None

    def describe(self) -> dict:
        return {"source": "labgrid", "env": self.env_file, "role": self.role}
