"""bootchart / bootchart2 logs: a directory or a `bootchart.tgz` holding

    header               key = value (title, uname, release, cpu, kernel options)
    proc_stat.log        samples of /proc/stat, each after a line with the uptime in 1/100 s
    proc_diskstats.log   samples of /proc/diskstats
    proc_ps.log          samples of /proc/PID/stat for every process

Sample times are the kernel's uptime, so they sit on the printk clock.  Each process
becomes a span from its start time (field 22 of its stat line, in clock ticks) to the last
sample it was seen in; CPU and disk samples become utilisation series.  Userspace starts
when PID 1 does.  Long-lived kernel threads (kthreadd and its children, or a process that
never had an address space, alive to the last sample for most of the chart) are left out,
as pybootchartgui leaves them out: they are most of the list and none of the boot.

The header's `system.uname` is `uname -a` (`Linux 2.6.27-10-generic #1 SMP ...`), or on
Android /proc/version (`Linux version 2.6.29-00479-g3c7df37 (...) ...`).
"""

from __future__ import annotations

import io
import os
import re
import tarfile
import zlib

from ..timeline import Boot, Clock, Event, Kind, Mark, SourceInfo
from .lines import split

FORMAT = "bootchart"
FILES = ("header", "proc_stat.log", "proc_diskstats.log", "proc_ps.log")
TICK_NS = 10_000_000  # bootchart samples and USER_HZ clock ticks are 1/100 s
UNAME = re.compile(r"^\S+ (?:version )?(?P<release>\S+)")
KTHREADD = 2  # the parent of every kernel thread since 2.6.22
LONG_LIVED = 0.9  # of the chart's time: pybootchartgui's measure of a background process


def is_bootchart_dir(path: str) -> bool:
    return os.path.isdir(path) and os.path.exists(os.path.join(path, "header")) and any(
        os.path.exists(os.path.join(path, name)) for name in FILES[1:]
    )


# What a truncated or corrupt .tgz raises on the way through gzip and tar.
DAMAGED = (tarfile.TarError, OSError, EOFError, zlib.error)


def is_bootchart_tar(data: bytes) -> bool:
    if not data.startswith(b"\x1f\x8b"):
        return False
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            return any(os.path.basename(m.name) in FILES for m in tar.getmembers())
    except DAMAGED:
        return False


def load(path: str, data: bytes | None, boot: Boot) -> dict[str, bytes]:
    """The member files, from a directory or a .tgz (of a damaged one, those read before
    the damage, with a warning)."""
    files: dict[str, bytes] = {}
    if data is None:
        for name in FILES:
            full = os.path.join(path, name)
            if os.path.exists(full):
                with open(full, "rb") as fh:
                    files[name] = fh.read()
        return files
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for member in tar.getmembers():
                name = os.path.basename(member.name)
                if name in FILES and member.isfile():
                    extracted = tar.extractfile(member)
                    if extracted is not None:
                        files[name] = extracted.read()
    except DAMAGED as err:
        boot.warn(path, 0, f"the archive is damaged ({err or 'truncated'}): read {len(files)} of its files")
    return files


def _samples(boot: Boot, file: str, data: bytes):
    """Yield (lineno, t_ns, [lines]) per sample block."""
    t = None
    block: list[tuple[int, str]] = []
    start = 0
    for line in split(data):
        text = line.text.strip()
        if not text:
            if t is not None:
                yield start, t, block
            t, block = None, []
            continue
        if t is None:
            if text.isascii() and text.isdigit():
                t, start = int(text) * TICK_NS, line.lineno
            else:
                boot.warn(file, line.lineno, "expected a sample time (uptime in 1/100 s)")
            continue
        block.append((line.lineno, text))
    if t is not None:
        yield start, t, block


def _header(boot: Boot, file: str, data: bytes) -> None:
    for line in split(data):
        key, sep, value = line.text.partition("=")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key == "system.kernel.options":
            boot.meta.setdefault("cmdline", value)
        elif key == "system.uname":
            m = UNAME.match(value)
            boot.meta.setdefault("kernel_version", m.group("release") if m else value)
        elif key in ("title", "system.release", "system.cpu"):
            boot.meta.setdefault(f"bootchart_{key.split('.')[-1]}", value)


def _cpu(boot: Boot, file: str, data: bytes) -> None:
    previous = None
    series = boot.series.setdefault("cpu busy %", (Clock.PRINTK, []))[1]
    io_series = boot.series.setdefault("cpu iowait %", (Clock.PRINTK, []))[1]
    for lineno, t, block in _samples(boot, file, data):
        cpu = next((text for _, text in block if text.startswith("cpu ")), None)
        if cpu is None:
            boot.warn(file, lineno, "sample without a cpu line")
            continue
        try:
            fields = [int(x) for x in cpu.split()[1:]]
        except ValueError:
            boot.warn(file, lineno, "unreadable cpu line")
            continue
        fields += [0] * (8 - len(fields))
        user, nice, system, idle, iowait = fields[:5]
        if previous is not None:
            d = [a - b for a, b in zip((user + nice, system, idle, iowait), previous)]
            total = sum(d) or 1
            series.append((t, 100.0 * (d[0] + d[1]) / total))
            io_series.append((t, 100.0 * d[3] / total))
        previous = (user + nice, system, idle, iowait)


def _disk(boot: Boot, file: str, data: bytes) -> None:
    previous: tuple[int, int, int] | None = None
    read = boot.series.setdefault("disk read KiB/s", (Clock.PRINTK, []))[1]
    write = boot.series.setdefault("disk write KiB/s", (Clock.PRINTK, []))[1]
    for _lineno, t, block in _samples(boot, file, data):
        sectors_read = sectors_written = 0
        for _, text in block:
            parts = text.split()
            if len(parts) < 10 or parts[2].startswith(("ram", "loop")):
                continue
            if parts[2][-1].isdigit() and not parts[2].startswith(("mmcblk", "nvme", "md", "dm-")):
                continue  # a partition: its whole disk is counted already
            try:
                sectors_read += int(parts[5])
                sectors_written += int(parts[9])
            except ValueError:
                continue
        if previous is not None and t > previous[0]:
            dt = (t - previous[0]) / 1e9
            read.append((t, (sectors_read - previous[1]) * 0.5 / dt))
            write.append((t, (sectors_written - previous[2]) * 0.5 / dt))
        previous = (t, sectors_read, sectors_written)


def _processes(boot: Boot, file: str, data: bytes) -> int:
    procs: dict[int, dict] = {}
    first_sample = last_sample = None
    for _lineno, t, block in _samples(boot, file, data):
        first_sample = t if first_sample is None else first_sample
        last_sample = t
        for lineno, text in block:
            # pid (comm with spaces) state ppid ... : comm is the text in the outer parentheses
            open_, close = text.find("("), text.rfind(")")
            if open_ < 0 or close < open_:
                boot.warn(file, lineno, "unreadable process line")
                continue
            try:
                pid = int(text[:open_])
                rest = text[close + 2:].split()
                ppid = int(rest[1])
                cpu_ticks = int(rest[11]) + int(rest[12])
                start = int(rest[19]) * TICK_NS
                vsize = int(rest[20]) if len(rest) > 20 else 0
            except (ValueError, IndexError):
                boot.warn(file, lineno, "unreadable process line")
                continue
            proc = procs.get(pid)
            if proc is None or proc["start"] != start:
                procs[pid] = proc = {"comm": text[open_ + 1:close], "ppid": ppid, "start": start, "line": lineno,
                                     "last": t, "cpu": cpu_ticks, "memory": False}
            proc["last"] = t
            proc["cpu"] = cpu_ticks
            proc["comm"] = text[open_ + 1:close]  # exec changes the name
            proc["memory"] |= vsize > 0
    hidden = 0
    for pid, proc in procs.items():
        if long_lived_kernel_thread(pid, proc, first_sample, last_sample):
            hidden += 1
            continue
        boot.add(Event(Kind.PROCESS, proc["comm"], Clock.PRINTK, proc["start"], max(0, proc["last"] - proc["start"]),
                       file, proc["line"], f"pid {pid}", attrs={"pid": pid, "ppid": proc["ppid"],
                                                                "cpu_ms": proc["cpu"] * TICK_NS // 1_000_000}))
    if 1 in procs:
        boot.add(Event(Kind.MARKER, Mark.USERSPACE_START, Clock.PRINTK, procs[1]["start"], None, file,
                       procs[1]["line"], attrs={"text": f"PID 1 ({procs[1]['comm']}) starts"}))
    if hidden:
        boot.warn(file, 1, f"{hidden} long-lived kernel threads (alive to the end, for most of the chart) "
                           "are left out, as pybootchartgui leaves them out")
    return len(procs) - hidden


def long_lived_kernel_thread(pid: int, proc: dict, first_sample: int, last_sample: int) -> bool:
    kernel = pid == KTHREADD or proc["ppid"] == KTHREADD or (pid != 1 and not proc["memory"])
    chart = last_sample - first_sample
    return kernel and proc["last"] >= last_sample and proc["last"] - proc["start"] >= LONG_LIVED * chart


def parse(boot: Boot, path: str, data: bytes | None) -> None:
    files = load(path, data, boot)
    if not files:
        boot.warn(path, 0, "no bootchart files found")
    if "header" in files:
        _header(boot, f"{path}/header", files["header"])
    if "proc_stat.log" in files:
        _cpu(boot, f"{path}/proc_stat.log", files["proc_stat.log"])
    if "proc_diskstats.log" in files:
        _disk(boot, f"{path}/proc_diskstats.log", files["proc_diskstats.log"])
    count = _processes(boot, f"{path}/proc_ps.log", files["proc_ps.log"]) if "proc_ps.log" in files else 0
    boot.sources.append(SourceInfo(path, FORMAT, sum(f.count(b"\n") for f in files.values()), count))
