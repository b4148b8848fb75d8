"""U-Boot through labgrid's own UBootDriver, for a board in a labgrid environment whose
target has one (`[bootloader] driver = "labgrid"`): labgrid stops autoboot and reaches the
prompt as the environment configures it (its prompt, autoboot, interrupt, password and
init_commands), runs each `setenv` of [bootloader] env (bootargs with its append) and
checks its exit status, and sends the boot command; then bootlab's sequence reads the
kernel's console as for any board.

labgrid reads the console itself meanwhile (pexpect over the console driver), so what it
reads is handed to the capture as it arrives, stamped on the boot's clock like every other
byte: nothing U-Boot prints is missing from the capture.  What labgrid types through pexpect
is marked there as an event (the key that interrupts autoboot is written past it,
unmarked).  Power is the environment's power driver switched by bootlab, or, with
`[labgrid] strategy`, its strategy's transition, which also stops autoboot
(labgrid_strategy.py).
"""

from __future__ import annotations

from ..capture.labgrid_console import LabgridSource
from ..capture.source import SourceLost
from .link import Early, Link
from .protocols import StepFailed
from .uboot import HANDOVER, Recorder, UBoot, quoted


class Recorded:
    """The console as labgrid's pexpect sees it: what it reads goes to the boot's writers as
    it arrives, what it sends is marked there, as bootlab's own driver marks what it types
    (`link`: a Link, or a link.Early before time zero is known)."""

    def __init__(self, console, link: Link | Early):
        self.console = console
        self.link = link

    def read(self, size=1, timeout=0.0, max_size=None) -> bytes:
        data = self.console.read(size=size, timeout=timeout, max_size=max_size)
        if data:
            self.link.record(data)
        return data

    def write(self, data: bytes):
        self.link.mark(f"sent {data.decode(errors='replace')!r}")
        return self.console.write(data)


def labgrid_error(err: Exception) -> str:
    """One line for an error of labgrid's (pexpect adds its buffer's dump to a timeout's)."""
    return f"{type(err).__name__}: {(str(err).strip() or 'no detail').splitlines()[0]}"


class LabgridUBoot:
    """`stopped`: the environment's strategy already stopped autoboot (labgrid_strategy.py)."""

    def __init__(self, board: LabgridSource, loader: UBoot, stopped: bool = False):
        self.board = board
        self.loader = loader
        self.stopped = stopped

    def run(self, link: Link) -> None:
        driver = self.board.uboot()
        console = driver.console
        # labgrid's drivers read and write the console through its pexpect spawn
        # (ConsoleExpectMixin._expect, PtxExpect.driver).
        console._expect.driver = Recorded(console, link)
        try:
            if not self.stopped:
                self._step(link, "bootloader: stop autoboot", "labgrid UBootDriver: stop autoboot",
                           lambda: self.board.target.activate(driver))
            for name, value in self.loader.variables().items():
                command = f"setenv {name} {quoted(value)}"
                self._step(link, f"bootloader: setenv {name}", f"labgrid UBootDriver: {command}",
                           lambda c=command: driver.run_check(c, timeout=int(self.loader.timeout)))
            if self.loader.boot_command:
                driver.boot_command = self.loader.boot_command
            # labgrid waits for the kernel's banner by default, which a quiet kernel does
            # not print on the console: where the environment keeps that default, it waits
            # for U-Boot's handover, as bootlab's own driver does.
            if driver.bootstring == type(driver).__attrs_attrs__.bootstring.default:  # (an attrs class)
                driver.bootstring = HANDOVER.decode()
            self._boot(link, driver)
        finally:
            console._expect.driver = console

    def _boot(self, link: Link, driver) -> None:
        """The boot command, and labgrid's wait for the kernel's banner; when it does not
        come, what U-Boot said against the command (a missing file, a bad image)."""
        seen = Recorder(link)
        try:
            self._step(link, "bootloader: boot", f"labgrid UBootDriver: {driver.boot_command}", driver.boot)
            self._step(link, "bootloader: boot", "labgrid UBootDriver: await the kernel", driver.await_boot,
                       f"no {driver.bootstring!r} within boot_timeout ({driver.boot_timeout} s)")
        except StepFailed:
            refused = seen.refusal()
            if refused is None:
                raise
            raise StepFailed("bootloader: boot", f"`{driver.boot_command}` did not start a kernel: {refused}") from None
        seen.detach()

    def _step(self, link: Link, step: str, event: str, action, timed_out: str = "") -> None:
        """One of labgrid's steps, marked in the capture; any error of labgrid's (a timeout,
        a command's exit status) fails the boot at `step`; `timed_out` says what a timeout
        means (pexpect's own message is its spawn object and buffer)."""
        link.mark(event)
        try:
            action()
        except KeyboardInterrupt:
            raise
        except SourceLost as err:
            raise StepFailed(step, str(err)) from None
        except Exception as err:  # labgrid's TIMEOUT, ExecutionError, binding errors
            if type(err).__name__ == "TIMEOUT" and timed_out:
                raise StepFailed(step, f"TIMEOUT: {timed_out}") from None
            raise StepFailed(step, labgrid_error(err)) from None
