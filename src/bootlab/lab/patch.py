"""Variants as patches: a partial target description applied over a whole one.

A patch has the tables of a target file (`target`, `initramfs`, `boot` for the reference
device; a board's keys for a board).  A value replaces the one below it, with one
exception: `append` in a table that holds the kernel's command line (`target.append` and
`arm64.append` add to the table's `cmdline`, `bootloader.append` to U-Boot's `env.bootargs`)
adds kernel arguments, so that patches compose (quiet from one, lpj= from
another).  An argument whose name is already on the command line replaces that
argument where it stands (`console=ttyS0,921600` replaces `console=ttyS0,115200`, and a
second `lpj=` replaces the first), except list-valued ones, whose lists are joined
(`initcall_blacklist=a` then `initcall_blacklist=b` give `initcall_blacklist=a,b`).  Tables
of named settings merge the same way: `kconfig.options` (one option from one patch, another
from the next), `bootloader.env`, `bootloader.saved_env` and `arm64.uboot` (its options).
"""

from __future__ import annotations

import copy
import re

# Arguments whose value is a comma-separated list that patches add to.
LIST_ARGS = ("initcall_blacklist", "module_blacklist")
# Tables of named settings that patches add to (a setting named again is replaced); a table
# inside one is merged the same way (arm64.uboot's options).
MERGED = (("kconfig", "options"), ("bootloader", "env"), ("bootloader", "saved_env"), ("rootfs", "app_unit"),
          ("arm64", "uboot"))
# Lists that patches add to (a unit masked by one patch stays masked by the next).
JOINED = (("rootfs", "mask"),)
# Where a table that takes `append` keeps the command line it adds to, when not in its own
# `cmdline`: U-Boot's bootargs.
CMDLINE_AT = {"bootloader": ("env", "bootargs")}
# A kernel argument: a run of non-blanks, where double quotes may protect blanks.
_ARG = re.compile(r'(?:[^\s"]+|"[^"]*")+')


def kernel_args(text: str) -> list[str]:
    return _ARG.findall(text)


def arg_name(arg: str) -> str:
    return arg.split("=", 1)[0]


def _merged(old: str, new: str) -> str:
    """The argument that results from `new` meeting `old` of the same name: a list-valued
    argument collects both lists, any other is replaced."""
    name = arg_name(new)
    if name not in LIST_ARGS:
        return new
    values = old.split("=", 1)[1].split(",") if "=" in old else []
    values += [v for v in new.split("=", 1)[1].split(",") if v not in values] if "=" in new else []
    return f"{name}={','.join(values)}"


def merge_args(cmdline: str, append: str, extra: str) -> tuple[str, str]:
    """(cmdline, append) with the arguments of `extra` merged in by name."""
    base, added = kernel_args(cmdline), kernel_args(append)
    for arg in kernel_args(extra):
        replaced = False
        for args in (base, added):
            for i, old in enumerate(args):
                if arg_name(old) == arg_name(arg):
                    args[i] = _merged(old, arg)
                    replaced = True
        if not replaced:
            added.append(arg)
    return " ".join(base), " ".join(added)


def apply(description: dict, patch: dict) -> dict:
    """A copy of a target description (Target.to_dict() shape) with the patch applied.

    Values of the wrong shape are passed through as they are, so that the target's own
    validation reports them with their file and line."""
    out = copy.deepcopy(description)
    for section, values in patch.items():
        if not isinstance(values, dict) or not isinstance(out.get(section), dict):
            out[section] = copy.deepcopy(values)
            continue
        for key, value in values.items():
            below = out[section].get(key)
            if (section, key) in MERGED and isinstance(value, dict) and isinstance(below, dict):
                out[section][key] = _merged_table(below, value)
            elif (section, key) in JOINED and isinstance(value, list) and isinstance(below, list):
                out[section][key] = below + [v for v in value if v not in below]
            elif key != "append":
                out[section][key] = copy.deepcopy(value)
        if "append" in values:
            _append(out[section], CMDLINE_AT.get(section, ("cmdline",)), values["append"])
    return out


def _append(table: dict, at: tuple[str, ...], extra) -> None:
    """Kernel arguments `extra` added to `table` whose command line is at the path `at`
    (where it lacks one, `append` is set as given: its validation names what is missing)."""
    *inner, key = at
    holder = table
    for name in inner:
        holder = holder.get(name) if isinstance(holder, dict) else None
    if not isinstance(holder, dict) or key not in holder or not isinstance(extra, str):
        table["append"] = extra
        return
    holder[key], table["append"] = merge_args(str(holder[key]), str(table.get("append", "")), extra)


def _merged_table(below: dict, value: dict) -> dict:
    out = dict(below)
    for key, item in value.items():
        old = out.get(key)
        out[key] = _merged_table(old, item) if isinstance(old, dict) and isinstance(item, dict) else copy.deepcopy(item)
    return out


def describe(patch: dict) -> str:
    """One line: 'target.append += quiet; initramfs.compression = lz4'."""
    parts = []
    for section, values in patch.items():
        if not isinstance(values, dict):
            parts.append(f"{section} = {values!r}")
            continue
        for key, value in values.items():
            op = "+=" if key == "append" else "="
            shown = value if isinstance(value, str) else repr(value)
            parts.append(f"{section}.{key} {op} {shown}")
    return "; ".join(parts) if parts else "(no change)"


def changes(before: dict, after: dict) -> dict:
    """The patch that takes `before` to `after` (whole values, no append arithmetic)."""
    out: dict = {}
    for section, values in after.items():
        if isinstance(values, dict) and isinstance(before.get(section), dict):
            diff = {k: v for k, v in values.items() if before[section].get(k) != v}
            if diff:
                out[section] = diff
        elif before.get(section) != values:
            out[section] = values
    return out
