"""U-Boot over any console (a board's serial port, QEMU's stdio, labgrid's console): stop
autoboot, set the environment, run the boot command, and let the kernel's console follow.

    [bootloader]
    kind = "u-boot"
    stop_autoboot = true      # press a key at "Hit any key to stop autoboot"
    env = {}                  # `setenv NAME VALUE` for each, in order, at the prompt
    append = ""               # kernel arguments added to env.bootargs (what variants and the
                              # optimizer add): bootargs is then typed with them
    boot_command = "boot"     # typed last ("qfw load; zboot", "tftpboot ...; booti ...")
    prompt = "=> "
    timeout = 30              # seconds each step may take
    saved_env = {}            # the environment in the board's storage at power-on
    driver = "bootlab"        # who talks to U-Boot: bootlab (below), or labgrid's UBootDriver
                              # of a [labgrid] environment (labgrid_uboot.py)

With stop_autoboot = false nothing is typed: U-Boot runs its own bootcmd, as the board
ships.  What it then finds is the kind's business: the ARM64 board writes `saved_env` into
its flash before power-on (over U-Boot's default environment; empty: nothing saved, the
default holds) and puts `boot_command` in the boot script its distro boot loads
(arm64_board.py).  Kinds that cannot write a board's storage refuse `saved_env`.
`bootargs` is the kernel's command line U-Boot passes on (booti, bootm, bootz): given in
env, it is a command line bootlab sets, and `append` adds to it, as a reference device's
[target] append adds to its cmdline.  A boot command that sets bootargs itself (a distro
boot's extlinux.conf or boot script) overrides both.
Each step is a step of the boot sequence: a prompt that never comes, a variable U-Boot
rejects or a boot command that fails makes the run fail naming it; so does U-Boot's own
boot command coming back to the prompt without starting a kernel (stop_autoboot = false),
and a boot that reaches its deadline before the kernel starts names U-Boot's last line.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from ..sources import uboot as uboot_console
from .description import TargetError, section
from .link import Link
from .protocols import StepFailed

# The handover: what U-Boot prints as it jumps to the kernel (bootm, booti, zboot), or the
# kernel's first line where nothing is printed.
HANDOVER = rb"Starting kernel \.\.\.|Linux version "
AUTOBOOT = re.compile(rb"Hit any key to stop autoboot|Press SPACE to abort autoboot|autoboot in \d+ seconds")
REFUSED = re.compile(uboot_console.COMMAND_FAILED.encode())
KINDS = ("u-boot",)
DRIVERS = ("bootlab", "labgrid")


@dataclass
class UBoot:
    kind: str = "u-boot"
    stop_autoboot: bool = True
    env: dict[str, str] = field(default_factory=dict)
    append: str = ""
    boot_command: str = "boot"
    prompt: str = "=> "
    timeout: float = 30.0
    saved_env: dict[str, str] = field(default_factory=dict)
    driver: str = "bootlab"

    def to_dict(self) -> dict:
        return asdict(self)

    def validate(self, where=lambda *path: "") -> None:
        checks = [
            (self.kind in KINDS, "kind", f"kind must be one of {', '.join(KINDS)}"),
            (self.timeout > 0, "timeout", "timeout must be positive"),
            (self.driver in DRIVERS, "driver", f"driver must be one of {', '.join(DRIVERS)}"),
            (self.driver != "labgrid" or self.stop_autoboot, "stop_autoboot",
             "labgrid's UBootDriver always stops autoboot: stop_autoboot = false needs driver = \"bootlab\""),
            (bool(self.prompt), "prompt", "the prompt is required (U-Boot's is \"=> \")"),
            (self.stop_autoboot or not self.env, "stop_autoboot",
             "env is typed at the prompt: with stop_autoboot = false it must be empty (U-Boot then boots "
             "with the environment it has: saved_env)"),
            (not self.append or "bootargs" in self.env, "append",
             "append adds kernel arguments to env.bootargs, the command line bootlab sets at the prompt: give "
             "env.bootargs (the board's command line)"),
        ] + [check for table in ("env", "saved_env") for check in _variables(getattr(self, table), table)]
        for ok, key, message in checks:
            if not ok:
                raise TargetError(f"{where('bootloader', key)}bootloader.{key}: {message}")

    def variables(self) -> dict[str, str]:
        """What is set at the prompt: env, with `append` added to bootargs."""
        if not self.append:
            return dict(self.env)
        return {**self.env, "bootargs": self.cmdline()}

    def cmdline(self) -> str:
        """The kernel's command line bootlab sets (bootargs and append); empty when it sets none."""
        return " ".join(p for p in (self.env.get("bootargs", ""), self.append) if p).strip()

    def run(self, link: Link) -> None:
        if not self.stop_autoboot:  # its own boot command: it must start a kernel as well
            self._handover(link, Recorder(link, echoed=False), "its own boot command")
            return
        link.expect(AUTOBOOT, self.timeout, "bootloader: reach autoboot", "U-Boot's autoboot countdown")
        link.send(" ")  # any key; a space is harmless if the countdown has already stopped
        link.expect(self.prompt, self.timeout, "bootloader: stop autoboot", f"the prompt {self.prompt!r}")
        for name, value in self.variables().items():
            self._command(link, f"setenv {name} {quoted(value)}", f"bootloader: setenv {name}")
        if self.boot_command:
            self._boot(link)

    def _boot(self, link: Link) -> None:
        """Type the boot command; the prompt coming back before the handover means it failed
        (a missing file, a bad image).  Loading may take long (TFTP): the boot's own
        silence and deadline bound it."""
        seen = Recorder(link)
        link.send(self.boot_command + "\r")
        self._handover(link, seen, f"`{self.boot_command}`")

    def _handover(self, link: Link, seen: Recorder, command: str) -> None:
        """Wait for the kernel's start; U-Boot's prompt coming back first means the boot
        command failed, and a wait the boot's deadline ends names U-Boot's last line (a
        network boot retrying for ever: `Retry time exceeded; starting again`)."""
        outcome = re.compile(b"(?P<handover>" + HANDOVER + b")|(?P<prompt>^" + re.escape(self.prompt.encode()) + b")")
        try:
            match = link.expect(outcome, float("inf"), "bootloader: boot", "the handover to the kernel")
        except StepFailed as failed:
            last = seen.last_line()
            raise StepFailed(failed.step, f"{failed.detail} (U-Boot's last line: {last!r})" if last
                             else failed.detail) from None
        if match.group("prompt"):
            raise StepFailed("bootloader: boot", f"{command} did not start a kernel: "
                                                 f"{seen.refusal() or 'U-Boot returned to its prompt'}")
        seen.detach()

    def _command(self, link: Link, command: str, step: str) -> None:
        """Type a command, wait for the next prompt, and fail the step if U-Boot refused it."""
        seen = Recorder(link)
        link.send(command + "\r")
        link.expect(self.prompt, self.timeout, step, f"the prompt {self.prompt!r}")
        refused = seen.refusal()
        if refused:
            raise StepFailed(step, f"U-Boot refused `{command}`: {refused}")
        seen.detach()


def _variables(env: dict, table: str) -> list[tuple[bool, str, str]]:
    return [(all(re.fullmatch(r"[A-Za-z0-9_.]+", k) for k in env), table, "variable names are letters, digits, _ and ."),
            (all(isinstance(v, str) for v in env.values()), table,
             "values are strings, as U-Boot keeps them (bootdelay = \"0\")")]


def refuse_saved_env(loader: UBoot | None, why: str, where=lambda *path: "") -> None:
    """For kinds that cannot write the board's storage before power-on."""
    if loader is not None and loader.saved_env:
        raise TargetError(f"{where('bootloader', 'saved_env')}bootloader.saved_env: {why}")


def quoted(value: str) -> str:
    """A value as U-Boot's hush shell reads it: quoted when it has spaces or ';'; in single
    quotes when it names variables (a command kept for later, `tftpboot ${kernel_addr_r}
    ...`: double quotes would expand them as it is set)."""
    if value and re.fullmatch(r"[^\s;\"'$]+", value):
        return value
    if "$" in value and "'" not in value:
        return f"'{value}'"
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Recorder:
    """What the console prints between a command and the next prompt (to spot an error)."""

    def __init__(self, link: Link, echoed: bool = True):
        self.link = link
        self.data = bytearray()
        self.echoed = echoed  # its first line is the command typed, echoed
        link.writers.append(self)

    def chunk(self, t: int, data: bytes) -> None:
        self.data += data

    def event(self, t: int, text: str) -> None:
        pass

    def text(self) -> bytes:
        """What U-Boot printed (after echoing the command)."""
        return bytes(self.data[self.data.find(b"\n") + 1:] if self.echoed else self.data)

    def last_line(self) -> str:
        """The last line U-Boot printed with anything in it."""
        lines = [line.strip() for line in self.text().splitlines() if line.strip()]
        return lines[-1].decode(errors="replace") if lines else ""

    def refusal(self) -> str | None:
        """The line in which U-Boot said it refused or failed a command (REFUSED), if any."""
        refused = REFUSED.search(self.text())
        if refused is None:
            return None
        line = next(line for line in self.text().splitlines() if refused.group() in line)
        return line.decode(errors="replace").strip()

    def detach(self) -> None:
        self.link.writers.remove(self)


def from_dict(data: dict, where=lambda *path: "", drivers: tuple[str, ...] = ("bootlab",)) -> UBoot:
    """The [bootloader] table, for a kind that offers `drivers`; errors name the key and line."""
    loader = section(UBoot, data, "bootloader", where)
    loader.validate(where)
    if loader.driver not in drivers:
        raise TargetError(f"{where('bootloader', 'driver')}bootloader.driver: labgrid's UBootDriver is reached "
                          "through a labgrid environment: a [labgrid] description")
    return loader
