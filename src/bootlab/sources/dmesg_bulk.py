"""Reading a big plain dmesg fast: a million lines of initcall_debug in a few seconds.

The per-line path (printk.parse) costs a few microseconds a line.  Most lines of a big
kernel log have the kernel's fixed stamp layout (`[%5lu.%06lu] `), most of those are
`calling` / `initcall ... returned` lines, and most of the rest mean nothing beyond their
time.  So here the stamps are read with numpy and checked for order at once
(Interpreter.stamp_column), the initcall lines of the usual form are read with numpy
from their fixed words and handed to the InitcallReader in bulk (it pairs them at the end,
see initcall.py), and only the remaining lines that can mean something go through the
general interpreter, in file order.  The results are the same as the per-line path's (tests/test_dmesg_bulk.py
compares them).  Logs that do not fit (not ASCII, control characters, other stamp
layouts) are left to the per-line path.  printk.py imports this module only for a log big
enough to be worth it.

The two whole-file passes (the lines and their stamps; what each timed message is) are done
in C by bootlab._native.dmesgscan when it is built (`make build`), in one pass each over
the text instead of a numpy pass per byte position; the numpy path below reads the same
and is used when the extension is not there.
"""

from __future__ import annotations

import re

import numpy as np

from .._native import dmesgscan
from ..timeline import NO_TIME, Boot, Clock, ConsoleLog, SlicedText, SourceInfo, in_range
from .console import (DMESG_DUMP_BEGIN, EARLY_TICKS_NS, MEANINGFUL, MEANINGFUL_STARTS, MEANINGFUL_WORDS,
                      VENDOR_CONTEXT_FORMS, Interpreter, stamp_ns)
from .initcall import NO_RET_CODE, InitcallReader
from .kernel_messages import CLOCK_BEFORE_KERNEL_NS
from .userspace import Patterns

# Only worth its set-up on big logs (printk.py also sends only big files here).
MIN_LINES = 20_000
# Whole-file passes go a few MB at a time: a temporary as big as the file costs more in
# page faults (on a virtual machine especially) than the pass itself.
CHUNK = 1 << 22
_LEADING_NEWLINES = re.compile(rb"\n*")
# A vendor kernel's CPU/task/PID after the stamp (console.VENDOR_CONTEXT): the message does
# not start right after the fixed layout's stamp, so the per-line path reads such a log.
_VENDOR_CONTEXT = re.compile(rf"^(?:<\d+>)?\[[ \d]+\.\d{{6}}\](?:{VENDOR_CONTEXT_FORMS})".encode(), re.M)


def _stamps(arr: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Times in ns of lines in the "[sssss.uuuuuu] " layout; other lines get NO_TIME and
    are read by a regular expression afterwards."""
    n = len(starts)
    t = np.full(n, NO_TIME, dtype=np.int64)
    fits = np.nonzero(ends - starts >= 15)[0]
    s = starts[fits]
    fits = fits[(arr[s] == ord("[")) & (arr[s + 6] == ord(".")) & (arr[s + 13] == ord("]")) & (arr[s + 14] == ord(" "))]
    s = starts[fits]
    whole = np.zeros(len(fits), dtype=np.int64)
    good = np.ones(len(fits), dtype=bool)
    for k in range(1, 6):  # seconds: digits, padded with spaces on the left
        d = arr[s + k].astype(np.int64)
        digit = (d >= 48) & (d <= 57)
        good &= digit | (d == 32)
        whole = whole * 10 + np.where(digit, d - 48, 0)
    micro = np.zeros(len(fits), dtype=np.int64)
    for k in range(7, 13):
        d = arr[s + k].astype(np.int64)
        good &= (d >= 48) & (d <= 57)
        micro = micro * 10 + (d - 48)
    t[fits[good]] = whole[good] * 1_000_000_000 + micro[good] * 1_000
    return t


def _newlines(arr: np.ndarray) -> np.ndarray | None:
    """Offsets of the LF bytes of an ASCII text; None when it holds control characters
    other than tab, LF and a CR before LF (such a log needs the per-line cleaning)."""
    newlines, returns = [], []
    for a in range(0, len(arr), CHUNK):
        chunk = arr[a:a + CHUNK]
        low = np.flatnonzero((chunk < 32) | (chunk == 127))  # nearly all of them LF
        byte = chunk[low]
        lf = byte == 10
        newlines.append(low[lf] + a)
        other = byte[~lf]
        if len(other):
            if ((other != 9) & (other != 13)).any():
                return None
            returns.append(low[~lf][other == 13] + a)
    cr = np.concatenate(returns) if returns else np.zeros(0, dtype=np.int64)
    if len(cr) and (cr[-1] == len(arr) - 1 or (arr[np.minimum(cr + 1, len(arr) - 1)] != 10).any()):
        return None
    return np.concatenate(newlines) if newlines else np.zeros(0, dtype=np.int64)


def parse(boot: Boot, file: str, data: bytes, patterns: Patterns, printk_line: re.Pattern) -> bool:
    """Read a plain dmesg in bulk; False (nothing done) when it does not fit.  Lines out of
    the fixed layout are read with `printk_line`, the per-line path's expression."""
    # One boot of a log of several (multiboot.select) comes after an empty line for each line
    # of the boots before: those are not read (a boot deep in a big file would otherwise
    # cost arrays as long as the whole file); the boot's lines keep their numbers.
    skipped = _LEADING_NEWLINES.match(data).end()
    if skipped:
        data = data[skipped:]
    if _VENDOR_CONTEXT.search(data, 0, 1 << 16):
        return False
    arr = np.frombuffer(data, dtype=np.uint8)
    columns = _lines(data, arr)
    if columns is None:
        return False
    starts, ends, nbytes, t = columns
    if len(starts) + skipped < MIN_LINES:  # (a small boot after many is worth it: its stand-ins are not read)
        return False
    text = data.decode("ascii")
    offsets = starts + 15  # where a message after a fixed-layout stamp starts
    loose = np.flatnonzero(t == NO_TIME)
    if len(loose) > len(t) // 10:
        return False  # another layout (caller id, wide stamps ...): the per-line path reads it
    untimed, restarts = [], []
    for i in loose.tolist():  # other layouts (dmesg -r's <6>[...]) and continuation lines
        line = text[starts[i]:ends[i]]
        m = printk_line.match(line)
        if m is not None and in_range(stamp_ns(m)):
            t[i], offsets[i] = stamp_ns(m), starts[i] + m.end()
        elif line.strip():  # (a stamp out of range is garbage, as on the per-line path)
            untimed.append(i)
            if line.startswith(DMESG_DUMP_BEGIN):
                restarts.append(i)

    interp = Interpreter(boot, file, patterns, ConsoleLog(file, Clock.PRINTK, printed=False))
    before = len(boot.diagnostics)
    _counter_switch(interp, text, t, offsets, ends, skipped + 1)
    switched = len(boot.diagnostics)  # (its note has its line's number already)
    interp.stamp_column(t, restarts)
    stamped, last = boot.diagnostics[switched:], interp.last_printk
    del boot.diagnostics[switched:]
    for diagnostic in stamped:
        diagnostic.line += skipped
    timed = np.flatnonzero(t != NO_TIME)
    hints = [hint for hint, _rank, _p in interp.user.ready] + [hint for hint, _p in interp.user.app_start]
    scanned = None if dmesgscan is None else _Scanned(data, timed, offsets, ends, hints)
    initcall_lines = _initcalls(interp.initcalls, t, skipped + 1, _scanned_initcalls(interp.initcalls, scanned)
                                if scanned else _numpy_initcalls(interp.initcalls, text, arr, t, offsets, ends))
    # Only these lines need Python: those a ready or app-start pattern could match, those
    # without a time, and kernel messages that can mean something beyond their time.
    candidates = _candidates(data, text, starts, ends, t, hints, scanned)
    hinted = np.ones(len(t), dtype=bool)  # the lines a pattern could match
    if candidates is None:
        visit = np.arange(len(t))
    else:
        hinted[:] = False
        hinted[candidates] = True
        if scanned:
            meant = scanned.meaningful & ~initcall_lines
        else:
            others = np.flatnonzero((t != NO_TIME) & ~initcall_lines)
            meant = np.zeros(len(t), dtype=bool)
            meant[others] = _meaningful(text, offsets[others], ends[others])
        meant[untimed] = True
        visit = np.flatnonzero(meant | hinted)  # (not np.union1d: np.unique loads numpy.ma, 0.01 s)
    first_timed = int(timed[0]) if len(timed) else len(t)
    del scanned, timed  # (the scanner's columns are read: freed before the pairing, the read's peak)
    message, meaning, patterns_seen, say = interp.message, interp.meaning, interp.user.patterns_seen, interp.text
    first = skipped + 1  # the first line's number
    for i, ti, off, start, end, initcall_line, hint in zip(
            visit.tolist(), t[visit].tolist(), offsets[visit].tolist(), starts[visit].tolist(), ends[visit].tolist(),
            initcall_lines[visit].tolist(), hinted[visit].tolist()):
        if ti == NO_TIME:
            interp.in_kernel = i > first_timed
            say(None, None, text[start:end], i + first)
        elif initcall_line:
            patterns_seen(Clock.PRINTK, ti, text[off:end], i + first)
        elif hint:
            message(ti, text[off:end], i + first)
        else:  # (no pattern can match it: only what it means)
            meaning(ti, text[off:end], i + first)
    interp.in_kernel, interp.last_printk = first_timed < len(t), last  # as after reading the lines in order
    del offsets, visit, initcall_lines, hinted
    if stamped or switched > before:  # the notes on times, in line order among the others (stamp() first on a line)
        boot.diagnostics[before:] = sorted(stamped + boot.diagnostics[before:], key=lambda d: d.line)
    interp.close()
    boot.logs.append(ConsoleLog.from_columns(file, Clock.PRINTK, False, t, SlicedText(text, starts, ends),
                                             np.arange(first, first + len(starts)), nbytes))
    boot.sources.append(SourceInfo(file, "dmesg", len(starts), 0))
    return True


def _counter_switch(interp: Interpreter, text: str, t: np.ndarray, offsets: np.ndarray, ends: np.ndarray,
                    first: int) -> None:
    """Interpreter.printk_time's reading of a clock that jumped from zero, or from its first
    ticks, to a counter that ran before the kernel (Interpreter.counter_switch, early_jump), on
    the whole column of times (`first`: the first line's number)."""
    late = np.flatnonzero(t > 0)  # (NO_TIME is negative)
    if not len(late):
        return
    k = int(late[0])
    if t[k] >= CLOCK_BEFORE_KERNEL_NS:  # (else no switch: the messages stamped zero need no look)
        for i in np.flatnonzero(t[:k] == 0).tolist():
            interp.zero_stamped(text[offsets[i]:ends[i]], i + first)
    interp.counter_from = interp.counter_switch(int(t[k]), k + first, text[offsets[k]:ends[k]])
    if not interp.counter_from:  # a jump after the first ticks (Interpreter.early_jump)
        after = np.flatnonzero(t > EARLY_TICKS_NS)
        if not len(after):
            return
        j = int(after[0])
        interp.early = max(0, int(t[:j].max())) if j else 0
        interp.counter_from = interp.early_jump(int(t[j]), j + first, text[offsets[j]:ends[j]])
        late = late[late >= j]
    if interp.counter_from:  # (a record printed again from before the jump keeps its stamp)
        late = late[t[late] >= interp.counter_from]
        t[late] -= interp.counter_from


def _lines(data: bytes, arr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """(starts, text ends, bytes taken, printk times or NO_TIME) of every line, the times
    of the "[sssss.uuuuuu] " layout only; None when the text is not ASCII or holds control
    characters (_newlines), or is empty (only the stand-ins of boots before: the per-line
    path reads that)."""
    if not data:
        return None
    if dmesgscan is not None:
        columns = dmesgscan.lines(data)
        return None if columns is None else tuple(np.frombuffer(c, dtype=np.int64) for c in columns)
    if not data.isascii():
        return None
    ends = _newlines(arr)
    if ends is None:
        return None
    nbytes_end = ends + 1
    if len(ends) == 0 or ends[-1] != len(arr) - 1:
        ends = np.append(ends, len(arr))
        nbytes_end = np.append(nbytes_end, len(arr))
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    ends = ends - (arr[np.maximum(ends - 1, 0)] == 13)  # a CRLF log: the CR is not text
    return starts, ends, nbytes_end - starts, _stamps(arr, starts, ends)


class _Scanned:
    """What each timed message is, from dmesgscan.messages: its kind (a `calling` or
    `initcall ... returned` line of the usual form, or meaningful), its function's text
    (an index into `names`, each different text once) and fields.  It also reads a
    `calling` line after a device's prefix ("pci 0000:00:00.0: calling  quirk_x+0x0/0x20
    @ 1") and a PCI fixup's `took` line (its device's text an index into `names` too),
    which the numpy path leaves to the interpreter.  In the same look through each message
    it finds those holding a ready or app-start pattern's hint (`hinted`: their lines;
    None when the hints cannot be looked for in C, see _scannable)."""

    CALL, RETURN, MEANINGFUL, FIXUP, HINTED = 1, 2, 4, 8, 16  # dmesg_scan.h's kinds

    def __init__(self, data: bytes, timed: np.ndarray, offsets: np.ndarray, ends: np.ndarray,
                 hints: list[str | None]):
        words = tuple(w.encode() for w in MEANINGFUL_WORDS)
        starts = tuple(w.encode() for w in MEANINGFUL_STARTS)
        scannable = _scannable(hints, 64 - len(words))
        lines = len(offsets)
        if len(timed) < lines:  # (every line stamped, as nearly always: no copies)
            offsets, ends = offsets[timed], ends[timed]
        kind, fn, a, b, self.names = dmesgscan.messages(data, offsets, ends, words, starts,
                                                        tuple(h.encode() for h in hints) if scannable else ())
        self.timed, self.kind = timed, np.frombuffer(kind, dtype=np.uint8)
        self.fn, self.a, self.b = (np.frombuffer(c, dtype=np.int64) for c in (fn, a, b))
        self.meaningful = np.zeros(lines, dtype=bool)
        self.meaningful[timed] = (self.kind & self.MEANINGFUL) != 0
        self.hinted = timed[(self.kind & self.HINTED) != 0] if scannable else None


def _scanned_initcalls(reader: InitcallReader, scanned: _Scanned):
    """The calls and the returns (lines, functions, fields) that dmesgscan found; a PCI
    fixup is a return with no code and its device."""
    functions = np.asarray(reader.functions_of(scanned.names), dtype=np.int64)
    found = np.flatnonzero(scanned.kind & scanned.CALL)
    yield scanned.timed[found], functions[scanned.fn[found]], [scanned.a[found]]
    found = np.flatnonzero(scanned.kind & (scanned.RETURN | scanned.FIXUP))
    fixup = (scanned.kind[found] & scanned.FIXUP) != 0
    devices = np.full(len(found), None, dtype=object)
    devices[fixup] = [scanned.names[d] for d in scanned.a[found[fixup]].tolist()]
    yield scanned.timed[found], functions[scanned.fn[found]], [np.where(fixup, NO_RET_CODE, scanned.a[found]),
                                                               scanned.b[found], devices]


def _numpy_initcalls(reader: InitcallReader, text: str, arr: np.ndarray, t: np.ndarray, offsets: np.ndarray,
                     ends: np.ndarray):
    """The calls and the returns (lines, functions, fields), read with numpy from their
    fixed words, the function texts split once each."""
    timed = t != NO_TIME
    for words, parse in ((b"calling  ", _calls), (b"initcall ", _returns)):
        lines = np.flatnonzero(timed & (ends - offsets > len(words)) & _is(arr, offsets, words))
        ok, function_end, fields = parse(arr, offsets[lines] + len(words), ends[lines])
        lines, function_end = lines[ok], function_end[ok]
        functions = reader.functions_of([text[a:b] for a, b in zip((offsets[lines] + len(words)).tolist(),
                                                                    function_end.tolist())])
        yield lines, np.asarray(functions, dtype=np.int64), [column[ok] for column in fields]


def _initcalls(reader: InitcallReader, t: np.ndarray, first: int, found_lines) -> np.ndarray:
    """Give the reader every timed line whose whole message is a `calling` or `initcall ...
    returned` line of the usual form (`found_lines`: the calls', then the returns'); returns
    which lines those were.  A line of another form is left to the general path, which
    reads it (or not) with the per-line expressions.  `first` is the first line's number."""
    found = np.zeros(len(t), dtype=bool)
    for (lines, functions, fields), add in zip(found_lines, (reader.calls_found, reader.returns_found)):
        known = functions != -1  # (-1: not a function as the per-line expressions read one)
        if not known.all():
            lines, functions, fields = lines[known], functions[known], [column[known] for column in fields]
        found[lines] = True
        add(lines + first, t[lines], functions, *fields)
    return found


def _calls(arr: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, list]:
    """`FUNCTION @ PID` between start and end: (whether so, where FUNCTION ends, [pid])."""
    pid, digits = _digits_before(arr, end, start, 10)
    at = end - digits - 3
    ok = (digits >= 1) & (digits <= 10) & (at > start) & _is(arr, at, b" @ ")
    ok &= (digits == 1) | (arr[np.maximum(end - digits, 0)] != ord("0"))  # the text is the number
    return ok, at, [pid]


def _returns(arr: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, list]:
    """`FUNCTION returned [RET ]after N usecs|msecs` between start and end: (whether so,
    where FUNCTION ends, [RET or NO_RET_CODE, N in ns])."""
    usecs = _is(arr, end - 5, b"usecs")
    ok = (end - start >= len("x returned after 0 usecs")) & (usecs | _is(arr, end - 5, b"msecs"))
    n, digits = _digits_before(arr, end - 6, start, 10)
    ok &= (digits >= 1) & (digits <= 10) & (arr[np.maximum(end - 6, 0)] == ord(" "))
    after = end - 6 - digits - 7  # " after "
    ok &= _is(arr, after, b" after ")
    plain = _is(arr, after - 9, b" returned")
    ret, ret_digits = _digits_before(arr, after, start, 10)
    minus = (ret_digits >= 1) & (arr[np.maximum(after - ret_digits - 1, 0)] == ord("-"))
    ret_at = after - ret_digits - minus - 10  # " returned "
    with_ret = (ret_digits >= 1) & (ret_digits <= 10) & _is(arr, ret_at, b" returned ")
    ok &= plain | with_ret
    function_end = np.where(plain, after - 9, ret_at)
    ok &= function_end > start
    return ok, function_end, [np.where(plain, NO_RET_CODE, np.where(minus, -ret, ret)),
                              n * np.where(usecs, 1_000, 1_000_000)]


def _is(arr: np.ndarray, at: np.ndarray, word: bytes) -> np.ndarray:
    """Per position, whether `word` is there (positions off the text are not)."""
    out = (at >= 0) & (at + len(word) <= len(arr))
    where = np.flatnonzero(out)
    if not len(where):
        return out  # (and a word longer than the text has no window to look through)
    # Each word's bytes in one gather (a row per position): random reads are what cost.
    rows = np.lib.stride_tricks.sliding_window_view(arr, len(word))[at[where]]
    out[where] = (rows == np.frombuffer(word, dtype=np.uint8)).all(axis=1)
    return out


def _digits_before(arr: np.ndarray, end: np.ndarray, low: np.ndarray, most: int) -> tuple[np.ndarray, np.ndarray]:
    """(value, count) of the decimal digits just before each `end`, none before `low`;
    count is most + 1 when there are more than `most`."""
    value = np.zeros(len(end), dtype=np.int64)
    count = np.zeros(len(end), dtype=np.int64)
    going = np.arange(len(end))
    scale = 1
    for k in range(1, most + 2):  # numbers are short: the lines still in digits soon are few
        at = end[going] - k
        inside = at >= low[going]
        going, at = going[inside], at[inside]
        digit = arr[at] - np.uint8(ord("0"))  # below "0" wraps round to a large value
        more = digit <= 9
        going = going[more]
        if len(going) == 0:
            break
        value[going] += digit[more].astype(np.int64) * scale
        count[going] += 1
        scale *= 10
    return value, count


def _meaningful(text: str, offsets: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which of these kernel messages Interpreter.message() would do anything with, apart
    from the ready and app-start patterns."""
    search, starts = MEANINGFUL.search, MEANINGFUL_STARTS
    return np.fromiter((text.startswith(starts, a, b) or search(text, a, b) is not None
                        for a, b in zip(offsets.tolist(), ends.tolist())), dtype=bool, count=len(offsets))


def _scannable(hints: list[str | None], most: int) -> bool:
    """Whether the C scanner can look for these hints (at most `most` of them, none empty,
    ASCII, within a line's text)."""
    return 0 < len(hints) <= most and all(h and h.isascii() and "\n" not in h and "\r" not in h for h in hints)


def _candidates(data: bytes, text: str, starts: np.ndarray, ends: np.ndarray, t: np.ndarray,
                hints: list[str | None], scanned: _Scanned | None) -> list[int] | None:
    """The lines (sorted) a ready or app-start pattern could match: those holding its hint;
    None when a pattern has none.  Of a timed line, only its message is matched: the scanner
    has looked through those (_Scanned.hinted); the untimed lines are looked through here."""
    if any(h is None for h in hints):
        return None
    if scanned is not None and scanned.hinted is not None:
        untimed = np.flatnonzero(t == NO_TIME)
        masks = dmesgscan.holding(data, starts[untimed], ends[untimed], tuple(h.encode() for h in hints))
        found = untimed[np.frombuffer(masks, dtype=np.uint64) != 0]
        return np.sort(np.concatenate([found, scanned.hinted])).tolist()  # (timed and untimed: no line twice)
    if dmesgscan is not None and _scannable(hints, 64):
        masks = dmesgscan.holding(data, starts, ends, tuple(h.encode() for h in hints))
        return np.flatnonzero(np.frombuffer(masks, dtype=np.uint64)).tolist()
    lines: set[int] = set()
    for hint in hints:
        at = text.find(hint)
        while at >= 0:
            lines.add(int(np.searchsorted(starts, at, side="right")) - 1)
            at = text.find(hint, at + 1)
    return sorted(lines)
