"""Which Kconfig options put an initcall in the kernel: the first step of trimming a
configuration from what a boot showed (no source is changed, only options).

An initcall_debug boot names each built-in initcall by its function.  The function is
found where it is defined in Debian's source (`static int __init NAME(void)`, or a driver
registered by `module_platform_driver(NAME)` and its kin, whose init function is
NAME_init), its object file is followed up the Makefiles to the options that build it
(kernel_build.enabled_by), and a name defined in several files is told apart by the kernel's
own configuration: only one of them is built.  The innermost option is the one to turn off.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .kernel_build import enabled_by, kconfig_types

# Macros that define a driver's init function NAME_init from NAME (include/linux/*.h).
_REGISTERED = r"(?:module|builtin)_[a-z0-9_]*driver"


@dataclass(frozen=True)
class Origin:
    """Where an initcall comes from: its source file and the options that build it
    (outermost first; the last one is the option that turns it off)."""

    function: str
    file: str  # relative to the source tree
    options: tuple[str, ...]

    @property
    def option(self) -> str | None:
        return self.options[-1] if self.options else None


def _grep(tree: Path, pattern: str) -> list[tuple[str, str]]:
    """(file relative to tree, line) for each line of a .c file matching an extended regex."""
    done = subprocess.run(["grep", "-rhoE", "--include=*.c", "-H", pattern, "."], cwd=tree, capture_output=True,
                          text=True, errors="replace")
    out = []
    for line in done.stdout.splitlines():
        file, _, text = line.partition(":")
        out.append((file.removeprefix("./"), text))
    return out


def origins(tree: Path, functions: list[str], config: dict[str, str]) -> dict[str, Origin]:
    """The origin of each initcall function that can be found in the source and is built by
    `config` (a kernel .config read by kernel_build.read_config); the others are left out."""
    wanted = sorted(set(functions))
    if not wanted:
        return {}
    names = "|".join(re.escape(f) for f in wanted)
    defined: dict[str, list[str]] = {}
    for file, text in _grep(tree, rf"^(static\s+)?(__init\s+)?(int|void)\s+(__init\s+)?({names})\s*\(void\)"):
        name = re.search(rf"({names})\s*\(", text).group(1)
        defined.setdefault(name, []).append(file)
    registered = [f.removesuffix("_init") for f in wanted if f.endswith("_init")]
    if registered:
        stems = "|".join(re.escape(s) for s in registered)
        for file, text in _grep(tree, rf"^{_REGISTERED}\(\s*({stems})\s*[,)]"):
            stem = re.search(rf"\(\s*({stems})\s*[,)]", text).group(1)
            defined.setdefault(f"{stem}_init", []).append(file)
    out: dict[str, Origin] = {}
    for name, files in defined.items():
        built = []
        for file in dict.fromkeys(files):
            options = tuple(enabled_by(tree, str(Path(file).with_suffix(".o"))))
            if all(config.get(f"CONFIG_{o}") == "y" for o in options):  # an initcall of the image
                built.append(Origin(name, file, options))
        if len(built) == 1:  # a name defined in several built files cannot be told apart
            out[name] = built[0]
    return out


def modular(tree: Path, found: list[Origin]) -> list[Origin]:
    """Those of `found` whose option could be a module (tristate): a driver.  A bool behind
    an idle registration is a bus or a subsystem's core (pci_driver_init), not a driver."""
    types = kconfig_types(tree, [o.option for o in found if o.option])
    return [o for o in found if o.option and types.get(o.option) == "tristate"]
