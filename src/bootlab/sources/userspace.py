"""Userspace on the console or in the kernel log: init, services and the ready marker.

Recognises systemd's console status lines (`[  OK  ] Started X.`, `Starting X...`,
`[FAILED]`, with or without ANSI colour), the same messages logged as `systemd[1]: ...`
in the kernel log, bootlab's own markers (`bootlab-mark: NAME`, printed by the reference
device's init), and the line that says the application is ready.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..timeline import Boot, Clock, Event, Kind, Mark
from . import kernel_messages as km
from . import systemd_analyze

STATUS = re.compile(r"^\[\s*(?P<status>OK|FAILED|TIME|DEPEND|SKIP|\*+\s*)\s*\] (?P<verb>Started|Finished|Reached target|Mounted|Listening on|Created slice|Activated swap|Failed to start|Failed to mount|Stopped target|Stopped|Found device|Timed out waiting for|Dependency failed for|Condition check resulted in)? ?(?P<what>.*?)\.?\s*$")
STARTING = re.compile(r"^\s+(?:Starting|Mounting|Activating swap|Listening on) (?P<what>.*?)\.{0,3}\s*$")
SYSTEMD_MSG = re.compile(r"^systemd\[1\]: (?P<verb>Starting|Started|Finished|Reached target|Mounting|Mounted|Listening on|Failed to start|Failed to mount|Startup finished in|Queued start job for default target) ?(?P<what>.*?)\.{0,3}\s*$")
BOOTLAB_MARK = re.compile(r"bootlab-mark: (?P<name>[\w.\-]+)(?P<rest>.*)$")
# What feed() looks for first: anything else it leaves alone.
WORDS = ("bootlab-mark: ",)
STARTS = ("systemd[1]: ", "[", " ")
UNIT = r"[\w@.\\\-:]+\.(?:service|target|mount|socket|device|slice|swap|path|timer|scope|automount)"
_UNIT_NAME = re.compile(rf"^(?P<unit>{UNIT}) - ")
# systemd's status lines shorten what does not fit the console's width with an ellipsis in the
# middle (`system-seria… - Slice /system/serial-getty`, `integrityse…Local Integrity ...`):
# the name is the full one the logs gave elsewhere that starts and ends the same way.
ELLIPSIS = "\u2026"

# systemd in the kernel log: its first message (systemd has just started) and the switch
# from the initrd to the real root (the systemd whose clock systemd-analyze reports starts
# right after it).
SYSTEMD_FIRST = "systemd.first-message"
SWITCH_ROOT = "systemd.switch-root"
# systemd reached its emergency or rescue target: a unit the boot needs failed (a mount, an
# fsck, a device that never came), and the boot stops at a root shell's password prompt.
EMERGENCY = "systemd.emergency"
_EMERGENCY_TARGETS = ("emergency.target", "Emergency Mode", "rescue.target", "Rescue Mode")
# An initramfs that could not mount the root and gave the console a shell instead: initramfs-
# tools' `ALERT!  /dev/sda does not exist.  Dropping to a shell!` (or its `(initramfs)` prompt,
# after `Failed to mount ... as root file system.`), dracut's `Entering emergency mode. Exit the
# shell to continue.` after its `Warning: /dev/disk/by-uuid/... does not exist`.
INITRAMFS_SHELL = "initramfs.shell"
DROPPING = "Dropping to a shell!"  # (also what a capture stops a failed boot's reading on, as the next)
DRACUT_EMERGENCY = "Entering emergency mode. Exit the shell to continue"
_DROPPING = re.compile(rf"^(?:ALERT!\s+)?(?P<reason>.*?)\s*{re.escape(DROPPING)}")
_INITRAMFS_PROMPT = "(initramfs) "
_DRACUT_MISSING = re.compile(r"Warning: (?P<what>\S+ does not exist)")

# Ready candidates, best first: the first match of the best-ranked pattern ends the boot.
DEFAULT_READY = (
    r"\bBOOTLAB[- ]READY\b",
    r"Startup finished in ",
    r"Reached target (?:Multi-User System|Graphical Interface|multi-user\.target|graphical\.target)",
    r"\blogin: ?$",
    r"^[\w.-]+ login$",  # a getty's prompt whose colon the capture did not wait for
    r"^[\w.-]+ login: [\w.-]+$",  # a getty's prompt with the name someone typed after it (echoed)
    r"procd: - init complete -",  # OpenWrt's procd: every init script has run
    r"Please press Enter to activate this console",
    r"\bsys\.boot_completed=1\b",  # Android's init: the boot completed
    # Last: a root shell's prompt (BusyBox's `/ #`, `~ # `, `root@board:~#`), with or without
    # a command typed after it: an init that starts a shell and logs nothing else.
    r"^(?:[\w.-]+@[\w.-]+:)?[~/][\w./~-]* ?[#$](?:\s*|\s+\S.*)$",
)


def required_literal(pattern: re.Pattern) -> str | None:
    """The longest run of plain characters every match of `pattern` contains, if there is
    one: a cheap `in` test before the (far dearer) search, for every line of a big log."""
    if pattern.flags & re.IGNORECASE:
        return None
    try:
        from re import _parser  # the stdlib's own pattern parser

        parsed = _parser.parse(pattern.pattern, pattern.flags)
    except Exception:  # a private module: if it ever changes, lines are simply searched
        return None
    best, run = "", ""
    for op, arg in parsed:
        if op is _parser.LITERAL:
            run += chr(arg)
            best = max(best, run, key=len)
        else:
            run = ""
    return best or None


@dataclass
class Patterns:
    """Which lines mean "application started" and "application ready"."""

    ready: list[re.Pattern] = field(default_factory=lambda: [re.compile(p) for p in DEFAULT_READY])
    app_start: list[re.Pattern] = field(default_factory=list)

    @classmethod
    def from_options(cls, ready: str | None = None, app_start: str | None = None) -> "Patterns":
        patterns = cls()
        if ready:
            patterns.ready = [re.compile(ready)]
        if app_start:
            patterns.app_start = [re.compile(app_start)]
        return patterns


class UserspaceReader:
    """Turns status lines into unit spans and markers, for one log."""

    def __init__(self, boot: Boot, file: str, patterns: Patterns):
        self.boot = boot
        self.file = file
        self.patterns = patterns
        # Each pattern's required text, tested with `in` before its search (None: always search).
        self.ready = [(required_literal(p), rank, p) for rank, p in enumerate(patterns.ready)]
        self.app_start = [(required_literal(p), p) for p in patterns.app_start]
        self.starting: dict[str, tuple[str, int | None, int]] = {}  # what -> (clock, t, line)
        self.services_started = False
        self.systemd_seen = False
        self.missing = ""  # the device dracut last said does not exist

    def _mark(self, name: str, clock: str, t: int | None, lineno: int, **attrs) -> None:
        self.boot.add(Event(Kind.MARKER, name, clock, t, None, self.file, lineno, attrs=attrs or None))

    def patterns_seen(self, clock: str, t: int | None, text: str, lineno: int) -> None:
        """The ready and app-start patterns, and an initramfs's shell: checked on every line,
        whatever else it is.  The best-ranked (first-listed) matching ready pattern names the
        line's rank."""
        for hint, rank, pattern in self.ready:
            if (hint is None or hint in text) and pattern.search(text):
                self._mark(Mark.READY, clock, t, lineno, rank=rank, text=text.strip()[:120])
                break
        for hint, pattern in self.app_start:
            if (hint is None or hint in text) and pattern.search(text):
                self._mark(Mark.APP_START, clock, t, lineno)
        if "a shell" in text or "does not exist" in text or DRACUT_EMERGENCY in text or _INITRAMFS_PROMPT in text:
            self._initramfs_shell(clock, t, text, lineno)

    def _initramfs_shell(self, clock: str, t: int | None, text: str, lineno: int) -> None:
        """The initramfs gave up on the root (a line of the console's, wherever it stands)."""
        dropping = _DROPPING.search(text)
        missing = _DRACUT_MISSING.search(text)
        if missing:
            self.missing = missing.group("what")
        if self.boot.marks(INITRAMFS_SHELL):
            return
        if dropping:
            reason = dropping.group("reason").rstrip(".") or "the initramfs gave a shell"
        elif DRACUT_EMERGENCY in text:
            reason = f"dracut's emergency shell{f': {self.missing}' if self.missing else ''}"
        elif text.lstrip().startswith(_INITRAMFS_PROMPT):
            reason = "the initramfs's shell prompt"
        else:
            return
        self._mark(INITRAMFS_SHELL, clock, t, lineno, reason=reason)

    def feed(self, clock: str, t: int | None, text: str, lineno: int) -> bool:
        """Interpret one cleaned line (or kernel-log message); True if recognised.  Only a
        text holding one of WORDS or starting with one of STARTS can be."""
        if "bootlab-mark: " in text:
            m = BOOTLAB_MARK.search(text)
            if m:
                self._mark(m.group("name"), clock, t, lineno, bootlab=True,
                           detail=m.group("rest").strip() or None)
                return True
        if text.startswith("systemd[1]: "):
            if not self.systemd_seen:
                self._mark(SYSTEMD_FIRST, clock, t, lineno)
                self.systemd_seen = True
            if text.startswith("systemd[1]: Switching root"):
                self._mark(SWITCH_ROOT, clock, t, lineno)
                return True
            m = SYSTEMD_MSG.match(text)
            if m:
                self._status(m.group("verb"), m.group("what"), clock, t, lineno)
                return True
            return False
        if text.startswith("["):
            m = STATUS.match(text)
            if m and m.group("verb"):
                self._status(m.group("verb"), m.group("what"), clock, t, lineno, m.group("status").strip())
                return True
        elif text.startswith(" "):
            m = STARTING.match(text)
            if m:
                self._status("Starting", m.group("what"), clock, t, lineno)
                return True
        return False

    def _status(self, verb: str, what: str, clock: str, t: int | None, lineno: int, status: str = "OK") -> None:
        if verb == "Queued start job for default target" or (
            not self.services_started and verb in ("Starting", "Started", "Mounting", "Listening on")
        ):
            if not self.services_started:
                self._mark(Mark.SERVICES_START, clock, t, lineno)
                self.services_started = True
            if verb.startswith("Queued"):
                self.boot.meta.setdefault("default_target", what)
                return
        if verb == "Startup finished in":  # systemd's own figures: read as systemd-analyze time prints them
            systemd_analyze.read_time(self.boot, self.file, f"Startup finished in {what}", lineno)
            return
        unit = self._unit(what)
        key = what
        if verb == "Reached target" and unit in _EMERGENCY_TARGETS and not self.boot.marks(EMERGENCY):
            self._mark(EMERGENCY, clock, t, lineno, reason=f"systemd reached {unit}")
        if verb in ("Starting", "Mounting"):
            self.starting[key] = (clock, t, lineno)
            return
        begun = self.starting.pop(key, None)
        attrs = {"status": "FAILED" if verb.startswith("Failed to ") else status, "verb": verb, "text": what}
        if begun and begun[0] == clock and begun[1] is not None and t is not None:
            start, dur = begun[1], t - begun[1]
        else:
            start, dur = t, None
        self.boot.add(Event(Kind.UNIT, unit, clock, start, dur, self.file, lineno, unit, attrs=attrs))

    @staticmethod
    def _unit(what: str) -> str:
        """The unit's name in what a status line says of it (`NAME - Description`, or the
        description alone, as older systemd prints)."""
        m = _UNIT_NAME.match(what)
        return m.group("unit") if m else what

    def close(self) -> None:
        for what, (clock, t, lineno) in self.starting.items():
            unit = self._unit(what)
            self.boot.add(Event(Kind.UNIT, unit, clock, t, None, self.file, lineno, unit,
                                attrs={"status": "started, never finished", "text": what}))
        self.starting.clear()


def resolve_shortened(boot: Boot) -> None:
    """Units a status line named with an ellipsis, made whole from what the logs give in
    full (systemd[1]'s `NAME - Description` lines, the names in blame and the plot): the
    units whose whole line starts and ends as the shortened one does; else whose name
    starts and ends as its name part does; else whose name starts so (the ellipsis may have
    eaten the ` - `, or a damaged console a byte after it).  Made whole where exactly one
    fits; else left as printed, marked `shortened`."""
    units = boot.of_kind(Kind.UNIT)
    shortened = [ev for ev in units if ELLIPSIS in ev.name]
    if not shortened:
        return
    lines: dict[str, set[str]] = {}  # what a line said in full -> the units it named
    for ev in units:
        if re.fullmatch(UNIT, ev.name):
            lines.setdefault((ev.attrs or {}).get("text") or ev.name, set()).add(ev.name)
    names = set().union(*lines.values()) if lines else set()
    for ev in shortened:
        head, _, tail = ((ev.attrs or {}).get("text") or ev.name).partition(ELLIPSIS)
        name_tail = tail.partition(" - ")[0] if " - " in tail else ""
        tiers = ({n for text, named in lines.items() if text.startswith(head) and text.endswith(tail) for n in named},
                 {n for n in names if n.startswith(head) and n.endswith(name_tail)},
                 {n for n in names if n.startswith(head)})
        fits = next((tier for tier in tiers if tier), set())
        if len(fits) == 1:
            ev.name = ev.track = fits.pop()
        else:
            ev.attrs = {**(ev.attrs or {}), "shortened": True}


def link_marks(boot: Boot) -> None:
    """bootlab's markers are written to the kernel log and then to the console: the same
    instant on the printk clock and the host clock.  Each such pair is an anchor.  A pair
    NAME.start / NAME.end on one clock is a step of the boot (loading the scheduler...).
    Then systemd-analyze's clock is placed by what the logs say (link_userspace), by the
    units they name: those a status line shortened are given their full names first."""
    resolve_shortened(boot)
    seen: dict[str, dict[str, list]] = {}
    for ev in boot.of_kind(Kind.MARKER):
        if ev.t is not None and (ev.attrs or {}).get("bootlab"):
            seen.setdefault(ev.name, {}).setdefault(ev.clock, []).append(ev)
    for name, clocks in seen.items():
        printk, host = clocks.get(Clock.PRINTK), clocks.get(Clock.HOST)
        if printk and host:
            p, h = printk[0], host[0]
            boot.anchor(Clock.PRINTK, p.t, Clock.HOST, h.t, f"{h.file}:{h.line} (bootlab-mark {name})")
        if not name.endswith(".start"):
            continue
        step = name[: -len(".start")]
        ends = seen.get(f"{step}.end", {})
        # The host clock, when present, is the one the boot is timed on.
        for clock in (Clock.HOST, Clock.PRINTK):
            if clocks.get(clock) and ends.get(clock):
                begin, end = clocks[clock][0], ends[clock][0]
                boot.add(Event(Kind.STEP, step, clock, begin.t, max(0, end.t - begin.t), begin.file, begin.line,
                               "steps", attrs={"end": f"{end.file}:{end.line}"}))
                break
    link_userspace(boot)


def link_userspace(boot: Boot) -> None:
    """Place systemd-analyze's clock (zero: the start of userspace) on a clock of the logs,
    when systemd-analyze's own figures (`time`) did not.  Left alone it would be placed
    after the last line of the logs: a dmesg read long after the boot (a desktop's, to
    543 s) would put the whole userspace after it.

    In order of preference: the units both sides name (the critical chain's `@` time and
    the kernel log's `systemd[1]: Started/Listening on/Reached target X` line are the
    same instant; after a switch from the initrd, only the real root's lines: the initrd
    has units of the same names); systemd's switch from the initrd (the systemd systemd-analyze times
    starts right after); systemd's first message (it has just started); the kernel
    starting init ("Run /sbin/init as init process"), or freeing its init memory just
    before."""
    if any(Clock.USERSPACE in key for key in boot.anchors):
        return
    ours = [ev for ev in boot.of_kind(Kind.UNIT) if ev.clock == Clock.USERSPACE and ev.t is not None]
    if not ours:
        return
    active = {}
    for ev in ours:
        active.setdefault(ev.name, ev)
    switches = {ev.clock: ev.t for ev in boot.marks(SWITCH_ROOT) if ev.t is not None}
    matched = set()
    for ev in boot.of_kind(Kind.UNIT):
        chain = active.get(ev.name)
        if ev.clock == Clock.USERSPACE or ev.t is None or chain is None or ev.name in matched or \
                ev.t < switches.get(ev.clock, ev.t) or (ev.attrs or {}).get("status") == "started, never finished":
            continue
        matched.add(ev.name)
        boot.anchor(Clock.USERSPACE, chain.end, ev.clock, ev.end,
                    f"{ev.file}:{ev.line} ({ev.name} active; {chain.file}:{chain.line})", observed=False)
    if matched:
        return
    for name, how in ((SWITCH_ROOT, "systemd switched from the initrd"), (SYSTEMD_FIRST, "systemd's first message"),
                      (Mark.USERSPACE_START, "the kernel started init"), (km.FREE_INITMEM, "init memory freed")):
        ev = boot.first_mark(name)
        if ev is not None and ev.t is not None:
            boot.anchor(Clock.USERSPACE, 0, ev.clock, ev.t, f"{ev.file}:{ev.line} ({how})", observed=False)
            return
