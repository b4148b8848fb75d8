"""Advice: rules that find evidence in a boot's timeline and propose a change.

Each family of rules is one module in this package (firmware, bootloader, kernel image,
kernel command line, kernel configuration, drivers and initcalls, filesystems, init and
services, application).  A rule is a function `rule(ctx) -> Finding | None` registered
with `@rule(family)`; `advise()` runs them all.

A Finding cites the lines it rests on, estimates what the change saves, says how to apply
it and whether it is non-intrusive (no kernel or bootloader source change).  When the
change can be tried on the reference device, `patch` is a partial target description
(the TOML sections of targets/reference.py) that the optimizer merges into a variant.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable

from ..analysis import Analysis
from ..timeline import Boot


@dataclass
class Finding:
    rule: str  # short id, e.g. "cmdline.quiet"
    family: str  # the module's family name, e.g. "kernel command line"
    title: str  # one line: what to change
    evidence: list[str]  # "file:line: text" lines (or a derived fact) the advice rests on
    saving_ns: int | None  # estimated saving; None when it cannot be estimated
    how: str  # how to apply the change
    non_intrusive: bool  # True: no source change to the kernel or bootloader
    patch: dict | None = None  # partial target description for the reference device
    confidence: str = "medium"  # "high" (measured), "medium" (estimated), "low" (rule of thumb)
    notes: list[str] = field(default_factory=list)
    blocking: bool = False  # the boot fails: this comes before every saving, which assumes a boot that works


@dataclass
class Context:
    """What a rule sees: the boot, its analysis, and the reference-device target (if the
    boot is a recorded run of one)."""

    boot: Boot
    analysis: Analysis
    target: dict | None = None


Rule = Callable[[Context], "Finding | list[Finding] | None"]
RULES: list[tuple[str, Rule]] = []


def rule(family: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        RULES.append((family, fn))
        return fn

    return register


def _load_rules() -> None:
    """Import every module of this package: importing a family registers its rules."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


def advise(boot: Boot, analysis: Analysis, target: dict | None = None) -> list[Finding]:
    """Every finding, largest estimated saving first (what makes the boot fail before all)."""
    _load_rules()
    ctx = Context(boot, analysis, target)
    found: list[Finding] = []
    for _family, fn in RULES:
        result = fn(ctx)
        if result is None:
            continue
        found.extend(result if isinstance(result, list) else [result])
    found.sort(key=lambda f: (not f.blocking, -(f.saving_ns or 0)))
    return found
