"""Power switched by shell commands (a relay, a PDU's CLI, `uhubctl`, ...): time zero is
the moment the power-on (or power-cycle) command returns."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass

from .protocols import StepFailed


def run_command(cmd: str, step: str) -> None:
    """Run a command through the shell; StepFailed naming `step` when it fails."""
    done = subprocess.run(cmd, shell=True, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()
        raise StepFailed(step, f"command failed with status {done.returncode}: {cmd}"
                               + (f": {detail[-1]}" if detail else ""))


@dataclass
class ShellPower:
    on_command: str  # power-on, or power-cycle (which then needs no off_command)
    off_command: str = ""
    cycles: bool = False  # on_command cycles power: it is the step "power-cycle"
    powered = True
    issued_ns: int | None = None  # when the last power command was started (a capture event)

    def on(self) -> int:
        self.issued_ns = time.monotonic_ns()
        run_command(self.on_command, "power-cycle" if self.cycles else "power-on")
        return time.monotonic_ns()

    def off(self) -> None:
        if self.off_command:
            run_command(self.off_command, "power-off")
