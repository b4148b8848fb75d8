"""Power and U-Boot's prompt through the labgrid environment's own strategy, for a board
whose target has one (`[labgrid] strategy = "uboot"`, the strategy's state at U-Boot's
prompt; labgrid's UBootStrategy calls it that): one `transition()` switches the board off,
opens its console, cycles its power and activates its UBootDriver, which stops autoboot.
bootlab then sets the environment and boots through that UBootDriver (labgrid_uboot.py)
and reads the kernel's console as for any board (strategy.py).

Time zero is when labgrid's power driver finished switching on inside the transition: the
end of its `on` step, or of its `cycle` for a driver that cycles with one command, from
labgrid's step events (labgrid.step.steps), on the host's monotonic clock as every other
zero.  What labgrid read from the console during the transition is kept with the host's
time of each read (link.Early) and written into the capture once zero is known, so the
firmware's and U-Boot's first lines keep the instants they arrived; a transition that fails
after power came on is a failed run from that zero with the console it read.
"""

from __future__ import annotations

from ..capture.labgrid_console import LabgridSource
from ..capture.source import SourceLost
from .labgrid_uboot import Recorded, labgrid_error
from .link import Early
from .protocols import StepFailed

OFF = "off"  # the state every labgrid strategy that powers a board has


class PowerSteps:
    """Listens to labgrid's step events for the end of the power driver's switching on."""

    def __init__(self, power):
        self.power = power
        self.on_ns: int | None = None  # its `on` step ended
        self.cycle_ns: int | None = None  # its `cycle` step ended

    def __call__(self, event) -> None:
        step = event.step
        if step.source is not self.power or event.data.get("state") != "stop" or "exception" in event.data:
            return
        ns = int(event.ts * 1e9)
        if step.title == "on" and self.on_ns is None:
            self.on_ns = ns
        elif step.title == "cycle":
            self.cycle_ns = ns

    @property
    def zero(self) -> int | None:
        return self.on_ns if self.on_ns is not None else self.cycle_ns


class LabgridStrategy:
    """The power part (protocols.PowerProtocol) of a board whose labgrid strategy powers it."""

    powered = True

    def __init__(self, board: LabgridSource, state: str):
        self.board = board
        self.state = state
        self.early = Early()

    def off(self) -> None:
        try:
            self.board.strategy().transition(OFF)
        except SourceLost:
            raise
        except Exception as err:
            raise SourceLost(f"{self.board.env_file}: strategy: {labgrid_error(err)}") from None

    def on(self) -> int:
        from labgrid.step import steps  # labgrid is there: the strategy was found (self.board)

        strategy = self.board.strategy()
        console = self.board.uboot().console
        power = PowerSteps(self.board.power)
        self.early.mark(f"labgrid {type(strategy).__name__}: transition to {self.state!r}")
        steps.subscribe(power)
        console._expect.driver = Recorded(console, self.early)  # as labgrid_uboot.py reads it
        try:
            strategy.transition(self.state)
        except KeyboardInterrupt:
            raise
        except Exception as err:  # labgrid's TIMEOUT, StrategyError, a power command's failure
            if power.zero is None:
                raise SourceLost(f"{self.board.env_file}: strategy: {labgrid_error(err)}") from None
            raise StepFailed("bootloader: stop autoboot", f"labgrid {type(strategy).__name__}: "
                             f"{labgrid_error(err)}", t0=power.zero) from None
        finally:
            console._expect.driver = console
            steps.unsubscribe(power)
        if power.zero is None:
            raise SourceLost(f"{self.board.env_file}: the strategy's transition to {self.state!r} did not switch "
                             "the power driver on (no `on` or `cycle` step of it)")
        return power.zero
