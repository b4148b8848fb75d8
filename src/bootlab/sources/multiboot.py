"""Logs that hold several boots: a syslog or kern.log kept across reboots, a console
captured over many power cycles, journalctl without -b.

A boot starts with its kernel's first message (`Linux version ...` at printk time zero, or
without a printk time), or earlier, at the firmware or bootloader banner that led to it
after the previous boot's last kernel message; journalctl marks boots itself (`-- Boot
5d9a... --`).  The kernel log printed again on the reference device's console (after
ready) is not a new boot.  One boot is read, the last unless asked for another, with its
lines keeping their numbers in the file: the lines before it are read as empty ones.
"""

from __future__ import annotations

import mmap
import os
import re
from dataclasses import dataclass

from .._native import dmesgscan
from ..timeline import Boot, Clock, Event, Kind, Mark
from .console import DMESG_DUMP_BEGIN, DMESG_DUMP_END, JIFFIES_STARTS
from .kernel_messages import BOOT_CONSOLE_DISABLED
from .lines import seconds_to_ns

_BANNER = b"Linux version "
# What may come before the banner on its line: a printk stamp, which must be zero (the
# log repeated is not a new boot), after anything (boot-stub output and terminal resets
# share the line on a console); or, without one, each part optional: grabserial's host
# time, dmesg -r's level, dmesg -x's facility, a syslog or journal prefix, dmesg's ISO time.
_STAMPED = re.compile(rb"\[\s*(?P<printk>\d+\.\d+)\](?:\[\s*[TC]\d+\]|\[\d{1,3}\])? ?$")  # (AVM's CPU: console)
_UNSTAMPED = re.compile(rb"""(?:\[(?:\d{4}-\d\d-\d\d[ T])?[\d:]+\.\d+(?:\ -?\d+\.\d+)?\]\ ?)?
    (?:<\d+>)?
    (?:[a-z]+\s*:[a-z]+\s*:\ )?
    (?:\[\s*(?P<journal>\d+\.\d+)\]\ \S+\ kernel:\ |\S.*?\ kernel:\ )?
    (?:\d{4}-\d\d-\d\dT[\d:]+,\d+[+-]\d\d:?\d\d\ )?$""", re.X)
# A banner's line holds at most terminal resets, boot-stub output and prefixes before it.
_LONGEST_PREFIX = 256
# The first words of firmware and bootloaders (after terminal resets, on a console).
LOADER = re.compile(rb"U-Boot SPL |U-Boot \d{4}\.|SeaBIOS \(version|qboot|NOTICE:\s+BL[12]|BootROM|Booting from ROM"
                    rb"|Welcome to GRUB|GNU GRUB|barebox \d{4}\.|I> MB1 \(version"
                    rb"|coreboot-\S+ [^\n]*(?:\b(?:bootblock|verstage|romstage) | \d{4} )starting"
                    rb"|SLOF(?:(?:\x1b|\\x1b)\[[0-9;?]*[A-Za-z])*\s+\*{10}")
_PRINTK_STAMP = re.compile(rb"\[\s*(?P<t>\d+\.\d{6,9})\]")
_ZERO_STAMP = re.compile(rb"\[\s*0\.0{6,9}\]")
# The last words of a kernel, a firmware or a bootloader as it restarts the board (or the
# kernel as it powers it off): a loader's banner after them, or a kernel's first message where
# no loader prints (QEMU loading the kernel itself), starts the next boot, whose kernel may
# print no banner (`quiet`).  The kernel's `reboot: ` is printk-stamped; UEFI's (a Jetson's
# after an ASSERT) and U-Boot's `reset` command's stand alone on their line.
_RESTARTS = ((b"] reboot: ", (b"Restarting system", b"Power down")),
             (b"\nRebooting system", (b" ...",)), (b"\nresetting", (b" ...",)))
_RESTART_WINDOW = 1 << 16  # bytes after the restart in which the next boot speaks
_BOOT_CONSOLE_GONE = re.compile(rb"\] " + BOOT_CONSOLE_DISABLED.encode())
_JOURNAL_BOOT = re.compile(rb"-- (?:Boot [0-9a-f]{32}|Reboot) --")
_POWER_ON = re.compile(rb"(?m)^-?\d+\.\d{9} ! power-on$")  # bootlab capture's power switch
# A line of a boot's own: not journalctl's boot line, a capture's header or its events (the
# host clock's zero record before the first power-on is no boot of its own).
_CONTENT = re.compile(rb"(?m)^(?!-- |#bootlab-capture |-?\d+\.\d{9} ! )[ \t]*\S")
_WINDOW = 1 << 14  # bytes of lines looked through at a time, backwards from a banner
_STAMP_INSIDE = b" \t\n\r\f\v0123456789."  # what a printk stamp holds between its brackets
_DUMP_BEGIN = DMESG_DUMP_BEGIN.encode()
_DUMP_END = DMESG_DUMP_END.encode()


@dataclass
class Part:
    """One boot's bytes, with the file's lines before it read as empty ones."""

    data: bytes
    first_line: int  # the boot's first line number in the file
    index: int  # which one this is (1-based)
    starts: list[int]  # each boot's first line number
    lines: int  # the boot's own lines
    reset: str = ""  # the next boot's first line, when a reset began it (_resets): this one ended there
    last_said: int = 0  # the boot's last line with anything on it


def _zero(stamp: bytes | None) -> bool:
    """No stamp, or the printk clock's first value (zero; a 2.6 kernel's INITIAL_JIFFIES)."""
    return stamp is None or not stamp.replace(b".", b"").strip(b"0") or \
        seconds_to_ns(stamp.decode("ascii")) in JIFFIES_STARTS


def _find(data: bytes | mmap.mmap, needle: bytes, start: int = 0, end: int | None = None) -> int:
    """data.find(needle, start, end), by the C scanner when it is built (glibc's memmem,
    three times as fast as bytes.find: the banners of a million-line log 0.024 s to 0.008 s)."""
    end = len(data) if end is None else end
    return data.find(needle, start, end) if dmesgscan is None else dmesgscan.find(data, needle, start, end)


def _banners(data: bytes) -> list[int]:
    """Byte offsets of the lines that hold a boot's kernel banner."""
    found = []
    at = _find(data, _BANNER)
    while at >= 0:
        # Its line's start, looked for no further back than a banner's prefix can be long
        # (a long line is not a banner's, and looking all the way back would be slow).
        lo = max(0, at - _LONGEST_PREFIX - 1)
        start = data.rfind(b"\n", lo, at) + 1
        if start == 0 and lo > 0:
            at = _find(data, _BANNER, at + 1)
            continue
        stamped = _STAMPED.search(data, start, at)
        if stamped is not None:
            banner = _zero(stamped.group("printk"))
        else:
            unstamped = _UNSTAMPED.match(data, start, at)
            banner = unstamped is not None and _zero(unstamped.group("journal"))
        if banner and not _typed(data, start):
            found.append(start)
        _release(data, lo)
        at = _find(data, _BANNER, at + 1)
    dumps = [(at, data.find(_DUMP_END, at)) for at in _find_all(data, _DUMP_BEGIN)] if found else []
    if dumps:  # banners of the log printed again are not boots
        found = [b for b in found if not any(lo < b and (hi < 0 or b < hi) for lo, hi in dumps)]
    boots = found[:1]
    for previous, banner in zip(found, found[1:]):
        if not (_printed_again(data, previous, banner) or _logged_again(data, previous, banner)):
            boots.append(banner)
        _release(data, previous)
    return boots


_SYSLOG_KERNEL = b" kernel: "  # what a syslog or journal line of the kernel's holds before its text


def _logged_again(data: bytes, previous: int, banner: int) -> bool:
    """Whether the banner line at `banner` is the boot's kernel log written again by a logging
    daemon: busybox's klogd and syslogd on a Buildroot board's console print every kernel
    message since time zero, `Jan  1 00:00:03 buildroot kern.notice kernel: [    0.000000] Linux
    version ...`, after the kernel printed them bare there.  A syslog-prefixed banner of the
    same kernel release after a bare one; a kern.log's boots are all prefixed."""
    def line(at: int) -> tuple[bool, bytes]:
        head = data[at:data.find(_BANNER, at) + len(_BANNER) + 64]
        release = head[head.find(_BANNER) + len(_BANNER):].split(b" ", 1)[0]
        return _SYSLOG_KERNEL in head[:head.find(_BANNER)], release
    (was_logged, was), (logged, release) = line(previous), line(banner)
    return logged and not was_logged and release == was


# A shell command that prints the banner again (`cat /proc/version`, `uname -a`, `dmesg`;
# U-Boot's `version` its own) typed at a prompt, a few lines up at most (dmesg's first lines
# come before its banner).
_COMMAND = re.compile(rb"[#$>] *(?:sudo +)?(?:cat +/proc/version|uname|dmesg|version)\b")
_COMMAND_LINES = 3


def _typed(data: bytes, start: int) -> bool:
    """Whether the banner line at `start` is a shell command's output after boot (a Yocto
    console's `root@qemuarm64:~# cat /proc/version` was read as a second boot)."""
    lo = start
    for _ in range(_COMMAND_LINES):
        if lo <= 0:
            return False
        lo = data.rfind(b"\n", 0, lo - 1) + 1
        if _COMMAND.search(data, lo, start):
            return True
    return False


# A console prints the kernel's log again within the boot's first seconds: a first pass this
# long is looked at, no longer.
_REPLAY_MAX = 1 << 20


def _printed_again(data: bytes, previous: int, banner: int) -> bool:
    """Whether the banner at `banner` starts the same boot's log printed again: a serial
    console that registers after the boot console went prints every message logged so far
    (a Kria KV260's ttyPS1 at 4.9 s, its earlycon gone at 0.016 s).  The boot console's last
    line is its "bootconsole [cdns0] disabled", and what it printed from the banner on comes
    again byte for byte (the same kernel booted again is no copy of it: its stamps differ)."""
    end, _ = _last_boot_stamps(data, previous, banner)
    if end is None or end - previous > _REPLAY_MAX:
        return False
    end = data.find(b"\n", end, banner)
    if end < 0 or _BOOT_CONSOLE_GONE.search(data, data.rfind(b"\n", previous, end) + 1, end) is None:
        return False  # (looked at before the boot's bytes are: a log of thousands of boots)
    first = data[previous:end + 1]
    return data[banner:banner + len(first)] == first


def _boot_start(data: bytes, previous: int, banner: int, booted: bool) -> int | None:
    """Where the boot whose banner line starts at `banner` begins: at its first firmware
    or bootloader line, or its first message at printk time zero (arm64 says "Booting
    Linux on physical CPU" first), after the last message of the boot before.  `previous`
    is the mark before: another boot's banner (`booted`), or a boot's start (the file's,
    a power-on): then None when no kernel message since is of another boot."""
    after, first_zero = _last_boot_stamps(data, previous, banner)
    if after is None and not booted:
        return None
    loader = LOADER.search(data, previous if after is None else after, banner)
    begin = min(x for x in (loader.start() if loader else None, first_zero, banner) if x is not None)
    return data.rfind(b"\n", 0, begin) + 1


def _last_boot_stamps(data: bytes, previous: int, banner: int) -> tuple[int | None, int | None]:
    """(the end of the last printk stamp not at time zero between previous and banner, the
    start of the first stamp at zero after it): looked for backwards from the banner, a
    window of lines at a time, so that a boot of a million lines is not walked through."""
    hi, first_zero = banner, None
    while hi > previous:
        lo = max(previous, data.rfind(b"\n", previous, max(previous, hi - _WINDOW)) + 1)
        opening = data.rfind(b"[", previous, lo)
        if opening >= 0 and not data[opening + 1:lo].strip(_STAMP_INSIDE):
            lo = opening  # a stamp split by the line's end (`[` then a newline) starts the window
        for m in reversed(list(_PRINTK_STAMP.finditer(data, lo, hi))):
            if not _zero(m.group("t")):
                return m.end(), first_zero
            first_zero = m.start()
        hi = lo
    return None, first_zero


def _journal_boots(data: bytes) -> list[int]:
    """Offsets of journalctl's lines between boots."""
    found = []
    for word in (b"-- Boot ", b"-- Reboot --"):
        lines = [0] if data[:len(word)] == word else []
        at = data.find(b"\n" + word)
        while at >= 0:
            lines.append(at + 1)
            at = data.find(b"\n" + word, at + 1)
        found += [line for line in lines if _JOURNAL_BOOT.match(data, line)]
    return found


def starts(data: bytes, fmt: str = "dmesg") -> list[int]:
    """Byte offsets where each boot begins (the first at 0)."""
    return _starts(data, fmt)[0]


def _starts(data: bytes | mmap.mmap, fmt: str) -> tuple[list[int], set[int]]:
    """starts(), and of them those where the loader's banner came again (_resets)."""
    looped: set[int] = set()
    if fmt in ("journal", "journal-short"):  # journalctl's output, which marks boots itself
        hard = _journal_boots(data)
    else:
        hard = [m.start() for m in _POWER_ON.finditer(data)] if fmt == "bootlab-capture" else []
        looped = set(_resets(data))
        hard += _restarts(data) + list(looped)
    marks = sorted(set(hard) | set(_banners(data)))
    out = [0]
    for k, mark in enumerate(marks):
        booted = k > 0 and marks[k - 1] not in hard
        begin = mark if mark in hard else _boot_start(data, marks[k - 1] if k else 0, mark, booted)
        if begin is not None and _CONTENT.search(data, out[-1], begin):  # else nothing before is another boot's
            out.append(begin)
        _release(data, out[-1])
    return out, looped


def resets(data: bytes | mmap.mmap) -> list[int]:
    """Offsets of the lines where a boot begins because the board was reset or restarted
    (not a power-on, not a kernel's banner: a kernel kexec'd by a Linux bootloader, petitboot's
    or LinuxBoot's, is the same boot)."""
    return sorted(set(_restarts(data) + _resets(data)))


def _restarts(data: bytes | mmap.mmap) -> list[int]:
    """Offsets of the lines that begin a boot after a restart, its loader's or its kernel's
    first (a console that begins with the boot before's last lines, a BeagleBone AI-64's
    `reboot: Restarting system`, a Jetson's `Rebooting system ...`)."""
    found = []
    for needle, words in _RESTARTS:
        for at in _find_all(data, needle):  # (by the C scanner, as the banners: a log of a million lines)
            end = at + len(needle)
            if data[end:end + 17].startswith(words):
                begun = [m.start() for m in (LOADER.search(data, end, end + _RESTART_WINDOW),
                                             _ZERO_STAMP.search(data, end, end + _RESTART_WINDOW)) if m]
                if begun:
                    found.append(data.rfind(b"\n", 0, min(begun)) + 1)
    return found


# What may come before a loader's banner on its line: a capture's time and direction, terminal
# resets (raw, or escaped as a capture writes them), a host's or the loader's own stamp
# (grabserial's `[1.270 1.270] `, MB1's `[0000.062] `).
_LOADER_PREFIX = re.compile(rb"""(?:-?\d+\.\d{9}\ \|\ )?
    (?:(?:\x1b|\\x1b)(?:\[[0-9;?]*[A-Za-z]|c)|\\r|\[[\d.:\ ]+\]\ ?|[\x00-\x1f\ ])*""", re.X)
_FIRST_LOADER_WITHIN = 1 << 22  # bytes looked through for the loader that began the first boot
# SeaBIOS run by coreboot prints its version twice, two lines apart: not reset (other loaders
# can be, as fast: a U-Boot SPL that resets after its three lines).
_SAID_AGAIN = b"SeaBIOS (version"
_SAID_AGAIN_LINES = 3


def _resets(data: bytes | mmap.mmap) -> list[int]:
    """Offsets of the lines where the loader that began the log's first boot speaks again
    with the same banner: the board was reset before ready and boots anew (an i.MX6 board's
    watchdog looping through U-Boot SPL three times, its kernel dead before its first
    message; a Jetson's MB1 after a firmware ASSERT), a boot of its own however far the
    one before got."""
    first = LOADER.search(data, 0, min(len(data), _FIRST_LOADER_WITHIN))
    if first is None:
        return []
    end = data.find(b"\n", first.start())
    banner = data[first.start():end if end >= 0 else len(data)].rstrip(b"\r")
    found = []
    last = first.start()
    for at in _find_all(data, banner):
        start = data.rfind(b"\n", 0, at) + 1
        after = data[at + len(banner):at + len(banner) + 2]
        if at > first.start() and _LOADER_PREFIX.fullmatch(data, start, at) and after[:1] in (b"", b"\r", b"\n") \
                and not _typed(data, start) \
                and not (banner.startswith(_SAID_AGAIN) and not _more_lines(data, last, start, _SAID_AGAIN_LINES)):
            found.append(start)
        last = at
    return found


def _more_lines(data: bytes | mmap.mmap, lo: int, hi: int, most: int) -> bool:
    """Whether data[lo:hi] holds more than `most` line ends (a mapped file has no count())."""
    for _ in range(most + 1):
        lo = data.find(b"\n", lo, hi)
        if lo < 0:
            return False
        lo += 1
    return True


_RELEASE_STEP = 1 << 24


def _release(data: bytes | mmap.mmap, upto: int) -> None:
    """Give back the pages of a mapped file before `upto`, once looked through: they count
    in the process's memory while mapped, and a scan of a capture of thousands of boots
    would otherwise hold the whole file (the page cache keeps them; a look back refaults)."""
    if isinstance(data, mmap.mmap) and upto >= _RELEASE_STEP:
        end = upto - upto % _RELEASE_STEP
        data.madvise(mmap.MADV_DONTNEED, 0, end)


def _find_all(data: bytes | mmap.mmap, needle: bytes) -> list[int]:
    """Where needle occurs, looked for a window at a time (a window's pages given back)."""
    found = []
    for at in range(0, len(data), _RELEASE_STEP):
        hit = _find(data, needle, at, at + _RELEASE_STEP + len(needle) - 1)
        while hit >= 0:
            found.append(hit)
            hit = _find(data, needle, hit + 1, at + _RELEASE_STEP + len(needle) - 1)
        _release(data, at + _RELEASE_STEP)
    return found


def _count_lines(data: bytes | mmap.mmap, lo: int, hi: int) -> int:
    """Newlines between lo and hi, a window at a time (an mmap has no count())."""
    n = 0
    for at in range(lo, hi, _RELEASE_STEP):
        n += data[at:min(hi, at + _RELEASE_STEP)].count(b"\n")
        _release(data, at + _RELEASE_STEP)
    return n


def _copy(data: bytes | mmap.mmap) -> bytes:
    """The whole of a log of one boot, as bytes: a mapped file copied a window at a time,
    each window's pages given back, so the file is held once."""
    if not isinstance(data, mmap.mmap):
        return data
    pieces = []
    for at in range(0, len(data), _RELEASE_STEP):
        pieces.append(data[at:at + _RELEASE_STEP])
        _release(data, at + _RELEASE_STEP)
    return b"".join(pieces)


BIG_FILE = 1 << 26  # from this size a log of several boots is mapped, not read whole


def map_file(path: str) -> mmap.mmap | None:
    """A big uncompressed regular file mapped read-only (None otherwise): only the boot
    asked for is then copied out of it."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) < BIG_FILE:  # (a FIFO is not opened twice)
            return None
        with open(path, "rb") as fh:
            if fh.read(2) == b"\x1f\x8b":
                return None
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None  # read as before, which names the error


class NoSuchBoot(ValueError):
    """A boot asked for (--boot N) that the log does not hold."""


def choose(n: int, which: int | None) -> int:
    """Which of n boots (1-based) `which` names: 1-based, negative from the end, None for
    the last; NoSuchBoot when there is no such boot."""
    k = n if which is None else which if which > 0 else n + 1 + which
    if not 1 <= k <= n:
        raise NoSuchBoot(f"boot {which} asked for, but the log holds {n} boot{'s' if n > 1 else ''}")
    return k


SHOWN = 12  # boots whose first lines a warning lists
# A boot the board was reset in before its userspace started (read from a log of several:
# the next boot began with the loader's banner again): a failure (analysis/phases.py).
RESET = "board.reset"


def say_which(boot: Boot, file: str, starts: list[int], k: int, name: str = "") -> None:
    """Warn that a log of several boots was read for one of them (k, 1-based)."""
    if len(starts) > 1:
        last = ", the last" if k == len(starts) else ""
        lines = ", ".join(map(str, starts[:SHOWN])) + (f" ... {starts[-1]}" if len(starts) > SHOWN else "")
        boot.warn(file, starts[k - 1], f"the log holds {len(starts)} boots (first lines {lines}): "
                                       f"reading boot {k}{last}{f' ({name})' if name else ''}; choose one with --boot N")


def say_reset(boot: Boot, file: str, part: Part) -> None:
    """A boot the loader's banner again ended (part.reset) before its userspace started
    failed there: marked at its last line, which is all it printed (RESET)."""
    if part.reset and not boot.marks(Mark.USERSPACE_START):
        boot.add(Event(Kind.MARKER, RESET, Clock.HOST, None, None, file, part.last_said,
                       attrs={"reason": f"its next boot began at {part.reset}"}))


def select(data: bytes | mmap.mmap, which: int | None, fmt: str = "dmesg") -> Part:
    """The boot `which` (1-based; negative counts from the end; None: the last); of a
    mapped file, only that boot's bytes are copied."""
    offsets, looped = _starts(data, fmt)
    lines, position, numbers = 1, 0, []
    for offset in offsets:
        lines += _count_lines(data, position, offset)
        position = offset
        numbers.append(lines)
    n = len(offsets)
    k = choose(n, which)
    if n == 1:
        return Part(_copy(data), 1, 1, numbers, lines)
    end = offsets[k] if k < n else len(data)
    own = data[offsets[k - 1]:end]
    before = b"\n" * (numbers[k - 1] - 1)
    if fmt == "bootlab-capture" and k > 1:  # its header line stays: it says what the records are
        header = data[:data.find(b"\n") + 1]
        before = header + before[1:]
    reset = ""
    if k < n and end in looped:
        line = data[end:data.find(b"\n", end)]
        banner = LOADER.search(line)
        said = line[banner.start() if banner else 0:].decode("utf-8", "replace").strip()
        reset = f"line {numbers[k]}: {said[:80]}"
    return Part(before + own, numbers[k - 1], k, numbers, own.count(b"\n"), reset,
                numbers[k - 1] + own.rstrip().count(b"\n"))
