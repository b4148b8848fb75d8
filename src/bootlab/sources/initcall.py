"""initcall_debug: initcall spans, driver probes, async waits and initcall levels.

Recognises, inside printk messages:

    calling  fn+0x0/0x6b @ 1
    initcall fn+0x0/0x16b [mod] returned 0 after 787 usecs
    initcall fn+0x0/0x16b returned -19 after 0 msecs          (2.6.2x: msecs)
    calling  0xffffffffc0a01000 @ 12                         (no kallsyms: bare address)
    calling  12_sd_probe_async+0x0/0x1c0 @ 95                  (async function, cookie 12)
    initcall 12_sd_probe_async+0x0/0x1c0 returned after 5123 usecs
    async_waiting @ 1 / async_continuing @ 1 after 1234 usec
    probe of 0000:00:02.0 returned 0 after 1234 usecs
    entering initcall level: fs
    Calling initcall 0xc0123456: fn+0x0/0x40()                (2.6.24 and older;
    Calling initcall 0xc0123456 fn                             2.6.3; no kallsyms)
    Calling initcall 0xc0123456
    initcall 0xc0123456: fn+0x0/0x40() returned 0.
    initcall 0xc0123456 ran for 12 msecs: fn+0x0/0x40()

The oldest kernels (2.6.1x) print only the `Calling initcall` line, never a return: such a
call is timed until the next one starts (the initcalls run one after another on pid 1),
the last until the kernel moves on to the root filesystem; each duration is an upper
bound, and says so (attribute `upper_bound`).

A `calling` line may start in the middle of another message (two printks racing on the
console); it is found anywhere in the line, with its own embedded timestamp if it has one.
"""

from __future__ import annotations

import bisect
import re

from ..timeline import (NO_TIME, NS_PER_MS, NS_PER_US, Boot, Clock, Event, Kind, Mark, SpanTable, in_range,
                        merge_by_line, ranked)
from . import kernel_messages as km
from .lines import seconds_to_ns

_SYM = r"(?P<sym>\S+?)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?:\(\))?"
CALLING = re.compile(
    r"(?:\[\s*(?P<ts>\d+\.\d+)\](?:\[\s*[TC]\d+\])?\s*)?calling  " + _SYM + r"(?: \[(?P<mod>[^\]]+)\])? @ (?P<pid>\d+)"
)
RETURNED = re.compile(
    r"initcall " + _SYM + r"(?: \[(?P<mod>[^\]]+)\])? returned (?:(?P<ret>-?\d+) )?after (?P<n>\d+) (?P<unit>usecs|msecs)"
)
# 2.6.1x: "Calling initcall 0xc03c272c: atkbd_init+0x0/0x38()"; 2.6.3: "... 0xc03f7e19 pcibios_init",
# or the bare address without kallsyms.
OLD_CALLING = re.compile(r"Calling initcall (?P<addr>0x[0-9a-f]+)(?::? " + _SYM + r")?\s*$")
OLD_RETURNED = re.compile(r"initcall 0x[0-9a-f]+: " + _SYM + r" returned (?P<ret>-?\d+)\.")
OLD_RAN = re.compile(r"initcall 0x[0-9a-f]+ ran for (?P<n>\d+) msecs: " + _SYM + r"\s*$")
FIXUP_TOOK = re.compile(r"(?P<dev>\S+): (?P<sym>[\w.]+)\+0x[0-9a-f]+/0x[0-9a-f]+ took (?P<n>\d+) usecs")
PROBE = re.compile(r"probe of (?P<dev>\S+) returned (?P<ret>-?\d+) after (?P<n>\d+) usecs")
ASYNC_WAIT = re.compile(r"async_waiting @ (?P<pid>\d+)")
ASYNC_CONT = re.compile(r"async_continuing @ (?P<pid>\d+) after (?P<n>\d+) usec")
LEVEL = re.compile(r"entering initcall level: (?P<level>\S+)")
# The common case, a message that starts with the keyword, without the general search.
_FAST_SYM = r"(?P<sym>[^\s+(]+)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?: \[(?P<mod>[^\]\n]+)\])?"
CALLING_AT_START = re.compile(r"calling  " + _FAST_SYM + r" @ (?P<pid>\d+)")
RETURNED_AT_START = re.compile(
    r"initcall " + _FAST_SYM + r" returned (?:(?P<ret>-?\d+) )?after (?P<n>\d+) (?P<unit>usecs|msecs)")
# A function as those lines print it ("fn+0x0/0x6b [mod]"), for a big log's bulk reader,
# which finds the rest of the line itself and splits each function once (functions_of).
_FUNCTION = re.compile(_FAST_SYM)
NO_RET_CODE = -(2**63)  # in a bulk column of return codes: none printed ("returned after", 2.6)
# Messages printed once every initcall has run: the last call of the oldest form (no return
# line) ended before the first of them.
AFTER_INITCALLS = (km.ROOT_MOUNTED, km.FREE_INITMEM, km.WRITE_PROTECT, Mark.USERSPACE_START)
_ASYNC_COOKIE = re.compile(r"^(\d+)_(.+)$")

# Only messages holding one of these reach feed() (console.Interpreter tests them first).
KEYWORDS = ("calling  ", "initcall ", "probe of ", "async_", " took ", "Calling initcall")


def _split_cookie(sym: str) -> tuple[str, int | None]:
    if not sym[:1].isdigit():
        return sym, None  # the usual case: a function name
    m = _ASYNC_COOKIE.match(sym)
    if m and not sym.startswith("0x"):
        return m.group(2), int(m.group(1))
    return sym, None


class InitcallReader:
    """Collects one log's initcall_debug messages; `close()` pairs each return with its call
    and adds the spans to the boot.

    Pairing waits for the end of the log so that the calls and returns a big log's bulk
    reader finds at once (dmesg_bulk.py) pair exactly as those fed line by line: a return
    answers the latest unanswered call of the same function before it (a stack per
    function, as the kernel nests them).  The spans join the boot's events where reading
    line by line would have put them: at their return lines.
    """

    def __init__(self, boot: Boot, file: str, clock: str = Clock.PRINTK):
        self.boot = boot
        self.file = file
        self.clock = clock
        self.events = boot.objects
        self.first_event = len(boot.objects)  # this log's events start here
        self.functions: list[tuple[str, str | None]] = []  # (symbol as printed, module)
        self.function_ids: dict[tuple[str, str | None], int] = {}
        self.function_texts: dict[str, int] = {}  # "fn+0x0/0x6b [mod]" -> function, or -1
        # Calls and returns as columns, in the order found: those a big log's bulk reader
        # finds at once (numpy columns: line, time, function, pid / code, duration) come
        # first, then those fed line by line; a time not known is NO_TIME.
        self.bulk_calls: tuple | None = None
        self.bulk_returns: tuple | None = None
        self.call_line: list[int] = []
        self.call_t: list[int] = []
        self.call_fn: list[int] = []
        self.call_pid: list[str] = []
        self.ret_line: list[int] = []
        self.ret_t: list[int] = []
        self.ret_fn: list[int] = []
        self.ret_dur: list[int] = []
        self.ret_code: list[int] = []  # NO_RET_CODE: none printed
        self.extras: dict[int, dict] = {}  # return index -> its own attributes (a PCI fixup)
        self.levels: list[tuple[int, str]] = []  # (line, level) of "entering initcall level"
        self.oldest_calls: list[int] = []  # calls of the oldest form (no return line), as call indices

    def feed(self, t: int | None, msg: str, lineno: int) -> bool:
        """Interpret one message; True if it was an initcall_debug message."""
        if msg.startswith("calling  "):
            m = CALLING_AT_START.match(msg)
            if m:
                self.call(t, lineno, *m.groups())
                return True
        elif msg.startswith("initcall "):
            m = RETURNED_AT_START.match(msg)
            if m:
                self.returned(t, lineno, *m.groups())
                return True
        if "calling  " in msg:
            m = CALLING.search(msg)
            if m:
                ts = m.group("ts")
                self.call(seconds_to_ns(ts) if ts else t, lineno, m.group("sym"), m.group("mod"), m.group("pid"))
                return True
        if "initcall " in msg:
            m = RETURNED.search(msg)
            if m:
                dur = int(m.group("n")) * (NS_PER_US if m.group("unit") == "usecs" else NS_PER_MS)
                ret = m.group("ret")
                self._finish(m.group("sym"), m.group("mod"), t, dur, None if ret is None else int(ret), lineno)
                return True
            m = OLD_RAN.search(msg)
            if m:
                self._finish(m.group("sym"), None, t, int(m.group("n")) * NS_PER_MS, None, lineno)
                return True
            if OLD_RETURNED.search(msg):
                return True  # the "ran for" line that follows carries the duration
            m = LEVEL.search(msg)
            if m:
                self.levels.append((lineno, m.group("level")))
                self.boot.add(Event(Kind.LEVEL, m.group("level"), self.clock, t, None, self.file, lineno))
                return True
        if "Calling initcall" in msg:
            m = OLD_CALLING.search(msg)
            if m:
                self.oldest_calls.append(len(self.call_line))
                self.call(t, lineno, m.group("sym") or m.group("addr"), None, "1")
                return True
        if " took " in msg:
            m = FIXUP_TOOK.search(msg)
            if m:
                # A PCI fixup run for one device: "pci 0000:01:00.0: fn+0x0/0x60 took 6 usecs"
                self._finish(m.group("sym"), None, t, int(m.group("n")) * NS_PER_US, None, lineno,
                             {"device": m.group("dev").split()[-1], "fixup": True})
                return True
        if "probe of " in msg:
            m = PROBE.search(msg)
            if m:
                dur = int(m.group("n")) * NS_PER_US
                self.boot.add(
                    Event(
                        Kind.PROBE,
                        m.group("dev"),
                        self.clock,
                        None if t is None else t - dur,
                        dur,
                        self.file,
                        lineno,
                        "probes",
                        attrs={"ret": int(m.group("ret"))},
                    )
                )
                return True
        if "async_" in msg:
            if ASYNC_WAIT.search(msg):
                return True  # the "continuing" line that follows carries the wait
            m = ASYNC_CONT.search(msg)
            if m:
                pid = m.group("pid")
                dur = int(m.group("n")) * NS_PER_US
                self.boot.add(
                    Event(
                        Kind.ASYNC_WAIT,
                        "async wait",
                        self.clock,
                        None if t is None else t - dur,
                        dur,
                        self.file,
                        lineno,
                        f"pid {pid}",
                    )
                )
                return True
        return False

    @staticmethod
    def _key(sym: str, mod: str | None) -> str:
        return f"{sym} [{mod}]" if mod else sym

    def _function(self, sym: str, mod: str | None) -> int:
        key = (sym, mod or None)
        fn = self.function_ids.get(key)
        if fn is None:
            fn = self.function_ids[key] = len(self.functions)
            self.functions.append(key)
        return fn

    def functions_of(self, texts: list[str]) -> list[int]:
        """The function of each text ("fn+0x0/0x6b [mod]"), or -1 where the text is not
        one the at-start expressions would read; each different text is split once."""
        known = self.function_texts
        for text in set(texts).difference(known):
            m = _FUNCTION.fullmatch(text)
            known[text] = self._function(m.group("sym"), m.group("mod")) if m else -1
        return [known[text] for text in texts]

    def call(self, t: int | None, lineno: int, sym: str, mod: str | None, pid: str) -> None:
        """`calling  SYM [MOD] @ PID` (the groups of CALLING_AT_START)."""
        if not in_range(t):
            self.boot.warn(self.file, lineno, f"initcall {sym}: a time out of range, not read")
            return
        self.call_line.append(lineno)
        self.call_t.append(NO_TIME if t is None else t)
        self.call_fn.append(self._function(sym, mod))
        self.call_pid.append(pid)

    def calls_found(self, lines, times, functions, pids) -> None:
        """The `calling` lines a bulk reader found (numpy columns; functions from
        functions_of), before any line is fed."""
        assert not self.call_line and self.bulk_calls is None
        self.bulk_calls = (lines, times, functions, pids)

    def returns_found(self, lines, times, functions, codes, durations, devices=None) -> None:
        """The `initcall ... returned` lines a bulk reader found (numpy columns: return
        codes with NO_RET_CODE where none was printed, durations in ns), before any line;
        `devices`: per return, the device of a PCI fixup's `took` line, None for others."""
        assert not self.ret_line and self.bulk_returns is None
        self.bulk_returns = (lines, times, functions, codes, durations)
        if devices is not None:  # (a numpy column of objects: the bulk reader's)
            import numpy as np

            for r in np.flatnonzero(devices).tolist():  # (a device's text is never empty)
                self.extras[r] = {"device": devices[r], "fixup": True}

    def returned(self, t: int | None, lineno: int, sym: str, mod: str | None, ret: str | None, n: str,
                 unit: str) -> None:
        """`initcall SYM [MOD] returned RET after N UNIT` (the groups of RETURNED_AT_START)."""
        dur = int(n) * (NS_PER_US if unit == "usecs" else NS_PER_MS)
        self._finish(sym, mod, t, dur, None if ret is None else int(ret), lineno)

    def _finish(self, raw_sym: str, mod: str | None, t: int | None, dur: int, ret: int | None, lineno: int,
                extra: dict | None = None) -> None:
        if not (in_range(t) and in_range(dur) and (t is None or in_range(t - dur))):
            self.boot.warn(self.file, lineno, f"initcall {raw_sym}: a time out of range, not read")
            return
        if extra:
            self.extras[len(self.ret_line) + (len(self.bulk_returns[0]) if self.bulk_returns else 0)] = extra
        self.ret_line.append(lineno)
        self.ret_t.append(NO_TIME if t is None else t)
        self.ret_fn.append(self._function(raw_sym, mod))
        self.ret_dur.append(dur)
        self.ret_code.append(NO_RET_CODE if ret is None else ret)

    def _columns(self) -> dict:
        """Every call and return found, bulk first: numpy columns when a bulk reader found
        some or there are many (then pids are ids into "pids"), lists otherwise (pids as
        printed)."""
        per_line = {"call_line": self.call_line, "call_t": self.call_t, "call_fn": self.call_fn,
                    "ret_line": self.ret_line, "ret_t": self.ret_t, "ret_fn": self.ret_fn, "ret_code": self.ret_code,
                    "ret_dur": self.ret_dur}
        n_returns = len(self.ret_line) + (len(self.bulk_returns[0]) if self.bulk_returns else 0)
        if self.bulk_calls is None and self.bulk_returns is None and n_returns <= BULK_PAIRING:
            return {**per_line, "call_pid": self.call_pid}
        import numpy as np

        bulk = dict(zip(("call_line", "call_t", "call_fn", "call_pid"), self.bulk_calls or ([],) * 4))
        bulk.update(zip(("ret_line", "ret_t", "ret_fn", "ret_code", "ret_dur"), self.bulk_returns or ([],) * 5))
        cols = {k: np.concatenate([np.asarray(bulk[k], dtype=np.int64), np.asarray(v, dtype=np.int64)])
                for k, v in per_line.items()}
        numbers, number_id = np.unique(np.asarray(bulk["call_pid"], dtype=np.int64), return_inverse=True)
        pids = [str(n) for n in numbers.tolist()]
        ids = {pid: k for k, pid in enumerate(pids)}
        cols["call_pid"] = np.concatenate([number_id, [ids.setdefault(pid, len(ids)) for pid in self.call_pid]]
                                          ).astype(np.int64)
        cols["pids"] = list(ids)
        return cols

    def close(self, end: int | None) -> None:
        """Pair calls with returns and add the spans; report the initcalls that never
        returned: they ran until the log ended (or hung)."""
        bulk_calls = len(self.bulk_calls[0]) if self.bulk_calls else 0
        cols = self._columns()
        if "pids" in cols:  # (copied into cols: freed before the pairing and the table, the read's peak)
            self.bulk_calls = self.bulk_returns = None
        calls = len(cols["call_line"])
        answered, open_calls = _pair(_joined(cols["call_line"], cols["ret_line"]),
                                     _joined(cols["call_fn"], cols["ret_fn"]), calls)
        for r, dur in _shared_calltime(cols, answered).items():
            cols["ret_dur"][r] = dur
            self.extras[r] = {**self.extras.get(r, {}), "timed_by_stamps": True}
        if "pids" in cols:  # numpy columns: the spans stay columns too
            table = self._table(answered, cols)
            table.at, table.until = self.first_event, len(self.events)
            self.boot.tables.append(table)
        else:
            if any(t.until > self.first_event for t in self.boot.tables):
                self.boot.materialize()  # inserting among a table's events: they must be objects first
            spans = self._spans(answered, cols)
            mine = self.events[self.first_event:]
            self.events[self.first_event:] = merge_by_line(mine, spans) if mine else spans
        oldest = {bulk_calls + c for c in self.oldest_calls}
        bounds = self._next_starts(cols, sorted(oldest)) if oldest else {}
        for stack in open_calls:
            raw, mod = self.functions[int(cols["call_fn"][stack[0]])]
            sym, cookie = _split_cookie(raw)
            for c in stack:
                t, lineno = int(cols["call_t"][c]), int(cols["call_line"][c])
                t = None if t == NO_TIME else t
                if c in oldest:  # no return line is ever printed: timed until the next call
                    until = bounds.get(c)
                    dur = None if t is None or until is None else max(0, until - t)
                    self.boot.add(Event(Kind.INITCALL, sym, self.clock, t, dur, self.file, lineno, "pid 1",
                                        attrs={"upper_bound": True}))
                    continue
                self.boot.warn(self.file, lineno,
                               f"initcall {self._key(raw, mod)} was called but never returned in this log")
                dur = None if t is None or end is None else max(0, end - t)
                attrs = {"unfinished": True}
                if cookie is not None:
                    attrs["async"] = cookie
                pid = cols["pids"][cols["call_pid"][c]] if "pids" in cols else cols["call_pid"][c]
                self.boot.add(Event(Kind.INITCALL, sym, self.clock, t, dur, self.file, lineno, f"pid {pid}",
                                    attrs=attrs))

    def _next_starts(self, cols: dict, oldest: list[int]) -> dict[int, int]:
        """For each call of the oldest form, the time it ended by at the latest: the next
        call's start, or for the last one the first sign the kernel moved past its
        initcalls (the root mounted, init memory freed); a warning says they are bounds."""
        lines, times = list(cols["call_line"]), list(cols["call_t"])
        timed = sorted((line, t) for line, t in zip(lines, times) if t != NO_TIME)
        after = [(ev.line, ev.t) for ev in self.events[self.first_event:]
                 if ev.kind == Kind.MARKER and ev.name in AFTER_INITCALLS and ev.t is not None and ev.clock == self.clock]
        last_call = max(lines)
        timed += [min(after)] if after and min(after)[0] > last_call else []
        bounds = {}
        for c in oldest:
            k = bisect.bisect_right(timed, (lines[c], float("inf")))
            if k < len(timed):
                bounds[c] = timed[k][1]
        first = min(lines[c] for c in oldest)
        self.boot.warn(self.file, first, f"{len(oldest)} initcalls in the oldest form (`Calling initcall 0x...`, "
                       "kernels before 2.6.2x) have no return line: each is timed until the next call starts, an "
                       "upper bound, and no advice is built on those times")
        return bounds

    def _spans(self, answered, cols: dict) -> list[Event]:
        """One span per return, in file order: from its call (or its duration before the
        return), on its caller's track, in the initcall level of its line."""
        named = [_split_cookie(raw) for raw, _mod in self.functions]
        # Most initcalls share their attributes (ret 0, a level) and their track: one object
        # for each keeps a million-line log small.  Attributes are never modified later.
        shared: dict[tuple, dict] = {}
        tracks: dict[str | None, str] = {}
        shapes: dict[tuple, tuple[str, dict, str]] = {}  # (function, ret, level, pid) -> name, attrs, track
        levels = self.levels + [(float("inf"), None)]
        level, next_level, level_at = None, 0, levels[0][0]
        extras, functions = self.extras, self.functions
        call_t, call_pid = cols["call_t"] + [NO_TIME], cols["call_pid"] + [None]  # [-1]: no call
        ret_line, ret_t, ret_dur, ret_fn, ret_code = (cols[k] for k in ("ret_line", "ret_t", "ret_dur", "ret_fn",
                                                                        "ret_code"))
        events: list[Event] = []
        append, kind, clock, file = events.append, Kind.INITCALL, self.clock, self.file
        for r in sorted(range(len(ret_line)), key=ret_line.__getitem__):
            line, c = ret_line[r], answered[r]
            while line > level_at:
                level = levels[next_level][1]
                next_level += 1
                level_at = levels[next_level][0]
            start = call_t[c]
            if start == NO_TIME and ret_t[r] != NO_TIME:
                start = ret_t[r] - ret_dur[r]
            code = ret_code[r]
            key = (ret_fn[r], None if code == NO_RET_CODE else code, level, call_pid[c])
            shape = shapes.get(key)
            if shape is None:
                fn, ret, pid = key[0], key[1], key[3]
                (sym, cookie), mod = named[fn], functions[fn][1]
                common = (ret, mod, cookie, "module" if mod else level)
                attrs = shared.get(common)
                if attrs is None:
                    attrs = shared[common] = attributes(None, ret, mod, cookie, level)
                track = tracks.get(pid)
                if track is None:
                    track = tracks[pid] = f"pid {pid}" if pid else "initcalls"
                shape = shapes[key] = (sym, attrs, track)
            attrs = shape[1]
            if extras and r in extras:
                fn = ret_fn[r]
                attrs = attributes(extras[r], key[1], functions[fn][1], named[fn][1], level)
            append(Event(kind, shape[0], clock, None if start == NO_TIME else start, ret_dur[r], file, line, shape[2],
                         None, attrs))
        return events

    def _table(self, answered, cols: dict) -> SpanTable:
        """_spans() for many, as columns: the same spans, attributes and order."""
        import numpy as np

        order = np.argsort(cols["ret_line"], kind="stable")
        line, ret_t, dur, fn, code = (cols[k][order] for k in ("ret_line", "ret_t", "ret_dur", "ret_fn", "ret_code"))
        call = np.asarray(answered, dtype=np.int64)[order]  # -1: no call: the sentinel at the end
        start = np.append(cols["call_t"], NO_TIME)[call]
        known = (start == NO_TIME) & (ret_t != NO_TIME)
        start[known] = ret_t[known] - dur[known]
        # The level of a return: the last "entering initcall level" line before it.
        level = np.searchsorted(np.asarray([at for at, _ in self.levels], dtype=np.int64), line, side="left")
        level_names = [None] + [name for _, name in self.levels]
        # Per function: its name (the async cookie split off), module and cookie.
        named = [_split_cookie(raw) for raw, _mod in self.functions]
        names: dict[str, int] = {}
        fn_name = np.asarray([names.setdefault(sym, len(names)) for sym, _ in named], dtype=np.int32)
        mods: dict[str | None, int] = {None: 0}
        fn_mod = np.asarray([mods.setdefault(mod, len(mods)) for _, mod in self.functions], dtype=np.int64)
        cookies = sorted({c for _, c in named if c is not None})
        fn_cookie = np.asarray([0 if c is None else 1 + cookies.index(c) for _, c in named], dtype=np.int64)
        # Per call: its caller's track.
        call_track = np.append(cols["call_pid"], len(cols["pids"]))
        track_names = [f"pid {pid}" if pid else "initcalls" for pid in cols["pids"]] + ["initcalls"]
        # One attribute dict per (code, module, cookie, level): a module's initcalls are "module".
        mod, cookie = fn_mod[fn], fn_cookie[fn]
        level_key = np.where(mod > 0, -1, level)
        code_rank = _code_ranks(code)
        key = ((code_rank * len(mods) + mod) * (len(cookies) + 1) + cookie) * (len(level_names) + 1) + level_key + 1
        kept, attr_id = ranked(key, int(key.max()) + 1 if len(key) else 0)  # (key >= 0: level_key + 1 >= 0)
        first = np.full(len(kept), len(key), dtype=np.int64)  # each set's first row
        np.minimum.at(first, attr_id, np.arange(len(key)))
        mod_names = list(mods)
        attr_sets = []
        for row in first.tolist():
            c = int(code[row])
            f = int(fn[row])
            attr_sets.append(attributes(None, None if c == NO_RET_CODE else c, mod_names[fn_mod[f]],
                                         named[f][1], level_names[level[row]]))
        attr_id = attr_id.astype(np.int32)
        if self.extras:  # a PCI fixup's device: attributes of its own
            position = np.empty(len(order), dtype=np.int64)
            position[order] = np.arange(len(order))
            # (one set for equal attributes: a log of many boots has each fixup once a boot, and
            # the analyses go through the sets, not the rows)
            fixup_sets: dict[tuple, int] = {}
            for r, extra in self.extras.items():
                row = int(position[r])
                c, f, row_level = int(code[row]), int(fn[row]), level_names[level[row]]
                key = (*extra.items(), c, f, row_level)
                if key not in fixup_sets:
                    fixup_sets[key] = len(attr_sets)
                    attr_sets.append(attributes(extra, None if c == NO_RET_CODE else c, self.functions[f][1],
                                                 named[f][1], row_level))
                attr_id[row] = fixup_sets[key]
        zeros = np.zeros(len(order), dtype=np.int32)
        return SpanTable({"kind": [Kind.INITCALL], "name": list(names), "clock": [self.clock], "file": [self.file],
                          "track": track_names, "attrs": attr_sets},
                         {"kind": zeros, "name": fn_name[fn], "clock": zeros, "file": zeros,
                          "track": call_track[call], "attrs": attr_id},
                         start, dur, line)


def _code_ranks(code):
    """Per return code, its rank among the different codes (NO_RET_CODE, no code, first):
    by timeline.ranked over their span, not np.unique (whose return_inverse took 0.058 s
    on 400,000, and which loads numpy.ma when asked for the values alone)."""
    import numpy as np

    printed = code != NO_RET_CODE
    values = code[printed]
    if not len(values):
        return np.zeros(len(code), dtype=np.int64)
    low = int(values.min())
    ranks = np.zeros(len(code), dtype=np.int64)
    ranks[printed] = ranked(values - low, int(values.max()) - low + 1)[1] + (not printed.all())
    return ranks


def _joined(a, b):
    """Two columns one after the other (lists, or numpy columns)."""
    if isinstance(a, list):
        return a + b
    import numpy as np

    return np.concatenate([a, b])


def attributes(extra: dict | None, ret: int | None, mod: str | None, cookie: int | None, level: str | None) -> dict:
    """An initcall's attributes; a module's initcall is of level "module", whatever level
    the built-in initcalls before it were in."""
    attrs = dict(extra) if extra else {}
    if ret is not None:
        attrs["ret"] = ret
    if mod:
        attrs["module"] = mod
    if cookie is not None:
        attrs["async"] = cookie
    level = "module" if mod else level
    if level:
        attrs["level"] = level
    return attrs


# A return whose own time is this much shorter than its lines' stamps say is suspect.
SHARED_CALLTIME_SLACK = 1_000_000


def _shared_calltime(cols: dict, answered) -> dict[int, int]:
    """Returns whose printed time began at another initcall's start, each with its time by
    its lines' stamps.  Since 4.17 initcall_debug keeps one start time for every initcall
    (a tracepoint probe's `initcall_calltime`): one that starts while another runs (a module
    loaded by request_module() from a built-in initcall, an async one) overwrites it, and the
    one running is reported as lasting from the other's start (a public 6.18 VM's
    `init_encrypted` returned "after 28536 usecs" 2.28 s after its call, 28.5 ms after
    `aesni_init` began).  Taken as raced: another call came between its call and return and
    the printed time starts at or after that call's stamp.  (Lists, a small log's, are
    looked through in Python: numpy is loaded for big logs only.)"""
    if isinstance(cols["ret_dur"], list):
        return _shared_calltime_small(cols, answered)
    import numpy as np

    call_line, call_t = np.asarray(cols["call_line"], dtype=np.int64), np.asarray(cols["call_t"], dtype=np.int64)
    ret_line, ret_t = np.asarray(cols["ret_line"], dtype=np.int64), np.asarray(cols["ret_t"], dtype=np.int64)
    dur, c = np.asarray(cols["ret_dur"], dtype=np.int64), np.asarray(answered, dtype=np.int64)
    if not len(c) or not len(call_line):
        return {}
    by_line = np.argsort(call_line, kind="stable")
    paired = c >= 0
    cc = np.where(paired, c, 0)
    nxt = np.searchsorted(call_line[by_line], call_line[cc], side="right")  # the next call by line
    has_next = nxt < len(by_line)
    other = by_line[np.minimum(nxt, len(by_line) - 1)]
    raced = paired & has_next & _raced(call_t[cc], call_line[other], call_t[other], ret_line, ret_t, dur)
    return {int(r): int(ret_t[r] - call_t[cc[r]]) for r in np.flatnonzero(raced)}


def _raced(call_t, next_line, next_t, ret_line, ret_t, dur):
    """The rule above, on one return (numbers) or many (numpy columns): the next call came
    before the return, and the printed time starts at or after that call's stamp, well
    after its own call's."""
    return ((next_line < ret_line) & (call_t != NO_TIME) & (ret_t != NO_TIME) & (next_t != NO_TIME)
            & (ret_t - dur >= next_t) & (ret_t - call_t > dur + SHARED_CALLTIME_SLACK))


def _shared_calltime_small(cols: dict, answered) -> dict[int, int]:
    """_shared_calltime() for columns kept as lists."""
    call_line, call_t = cols["call_line"], cols["call_t"]
    by_line = sorted(range(len(call_line)), key=call_line.__getitem__)
    lines = [call_line[k] for k in by_line]
    found = {}
    for r, c in enumerate(answered):
        nxt = bisect.bisect_right(lines, call_line[c]) if c >= 0 else len(lines)
        if nxt < len(lines):
            other = by_line[nxt]
            ret_t = cols["ret_t"][r]
            if _raced(call_t[c], call_line[other], call_t[other], cols["ret_line"][r], ret_t, cols["ret_dur"][r]):
                found[r] = ret_t - call_t[c]
    return found


# More calls and returns than this are paired with numpy (loaded only then).
BULK_PAIRING = 20_000


def _pair(line: list[int], key: list[int], n_calls: int) -> tuple[list[int], list[list[int]]]:
    """Calls (the first n_calls entries) and returns (the rest), each with its line and
    function key: (for each return the index of the call it answers, or -1, a numpy column
    when there are many; the calls left open, as one list per function, oldest first,
    functions in the order they opened).

    A stack per function, in file order.  A big log's are paired by the C scanner's
    dmesgscan.pair (the same stack, its lines merged from the few sorted runs they come
    in), or with numpy when it is not built (_pair_sorted)."""
    if len(line) <= BULK_PAIRING:
        answered = [-1] * (len(line) - n_calls)
        return answered, _stacks(sorted(range(len(line)), key=line.__getitem__), line, key, n_calls, answered)
    import numpy as np

    from .._native import dmesgscan

    lines, keys = np.asarray(line, dtype=np.int64), np.asarray(key, dtype=np.int64)
    if dmesgscan is None:
        paired, open_calls = _pair_sorted(lines, keys, n_calls)
    else:
        paired, flat, lengths, stacks = dmesgscan.pair(lines, keys, n_calls)
        paired, flat = np.frombuffer(paired, dtype=np.int64), np.frombuffer(flat, dtype=np.int64).tolist()
        ends = np.cumsum(np.frombuffer(lengths, dtype=np.int64)[:stacks]).tolist()
        open_calls = [flat[a:b] for a, b in zip([0, *ends], ends)]
    open_calls.sort(key=lambda stack: line[stack[0]])
    return paired, open_calls


def _pair_sorted(lines, keys, n_calls: int):
    """_pair's numpy path.  Where a function's calls and returns simply alternate (call,
    return, call ...), which is nearly always, the stack pairs each return with the call
    just before it: those are paired at once, sorted by function; the others go through
    the stack."""
    import numpy as np

    n = len(lines)
    # By function, then line: two stable sorts, not np.lexsort (2.7 times as long here): the
    # lines come in a few sorted runs (calls, returns; bulk, then fed), which merge fast,
    # and a few thousand functions fit 16 bits, which numpy sorts by radix.
    by_line = np.argsort(lines, kind="stable")
    by_key = keys[by_line]
    if len(by_key) and 0 <= by_key.min() and by_key.max() < 2**16:
        by_key = by_key.astype(np.uint16)
    order = by_line[np.argsort(by_key, kind="stable")]
    k, r = keys[order], order >= n_calls
    first = np.ones(n, dtype=bool)
    first[1:] = k[1:] != k[:-1]
    last = np.ones(n, dtype=bool)
    last[:-1] = first[1:]
    position = np.arange(n) - np.maximum.accumulate(np.where(first, np.arange(n), 0))
    regular = np.isin(k, k[r != (position % 2 == 1)], invert=True)
    rets = np.flatnonzero(regular & r)
    paired = np.full(n - n_calls, -1, dtype=np.int64)
    paired[order[rets] - n_calls] = order[rets - 1]
    open_calls = [[c] for c in order[np.flatnonzero(regular & last & ~r)].tolist()]
    irregular = order[~regular]
    open_calls += _stacks(irregular[np.argsort(lines[irregular], kind="stable")].tolist(), lines, keys, n_calls,
                          paired)
    return paired, open_calls


def _stacks(in_order: list[int], line, key, n_calls: int, answered) -> list[list[int]]:
    """The stack per function over these calls and returns (in file order): fills
    `answered`, returns the calls left open in the order their functions opened."""
    stacks: dict[int, list[int]] = {}
    for i in in_order:
        if i < n_calls:
            stacks.setdefault(key[i], []).append(i)
            continue
        stack = stacks.get(key[i])
        if stack:
            answered[i - n_calls] = stack.pop()
            if not stack:
                del stacks[key[i]]
    return list(stacks.values())
