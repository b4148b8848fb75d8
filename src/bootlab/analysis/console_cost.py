"""What printing to the console costs: bytes × bits per character ÷ baud.

A UART at 115200 baud with 8N1 framing moves 10 bits per byte, 11520 bytes a second: a
loud kernel (100 KB of messages) spends close to 9 s just waiting for its serial port.

Only what reached the console costs anything.  A capture holds exactly that.  A kernel log
read back from the ring buffer (dmesg, kmsg, a journal) holds every message, and the
console printed only those below its log level: by the kernel's own rules, `loglevel=N`,
`quiet` (4), `debug` (10) or `ignore_loglevel` on the command line, else the default
(7: every level but KERN_DEBUG).  A message's level is in the line when the log kept it
(`dmesg -r`'s `<6>`, `dmesg -x`'s `kern  :info  :`, kmsg's `6,`); `initcall_debug`'s
messages are KERN_DEBUG whatever the log.  A kernel whose consoles are all screens
(`console=tty0`) pays no serial time at all.

The kernel waits for its console while it prints, so a phase cannot have spent more time
printing than it lasted: each phase's serial time is capped at its length.

A printk stamp is when the message was logged, not when it was printed.  The two differ
when a serial console starts with no boot console (earlycon) still printing: as it
registers, the kernel prints on it every message logged so far and waits for them, before
it logs "console [ttyS0] enabled" (up to 6.1) or right after (6.2 on, where the registration
no longer flushes the console itself).  Those messages cost their serial time there (see
replay).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .._native import dmesgscan
from .blame import Blamed
from ..render.fmt import span
from ..sources import kernel_messages as km
from ..timeline import NO_TIME, NS_PER_S, Boot, Clock, ConsoleLog, Event, Mark
from .console_loss import ConsoleLoss, console_loss, stalls, warn
from .gaps import Gap
from .phases import Phases, line_arrival

DEFAULT_BAUD = 115200
# What the 8250 driver sets a console to that its `console=ttyS0` gives no speed
# (serial8250_console_setup's default; only a console matched as `uart8250,...` keeps the
# speed the port runs at).
UART_8250_DEFAULT = 9600
BITS_PER_BYTE = 10  # start bit + 8 data bits + stop bit
# No UART is faster (USB adapters reach 12 Mbaud; SoC consoles run at up to 1.5-4 Mbaud): a
# replay that would need more was not waited for (an emulated UART, or a console that buffers
# or drops what it cannot send in time).
FASTEST_UART_BAUD = 12_000_000
DEFAULT_CONSOLE_LOGLEVEL = 7  # CONFIG_CONSOLE_LOGLEVEL_DEFAULT: all but KERN_DEBUG
QUIET_CONSOLE_LOGLEVEL = 4  # CONFIG_CONSOLE_LOGLEVEL_QUIET: warnings and worse
DEBUG_CONSOLE_LOGLEVEL = 10
KERN_DEBUG = 7
# A message whose level the log did not keep: most of the kernel's are pr_info.
UNKNOWN_LEVEL = 6
# Consoles that are no serial port, as the command line or "console [NAME] enabled" names
# them: the virtual terminals (tty0..N, a screen), ttynull (no console: `console=` empty or
# `console=null`; `console=none` names none that exists), netconsole, and the consoles kept
# in RAM for after a crash (pstore, named by its backend since 5.x: `console [ramoops-1]
# enabled`, efi_pstore; Android's ram_console: `console [ram-1] enabled`).
# Every other console is a UART, a USB serial gadget or adapter, or a hypervisor's console:
# SoC vendors name their UARTs freely (ttyS, ttyAMA, ttymxc, and ttyUSI, ttyAML, ttyFIQ,
# ttySAC, ...), so they are not listed.
SCREEN_CONSOLE = re.compile(r"^(?:/dev/)?(?:tty\d*|ttynull\d*|none|netcon-?\d*|pstore-?\d*|ram-?\d*|ramoops-?\d*"
                            r"|efi_pstore-?\d*)$")
# The first kernel whose register_console() logs "enabled" before the new console prints
# the messages logged before it (the console_list_lock rework, 6.2).
REPLAY_AFTER_ENABLED = (6, 2)
# A UART's standard speeds below the default: a replay that took far longer than the default
# allows shows one of them (a firmware's console left at 9600 baud: Sun's OpenBoot's ttya).
SLOWER_BAUDS = (1200, 2400, 4800, 9600, 19200, 38400, 57600)
# How far above the least speed a replay's silence shows a standard speed may be and still be
# the one it ran at (the silence may hold a little more than the printing).
SLOWER_MARGIN = 1.15
# A silence after a burst of lines logged faster than they print is their printing when it
# lasts this share of their serial time (the rest of the time the kernel did other work, or
# its console was faster than assumed and printed as it logged).
BURST_SILENCE = (0.8, 1.25)
# Boot consoles that print on a screen, not a serial line (earlyprintk=vga or efi, earlycon=efifb).
SCREEN_BOOT_CONSOLE = re.compile(r"^(?:early)?(?:vga|efi|efifb|fb|simplefb)\d*$")
# A level the log kept: dmesg -r's <6> (facility * 8 + level), kmsg's "6,seq,...", dmesg -x's name.
_LEVEL_NUMBER = re.compile(r"^(?:<(?P<raw>\d+)>|(?P<kmsg>\d+),\d+,\d+,)")
_LEVEL_NAME = re.compile(r"^[a-z]+\s*:(?P<name>emerg|alert|crit|err|warn|notice|info|debug)\s*:")
_LEVEL_NAMES = {"emerg": 0, "alert": 1, "crit": 2, "err": 3, "warn": 4, "notice": 5, "info": 6, "debug": 7}
# initcall_debug's messages (printk(KERN_DEBUG ...)) begin, after the stamp's "] ", with one
# of these words, or are a probe's timing.
_DEBUG_STARTS = ("calling  ", "initcall ", "async_waiting @", "async_continuing @", "PCI fixup ", "pci fixup ")
_DEBUG_TEXT = re.compile(r"\] (?:" + "|".join(map(re.escape, _DEBUG_STARTS)) + r"|probe of \S+ returned )")
# When the ready line reached the host this much after the ready time or more, it waited
# behind the console's backlog; less is within the alignment's precision.
BACKLOG_SHOWN = 1_000_000


@dataclass
class ConsoleRules:
    """What the kernel prints on its console, from its command line."""

    serial: bool | None  # a serial console is named or started; None: no console= and none seen starting
    loglevel: int  # messages below this level are printed
    why: str  # which argument set the level
    consoles: tuple[str, ...] = ()  # as named on the command line, else as the log shows them starting
    named: bool = True  # consoles come from the command line


@dataclass
class ConsoleCost:
    baud: int
    baud_source: str
    bytes: int  # what reached (or would have reached) the console
    lines: int
    cost: int  # ns, each phase's share capped at its length
    printed: bool  # measured on the console (True) or estimated from the ring buffer
    per_phase: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (bytes, ns)
    # A named step (bootlab-mark) -> (lines, bytes, ns) printed while it ran, its start mark's
    # line included: the console held the step up that long (the kernel prints in the
    # caller's context, so a module's messages delay its insmod).
    per_step: dict[tuple[str, int], tuple[int, int, int]] = field(default_factory=dict)
    source: str = ""
    note: str = ""
    serial: bool | None = True  # False: no serial console, so no serial time
    loglevel: str = ""  # for a ring-buffer log: the console's level and why
    skipped: int = 0  # ring-buffer bytes the console did not print (below its level)
    capped: list[str] = field(default_factory=list)  # phases whose serial time was capped at their length
    loss: ConsoleLoss | None = None  # bytes the console lost (a capture with the kernel log after it)
    # When the ready line reached the host (reference clock): after the console's backlog,
    # which a loud console makes up to seconds later than the device was ready.
    ready_line_at: int | None = None
    # A serial console that printed what was logged before it as it started (see replay):
    # when its "enabled" line was logged (reference clock), whether the printing came after
    # that line (6.2 on) or before it, and what it printed.
    replay_at: int | None = None
    replay_after: bool = False
    replay_what: str = ""
    # What the boot waited for its console, for printing_between: (the reference times at which
    # lines were printed, distinct and sorted; the time waited up to each, summed).
    waited: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def printing_between(self, start: int, end: int) -> int:
        """How long the boot waited for its serial console from `start` to `end` (reference
        ns): for the lines printed in that stretch (logged in it, or printed again as a console
        started), their serial time, each no longer than the silence after it (a kernel on an
        emulated UART, or one that did not wait, logged on at once).  The kernel prints in the
        caller's context, so a stretch between two of its messages holds that much printing.
        Known on a log stamped by printk (a transcript, a kernel log read back); 0 on a
        capture."""
        if self.waited is None or end <= start:
            return 0
        times, summed = self.waited
        lo, hi = np.searchsorted(times, [start, end], side="left")
        return int((summed[hi - 1] if hi else 0) - (summed[lo - 1] if lo else 0))


def baud_of(boot: Boot, override: int | None) -> tuple[int, str]:
    if override:
        return override, "--baud"
    if boot.meta.get("console_baud"):
        src = "capture" if "capture_baud" in boot.meta else boot.meta.get("console_baud_from", "kernel command line")
        return int(boot.meta["console_baud"]), src
    dev = boot.meta.get("console_without_speed")
    if dev in boot.meta.get("uart_8250", ()):
        return UART_8250_DEFAULT, (f"default of the 8250 driver: `console={dev}` names no speed (give it one: "
                                   f"console={dev},115200n8; or set it here with --baud)")
    return DEFAULT_BAUD, "default: no speed in the logs, set it with --baud"


def byte_cost(nbytes: int, baud: int) -> int:
    return nbytes * BITS_PER_BYTE * NS_PER_S // baud if baud else 0


def is_serial(console: str) -> bool:
    return not SCREEN_CONSOLE.match(console)


def console_rules(cmdline: str | None, started: Sequence[str] = ()) -> ConsoleRules:
    """The console's log level and whether it is serial; the last argument wins, as in the
    kernel.  With no console= the consoles the log shows starting (`started`) tell: an x86
    PC's default is its screen (tty0), a device tree's stdout-path a UART."""
    level, why = DEFAULT_CONSOLE_LOGLEVEL, f"the default console log level ({DEFAULT_CONSOLE_LOGLEVEL})"
    consoles = []
    for arg in (cmdline or "").split():
        name, _, value = arg.partition("=")
        if name == "quiet":
            level, why = QUIET_CONSOLE_LOGLEVEL, f"quiet (console log level {QUIET_CONSOLE_LOGLEVEL})"
        elif name == "debug":
            level, why = DEBUG_CONSOLE_LOGLEVEL, f"debug (console log level {DEBUG_CONSOLE_LOGLEVEL})"
        elif name == "loglevel" and value.isascii() and value.isdigit():
            level, why = int(value), f"loglevel={value}"
        elif name == "console" and "=" in arg:
            device = value.split(",")[0]
            consoles.append("ttynull" if device in ("", "null") else device)  # as the kernel reads them
    if " ignore_loglevel " in f" {cmdline or ''} ":
        level, why = DEBUG_CONSOLE_LOGLEVEL, "ignore_loglevel (every message)"
    named = bool(consoles)
    consoles = consoles or list(started)
    serial = any(map(is_serial, consoles)) if consoles else None
    return ConsoleRules(serial, level, why, tuple(consoles), named)


def line_level(text: str) -> int:
    """A kernel log line's level: as the line says, KERN_DEBUG for initcall_debug's, else
    UNKNOWN_LEVEL."""
    m = _LEVEL_NUMBER.match(text)
    if m:
        return int(m.group("raw") or m.group("kmsg")) & 7
    m = _LEVEL_NAME.match(text)
    if m:
        return _LEVEL_NAMES[m.group("name")]
    return KERN_DEBUG if _DEBUG_TEXT.search(text) else UNKNOWN_LEVEL


def reached_console(log: ConsoleLog, rules: ConsoleRules) -> np.ndarray:
    """Per line of the log, whether the console printed it: every line of a capture; for a
    ring-buffer log, the lines below the console's level (a continuation line goes with its
    message)."""
    if log.printed:
        return np.ones(len(log), dtype=bool)
    is_timed = log.t.numpy() != NO_TIME
    timed = np.flatnonzero(is_timed)
    below = _levels(log.text, timed) < rules.loglevel
    # Each line goes as the last timed line at or before it (none yet: shown).
    last = np.cumsum(is_timed) - 1
    return np.where(last >= 0, below[np.maximum(last, 0)], True) if len(timed) else np.ones(len(log), dtype=bool)


# _DEBUG_TEXT's words as bytes (a probe's timing is checked by line_level itself).
_DEBUG_WORDS = [np.frombuffer(f"] {start}".encode(), dtype=np.uint8) for start in _DEBUG_STARTS]
_PROBE_WORDS = np.frombuffer(b"] probe of ", dtype=np.uint8)
# What a line that may say its own level starts with (_LEVEL_NUMBER's and _LEVEL_NAME's first characters).
_PREFIX_FIRSTS = b"<0123456789abcdefghijklmnopqrstuvwxyz"
_CHUNK = 1 << 22  # bytes a pass looks at a time (a temporary as big as the log costs more)


def _levels(text, rows: np.ndarray) -> np.ndarray:
    """line_level() of these lines of a log, read in C or numpy for a big log kept as one text:
    a line that starts with none of the level prefixes' first characters is KERN_DEBUG
    when it holds one of _DEBUG_TEXT's words after a "]", UNKNOWN_LEVEL otherwise."""
    whole = getattr(text, "whole", None)
    if whole is None or not whole.isascii() or not len(rows):
        return np.fromiter((line_level(text[i]) for i in rows.tolist()), dtype=np.int64, count=len(rows))
    starts, ends = text.starts[rows], text.ends[rows]
    prefixed, debug, probe = _prefixed_and_words(whole, starts, ends)
    levels = np.where(debug, KERN_DEBUG, UNKNOWN_LEVEL)
    for k in np.flatnonzero(prefixed | (probe & ~debug)).tolist():  # few: read as line_level does
        levels[k] = line_level(text[int(rows[k])])
    return levels


def _prefixed_and_words(whole: str, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per line (sorted, not overlapping) of an ASCII text: whether it starts with one of
    _PREFIX_FIRSTS, whether it holds one of _DEBUG_WORDS, and whether it holds "] probe of "."""
    if dmesgscan is not None:  # in C, two passes over the text as it is (the numpy passes below read the same)
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        ends = np.ascontiguousarray(ends, dtype=np.int64)
        prefixed = np.frombuffer(dmesgscan.holding(whole, starts, np.minimum(starts + 1, ends),
                                                   tuple(bytes([c]) for c in _PREFIX_FIRSTS)), dtype=np.uint64) != 0
        masks = np.frombuffer(dmesgscan.holding(whole, starts, ends,
                                                tuple(w.tobytes() for w in _DEBUG_WORDS + [_PROBE_WORDS])),
                              dtype=np.uint64)
        probe = np.uint64(1 << len(_DEBUG_WORDS))
        return prefixed, (masks & (probe - np.uint64(1))) != 0, (masks & probe) != 0
    arr = np.frombuffer(whole.encode("ascii"), dtype=np.uint8)
    first = arr[np.minimum(starts, len(arr) - 1)]
    prefixed = (ends > starts) & np.isin(first, np.frombuffer(_PREFIX_FIRSTS, dtype=np.uint8))
    found = {id(word): np.zeros(len(starts), dtype=bool) for word in _DEBUG_WORDS + [_PROBE_WORDS]}
    for a in range(0, len(arr), _CHUNK):
        at = np.flatnonzero(arr[a:a + _CHUNK] == ord("]")) + a
        line = np.searchsorted(starts, at, side="right") - 1
        for word in _DEBUG_WORDS + [_PROBE_WORDS]:
            if len(word) > len(arr):
                continue  # (no window that long to look through)
            fits = (line >= 0) & (at + len(word) <= ends[np.maximum(line, 0)])
            where, lines = at[fits], line[fits]
            hit = (np.lib.stride_tricks.sliding_window_view(arr, len(word))[where] == word).all(axis=1)
            found[id(word)][lines[hit]] = True
    debug = np.logical_or.reduce([found[id(word)] for word in _DEBUG_WORDS])
    return prefixed, debug, found[id(_PROBE_WORDS)]


def console_log(boot: Boot) -> ConsoleLog | None:
    """The log that best shows what reached the console: the printed one (a capture), else
    the longest."""
    logs = [log for log in boot.logs if log.printed] or [log for log in boot.logs if log.consoled]
    return max(logs, key=len) if logs else None


def console_cost(boot: Boot, phases: Phases, baud: int | None = None,
                 steps: Sequence[Blamed] = ()) -> ConsoleCost | None:
    log = console_log(boot)
    if log is None:
        return None
    rate, rate_source = baud_of(boot, baud)
    rules = console_rules(boot.meta.get("cmdline"), [ev.attrs["console"] for ev in boot.marks(km.CONSOLE_ENABLED)])
    nbytes = np.frombuffer(log.nbytes, dtype=np.int32).astype(np.int64)
    shown = reached_console(log, rules)
    total = int(nbytes[shown].sum())
    serial = True if log.printed else rules.serial
    if serial is False:
        rate, rate_source = 0, "no serial console"  # printing costs no serial time
    result = ConsoleCost(rate, rate_source, total, int((shown & (nbytes > 0)).sum()), byte_cost(total, rate), log.printed,
                         source=log.file, serial=serial, skipped=int(nbytes.sum()) - total)
    if not log.printed:
        result.loglevel = rules.why
    info = boot.clocks.get(log.clock)
    started = replay(boot, log) if rate else None
    if info is not None and phases.spans:
        t = log.t.numpy()
        timed = (t != NO_TIME) & shown
        starts = np.array([s.start for s in phases.spans], dtype=np.int64)
        ref = info.map.many(t[timed])
        before = t[timed] < started.t if started is not None else np.zeros(len(ref), dtype=bool)
        if started is not None and log.printed:
            # On the console itself the boot console printed its lines as they were logged,
            # up to its "bootconsole [...] disabled": what the late console printed again
            # comes after that line (a Kria KV260's first 3,947 bytes were counted twice).
            gone = [ev.line for ev in boot.marks(km.BOOT_CONSOLE_GONE)
                    if ev.file == log.file and ev.line < started.line and (ev.attrs or {}).get("printed", True)]
            if gone:
                before &= np.asarray(log.lineno, dtype=np.int64)[timed] > max(gone)
        replayed = int(nbytes[timed][before].sum())
        # In a ring-buffer log, a serial boot console that was unregistered before this console
        # started had printed its messages as they were logged: the replay prints them again.
        early = _printed_by_boot_console(boot, log, started)[timed] if started is not None and not log.printed \
            else np.zeros(len(ref), dtype=bool)
        ref_early = ref[early]
        if replayed:  # printed when the console started, not when logged
            ref[before] = info.ref(started.t)
            result.replay_at = info.ref(started.t)
            result.replay_after = _replays_after_enabled(boot.meta.get("kernel_version"))
            name = started.attrs["console"]
            assumed = rate_source.startswith("default")
            faster = _faster(t, started.t, result.replay_after, replayed, rate) if assumed else None
            slower = _slower(t, started.t, result.replay_after, replayed, rate) if assumed and faster is None else None
            if faster is not None:  # the default cannot be: the replay shows how fast the console is at least
                result.note = "; ".join(filter(None, [result.note, faster[0]]))
                rate = result.baud = faster[1]
                result.baud_source = (f"at least, as its replay at {started.file}:{started.line} shows (set it with --baud)"
                                      if rate <= FASTEST_UART_BAUD else
                                      f"the kernel did not wait for its replay at {started.file}:{started.line} "
                                      "(set the speed with --baud)")
            elif slower is not None:  # the kernel waited far longer for the replay than the default allows
                result.note = "; ".join(filter(None, [result.note, slower[0]]))
                rate = result.baud = slower[1]
                result.baud_source = f"as its replay at {started.file}:{started.line} shows (set it with --baud)"
            result.replay_what = (f"the serial console {name} printing the {replayed} bytes logged "
                                  f"before it, {span(byte_cost(replayed, rate))} at {rate} baud")
            result.note = "; ".join(filter(None, [result.note, (
                f"the serial console {name} started with no boot console (earlycon) still printing: the "
                f"{replayed} bytes logged before 'console [{name}] enabled' ({started.file}:"
                f"{started.line}, {result.replay_at / 1e9:.3f} s) were printed as it started, "
                f"{span(byte_cost(replayed, rate))} at {rate} baud, and count there: the silent gap "
                f"{'after' if result.replay_after else 'before'} that line is this printing")]))
        per = _per_phase(starts, phases.spans[-1].end, ref, nbytes[timed])
        placed = int(per.sum())
        if log.clock == Clock.PRINTK:  # (a capture's lines are placed when they arrived, which a
            # console that lags behind the kernel's logging puts after the stretch they held up)
            printed_at = ref.copy()  # (up to 6.1 a replay was printed in the silence before its line)
            if replayed and not result.replay_after and (t[timed] < started.t).any():
                printed_at[before] = info.ref(int(t[timed][t[timed] < started.t].max()))
            result.waited = _waited(np.concatenate([printed_at, ref_early]),
                                    np.concatenate([nbytes[timed], nbytes[timed][early]]), rate)
        if early.any():
            twice = int(nbytes[timed][early].sum())
            per += _per_phase(starts, phases.spans[-1].end, ref_early, nbytes[timed][early])
            result.note = "; ".join(filter(None, [result.note, (
                f"the boot console had printed {twice} of those bytes as they were logged, up to its "
                f"'bootconsole [...] disabled': they count there too, printed twice on the serial line")]))
        for s, n in zip(phases.spans, per):
            if not n:
                continue
            cost = byte_cost(int(n), rate)
            if cost > s.duration:
                cost = s.duration
                result.capped.append(s.name)
            result.per_phase[s.name] = (int(n), cost)
        untimed = total - placed
        if untimed:
            result.per_phase["untimed or after the end"] = (untimed, byte_cost(untimed, rate))
        result.cost = sum(cost for _, cost in result.per_phase.values())
        result.per_step = _per_step(steps, ref, nbytes[timed], rate)
    result.note = "; ".join(filter(None, [_note(result, rules), result.note]))
    result.ready_line_at = ready_line_arrival(boot, phases, log)
    result.loss = console_loss(log, stalls(boot))
    if result.loss is not None:
        warn(boot, result.loss)
    return result


def explain_gaps(gaps: list[Gap], cost: ConsoleCost | None) -> None:
    """Name the printing that filled a gap: a serial console's, next to its "enabled" line."""
    if cost is None or cost.replay_at is None:
        return
    for gap in gaps:
        if (gap.start if cost.replay_after else gap.end) == cost.replay_at:
            gap.cause = cost.replay_what


def replay(boot: Boot, log: ConsoleLog) -> Event | None:
    """The "console [NAME] enabled" of a serial console that started with no boot console
    printing, on a log stamped by printk: every message logged before it was printed as it
    started (CON_PRINTBUFFER; while a boot console prints the kernel does not print them
    twice).  None for a capture, whose host times are when each line was printed."""
    if log.clock != Clock.PRINTK:
        return None
    started = next((ev for ev in boot.marks(km.CONSOLE_ENABLED)
                    if ev.file == log.file and ev.t is not None and is_serial(ev.attrs["console"])), None)
    return None if started is None or _boot_console_printing(boot, started) else started


def _faster(t: np.ndarray, enabled: int, after: bool, replayed: int, rate: int) -> tuple[str, int] | None:
    """When the assumed speed cannot be: the kernel waited for the replay, so it fits in
    the stretch of the log next to the "enabled" line; a replay that would not fit shows
    the console to be faster (Rockchip's run at 1500000 baud, QEMU's emulated UART at any):
    (a note, the least speed it shows), which the cost is then estimated at."""
    window = _silence_next_to(t, enabled, after)
    if window is None or not replayed or byte_cost(replayed, rate) <= 2 * window:
        return None
    least = -(-replayed * BITS_PER_BYTE * NS_PER_S // max(window, 1))
    waited = f"the kernel logged again {span(window)} {'after' if after else 'before'} that line"
    if least > FASTEST_UART_BAUD:
        return (f"at the assumed {rate} baud that printing would take {span(byte_cost(replayed, rate))}, but {waited}: "
                f"the kernel did not wait for its console (that would take {least} baud, faster than any UART: an "
                "emulated one, or a console that buffers or drops what it cannot send in time), and its cost is "
                "estimated as what the boot waited for (set the speed with --baud)"), least
    return (f"at the assumed {rate} baud that printing would take {span(byte_cost(replayed, rate))}, but {waited}: "
            f"the console runs at {least} baud or faster, and its cost is estimated at that speed (set it with --baud)"
            ), least


def _silence_next_to(t: np.ndarray, enabled: int, after: bool) -> int | None:
    """How long the log was silent after (or before) a console's "enabled" line: where its
    replay was printed (None when no timed line is on that side)."""
    timed = t[t != NO_TIME]
    other = timed[timed > enabled] if after else timed[timed < enabled]
    if not len(other):
        return None
    return int(other.min()) - enabled if after else enabled - int(other.max())


def _slower(t: np.ndarray, enabled: int, after: bool, replayed: int, rate: int) -> tuple[str, int] | None:
    """When the assumed speed is far too fast: the kernel logged nothing for much longer
    than the replay would take at it (it waited for its console: a firmware's console left at
    9600 baud prints a few kilobytes for seconds): (a note, the standard speed the silence
    shows), which the cost is then estimated at; None if no standard speed fits it."""
    window = _silence_next_to(t, enabled, after)
    if window is None or not replayed or window <= 2 * byte_cost(replayed, rate):
        return None
    least = replayed * BITS_PER_BYTE * NS_PER_S / window  # had the whole silence been the printing
    fits = [baud for baud in SLOWER_BAUDS if least <= baud <= least * SLOWER_MARGIN]
    if not fits:
        return None
    return (f"at the assumed {rate} baud that printing would take {span(byte_cost(replayed, rate))}, but the kernel "
            f"logged nothing for {span(window)} {'after' if after else 'before'} that line, as long as it takes at "
            f"{fits[0]} baud ({span(byte_cost(replayed, fits[0]))}): the console runs at {fits[0]} baud, and its "
            "cost is estimated at that speed (set it with --baud)"), fits[0]


def _waited(when: np.ndarray, nbytes: np.ndarray, rate: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(each distinct time lines were printed at, sorted; the time the boot waited for its
    console up to it, summed).  A line's printing takes its serial time, and the kernel logs
    nothing meanwhile: what it waited after a line is its serial time, no longer than the
    silence after it (a kernel on an emulated UART, or one that did not wait, logged on at
    once).  A burst of lines logged faster than they print, then a silence as long as all of
    them take (BURST_SILENCE: a Sun's firmware console printed 33 lines logged 5 us apart in
    the 1.6 s after them), was printed in that silence."""
    if not rate or not len(when):
        return None
    order = np.argsort(when, kind="stable")
    times, first = np.unique(when[order], return_index=True)
    cost = np.add.reduceat(nbytes[order], first) * (BITS_PER_BYTE * NS_PER_S) // rate
    silence = np.diff(times, append=times[-1] + cost[-1])
    waited = np.minimum(cost, silence)
    quick = 2 * silence < cost  # logged on before the console could have printed it
    # Each run of quick lines, with the line that ends it (the first that is not quick).
    run = np.concatenate([[0], np.cumsum(~quick[:-1])])
    total = np.bincount(run, weights=cost)
    members = np.bincount(run)
    ends = np.flatnonzero(~quick)
    lo, hi = BURST_SILENCE
    burst = ends[(members[run[ends]] > 1) & (silence[ends] >= lo * total[run[ends]])
                 & (silence[ends] <= hi * total[run[ends]])]
    if len(burst):
        inside = np.isin(run, run[burst])
        waited[inside] = 0
        waited[burst] = np.minimum(silence[burst], total[run[burst]]).astype(np.int64)
    return times, np.cumsum(waited)


def _per_phase(starts: np.ndarray, end: int, ref: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
    """Bytes printed in each phase (by start), of lines printed at `ref`; none after `end`."""
    which = np.searchsorted(starts, ref, side="right") - 1
    inside = (which >= 0) & (ref <= end)
    return np.bincount(which[inside], weights=nbytes[inside], minlength=len(starts))


def _printed_by_boot_console(boot: Boot, log: ConsoleLog, started: Event) -> np.ndarray:
    """Per line of a ring-buffer log: whether a serial boot console, announced before the
    serial console `started` and unregistered before it started, printed it as it was
    logged (from its announcement to its "bootconsole [...] disabled")."""
    lineno = np.asarray(log.lineno, dtype=np.int64)
    printed = np.zeros(len(lineno), dtype=bool)
    since = None
    for line, name, attrs in _boot_console_marks(boot, started):
        if name == km.BOOT_CONSOLE and since is None:
            since = None if SCREEN_BOOT_CONSOLE.match(attrs.get("console", "")) else line
        elif name == km.BOOT_CONSOLE_GONE and since is not None:
            if attrs.get("printed", True):
                printed |= (lineno >= since) & (lineno <= line)
            since = None
    return printed


def _boot_console_printing(boot: Boot, started: Event) -> bool:
    """Whether a boot console still printed when this console started: one announced before
    it and not unregistered since (a screen that started first ends the boot consoles:
    "bootconsole [uart8250] disabled"), or one announced in another of the boot's logs."""
    marks = _boot_console_marks(boot, started)
    return ((bool(marks) and marks[-1][1] == km.BOOT_CONSOLE)
            or any(ev.file != started.file for ev in boot.marks(km.BOOT_CONSOLE)))


def _boot_console_marks(boot: Boot, started: Event) -> list[tuple[int, str, dict]]:
    """The boot consoles announced and unregistered before the console `started`, in its log:
    (line, km.BOOT_CONSOLE or km.BOOT_CONSOLE_GONE, attributes), in order.  earlycon= on a
    command line the log shows whole (from its banner) registered nothing unless the log says
    so (its "earlycon: ..." or "bootconsole [...] enabled" came first)."""
    whole = any(ev.file == started.file for ev in boot.marks(km.BANNER))
    return sorted(((ev.line, name, ev.attrs or {}) for name in (km.BOOT_CONSOLE, km.BOOT_CONSOLE_GONE)
                   for ev in boot.marks(name) if ev.file == started.file and ev.line < started.line
                   and not (whole and (ev.attrs or {}).get("from") == "cmdline")), key=lambda mark: mark[:2])


def _replays_after_enabled(version: str | None) -> bool:
    """Whether this kernel logs "console [NAME] enabled" before printing the messages logged
    before it (6.2 on); an unknown version is taken as older."""
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return m is not None and (int(m.group(1)), int(m.group(2))) >= REPLAY_AFTER_ENABLED


def _per_step(steps: Sequence[Blamed], ref: np.ndarray, nbytes: np.ndarray,
              rate: int) -> dict[tuple[str, int], tuple[int, int, int]]:
    """What each step printed: the lines from its start (its start mark's line) to before
    its end (the end mark's line goes after it), serial time capped at the step's length.
    Steps nest (a boot's "services" holds its "modules"), so each is counted on its own."""
    result = {}
    for step in steps:
        if step.start is None:
            continue
        inside = (ref >= step.start) & (ref < step.start + step.duration)
        n = int(nbytes[inside].sum())
        if n:
            result[(step.name, step.start)] = (int(inside.sum()), n, min(byte_cost(n, rate), step.duration))
    return result


def backlog(ready: int, line: int | None) -> int | None:
    """How long the ready line waited behind the console's backlog, when it was long enough
    to tell (BACKLOG_SHOWN)."""
    return None if line is None or line - ready < BACKLOG_SHOWN else line - ready


def ready_line_arrival(boot: Boot, phases: Phases, log: ConsoleLog) -> int | None:
    """The host's time of arrival of the line that ended the boot, when a capture saw it."""
    if not log.printed or log.clock != Clock.HOST or phases.end is None or phases.end.mark != Mark.READY:
        return None
    ready = next((ev for ev in boot.marks(Mark.READY) if boot.at(ev) == phases.end.at and ev.file == log.file), None)
    return None if ready is None else line_arrival(boot, ready)


def _note(c: ConsoleCost, rules: ConsoleRules) -> str:
    if c.printed:
        return ""
    if c.serial is False:
        return (f"no serial console ({'the kernel command line names' if rules.named else 'the log shows starting'} "
                f"{', '.join(rules.consoles)}; tty0..N are screens, ttynull is none): no serial time is charged")
    where = ("on the serial console the command line names" if c.serial and rules.named else
             f"on the serial console {', '.join(rules.consoles)} the log shows starting (no console= on the "
             "command line)" if c.serial else
             "on the platform's default console, assumed serial (no console= on the command line, none seen starting)")
    return (f"estimated from the kernel log: the messages that {rules.why} prints {where}"
            + (f"; {c.skipped} bytes of messages below that level not counted" if c.skipped else ""))
