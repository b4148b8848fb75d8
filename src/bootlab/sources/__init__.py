"""Input formats: each module reads one kind of boot log into the timeline.

`read(paths)` is the entry point: it detects each file's format, parses every file of
one boot, merges them and aligns their clocks.
"""

from __future__ import annotations

from ..timeline import Boot, Mark, merge, no_cycle_collection
from . import journal_short, listing, multiboot
from .detect import FORMATS, STDIN, NotALog, display_name, maybe_gunzip, read_input
from .detect import detect as detect_format
from .formats import BY_NAME, Input
from .userspace import Patterns, link_marks

__all__ = ["FORMATS", "NotALog", "Patterns", "read", "read_one"]

HEAD = 1 << 20  # of a mapped file, what its format is told from (sniffers read the first 256 KiB)


def read_one(path: str, patterns: Patterns | None = None, fmt: str | None = None, which: int | None = None) -> Boot:
    """One file as a partial boot (clocks not yet aligned); of a log that holds several
    boots, boot `which` (1-based, negative from the end; None: the last)."""
    patterns = patterns or Patterns()
    listed = None
    mapped = multiboot.map_file(path) if path != STDIN else None
    if mapped is not None:
        head = mapped[:HEAD]
        if listing.unnumber(head) is not None:  # a listing: read (and unlisted) whole
            mapped.close()
            mapped = None
        elif fmt is None:  # a big file: its format told from its start
            fmt = detect_format(display_name(path), head)
    if mapped is not None and fmt in BY_NAME and BY_NAME[fmt].boots:  # only the boot asked for is copied out
        data, path = mapped, display_name(path)
    else:
        if mapped is not None:
            mapped.close()
        data, path = read_input(path)
        if data is not None:
            data = maybe_gunzip(path, data)
            listed = listing.unnumber(data)
            data = listed if listed is not None else data
    if fmt is None:
        fmt = detect_format(path, data)
    elif fmt not in FORMATS:
        raise NotALog(path, 0, f"unknown input format {fmt!r}; formats: {', '.join(FORMATS)}")
    reader = BY_NAME[fmt]
    if data is None and not reader.directory:
        raise NotALog(path, 0, f"a directory cannot be read as {fmt}")
    boot = Boot()
    part = None
    try:
        if reader.boots:
            part = multiboot.select(data, which, fmt)
            data = part.data
            if mapped is not None:
                mapped.close()
        reader.read(boot, Input(path, data, patterns, which))
    except multiboot.NoSuchBoot as err:
        raise NotALog(path, 0, str(err)) from None
    except journal_short.WallClockJournal as err:
        raise NotALog(path, 1, str(err)) from None
    if part is not None and part.first_line > 1:
        for log in boot.logs:
            log.drop_before(part.first_line)  # the empty lines standing for the boots before
        boot.sources[-1].lines = part.lines
        if boot.meta.get("host_zero") == "power-on" and not boot.marks(Mark.POWER_ON):
            boot.meta["host_zero"] = "an earlier boot's power-on"  # this boot's is not in the capture
    if part is not None:
        multiboot.say_which(boot, path, part.starts, part.index)
        multiboot.say_reset(boot, path, part)
    if listed is not None:
        boot.warn(path, 1, "a numbered listing (`cat -n`): read without its numbers, each line at its number")
    return boot


def read(paths: list[str], patterns: Patterns | None = None, fmt: str | None = None, which: int | None = None) -> Boot:
    """All files of one boot, merged and aligned.  Raises NotALog if none is readable;
    files that cannot be read when others can become error diagnostics."""
    boots = []
    errors = []
    with no_cycle_collection():
        for path in paths:
            try:
                boots.append(read_one(path, patterns, fmt, which))
            except NotALog as err:
                errors.append(err)
    if not boots:
        raise errors[0] if len(errors) == 1 else NotALog(
            ", ".join(e.file for e in errors), 0, "; ".join(str(e) for e in errors))
    boot = merge(boots, link=link_marks)
    for err in errors:
        boot.warn(err.file, err.line, str(err).split(": ", 1)[-1])
        boot.diagnostics[-1].severity = "error"
    return boot
