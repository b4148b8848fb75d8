#!/usr/bin/env python3
"""bootlab analyze on a million-line kernel log, side by side with the kernel's own
scripts/bootgraph.pl (from Debian's linux-source-6.1) on the same file.

The log is real: the initcall_debug dmesg of a reference-device boot
(tests/data/real/generic-initcall.dmesg.gz) repeated with its timestamps shifted until
it has 1,000,000 lines.  Each tool runs N times; the table gives the median wall time and
the peak memory (maximum resident set size).

The same log is also drawn (SVG, HTML with the advice) and advised.  Two more rows
measure the floor under any Python reader: Python's own regular expressions (and perl's,
for scale) doing nothing but finding the `calling` and `initcall ... returned` lines and
taking their fields, with no pairing, no other message, no analysis and no output.

bootlab's modules are compiled to bytecode first, as an installed package's are: with
PYTHONDONTWRITEBYTECODE set (as in some shells and CI jobs), a source tree's modules would
be compiled again in every run, 0.08 s of CPU that no installed bootlab spends.

Last, a capture of many boots (the same real boot over and over, each copy a boot of its
own, to --boots-lines lines): reading its first boot and its last one (--boot 1, and the
default), whose peak memory says whether it is bounded by the boot read or by the file.

    .venv/bin/python bench/analyze_scale.py [--lines 1000000] [--boots-lines 10000000] [--runs 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "data" / "real" / "generic-initcall.dmesg.gz"
STAMP = re.compile(rb"^\[\s*(\d+)\.(\d{6})\]")


def build_log(path: Path, lines: int) -> int:
    base = gzip.decompress(SOURCE.read_bytes()).splitlines()
    span = 0
    for line in base:
        m = STAMP.match(line)
        if m:
            span = max(span, int(m.group(1)) * 1_000_000 + int(m.group(2)))
    span += 1_000_000
    written = 0
    with path.open("wb") as out:
        shift = 0
        while written < lines:
            for line in base:
                if written == lines:
                    break
                m = STAMP.match(line)
                if m:
                    t = int(m.group(1)) * 1_000_000 + int(m.group(2)) + shift
                    line = b"[%5d.%06d]" % divmod(t, 1_000_000) + line[m.end():]
                out.write(line + b"\n")
                written += 1
            shift += span
    return written


def build_boots(path: Path, lines: int) -> tuple[int, int]:
    """The real boot again and again, unshifted: each copy is a boot (its banner at time
    zero); returns (boots, lines)."""
    base = gzip.decompress(SOURCE.read_bytes())
    per_boot = base.count(b"\n")
    with path.open("wb") as out:
        for _ in range(lines // per_boot):
            out.write(base)
    return lines // per_boot, lines // per_boot * per_boot


# Finding the initcall lines and their fields, nothing else: a floor under any reader.
CALLING = r"^\[\s*(\d+)\.(\d+)\] calling  (\S+) @ (\d+)$"
RETURNED = r"^\[\s*(\d+)\.(\d+)\] initcall (\S+(?: \[\S+\])?) returned (-?\d+) after (\d+) usecs$"
FLOOR_PYTHON = ("import re, sys\n"
                "data = sys.stdin.buffer.read()\n"
                f"calls = re.findall({CALLING!r}.encode(), data, re.M)\n"
                f"returns = re.findall({RETURNED!r}.encode(), data, re.M)\n"
                "print(len(calls), len(returns))\n")
FLOOR_PERL = f"$c++ if /{CALLING}/; $r++ if /{RETURNED}/; END {{ print \"$c $r\\n\" }}"


def measure(argv: list[str], stdin: Path | None, runs: int) -> dict:
    """Median wall time, median CPU time (user + system: what a busy host changes least)
    and peak RSS of a command (each run in a fresh child)."""
    walls, peaks, cpus = [], [], []
    for _ in range(runs):
        script = ("import resource, subprocess, sys, time\n"
                  "start = time.perf_counter()\n"
                  "stdin = open(sys.argv[1], 'rb') if sys.argv[1] != '-' else None\n"
                  "code = subprocess.run(sys.argv[2:], stdin=stdin, stdout=subprocess.DEVNULL).returncode\n"
                  "wall = time.perf_counter() - start\n"
                  "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
                  "print(wall, usage.ru_maxrss, code, usage.ru_utime + usage.ru_stime)\n")
        out = subprocess.run([sys.executable, "-c", script, str(stdin) if stdin else "-", *argv],
                             capture_output=True, text=True, check=True).stdout.split()
        if out[2] != "0":
            raise SystemExit(f"{argv[0]} failed with status {out[2]}")
        walls.append(float(out[0]))
        peaks.append(int(out[1]) / 1024)
        cpus.append(float(out[3]))
    return {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus), "peak_mb": max(peaks), "runs": runs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--boots-lines", type=int, default=10_000_000, help="0: no capture of many boots")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    bootgraph = subprocess.run([str(ROOT / "scripts" / "kernel-source-file"), "scripts/bootgraph.pl"],
                               capture_output=True, text=True)
    if bootgraph.returncode != 0:
        print(bootgraph.stderr, file=sys.stderr)
        return 2
    bootlab = [str(ROOT / ".venv" / "bin" / "bootlab")]
    subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "compileall", "-q", str(ROOT / "src" / "bootlab")],
                   check=True)
    analyze = bootlab + ["analyze"]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "dmesg-1M.txt"
        n = build_log(log, args.lines)
        size = log.stat().st_size
        results = {
            "bootlab analyze (text)": measure(analyze + [str(log)], None, args.runs),
            "bootlab analyze -f json": measure(analyze + ["-f", "json", str(log)], None, args.runs),
            "bootlab analyze -f svg": measure(analyze + ["-f", "svg", str(log)], None, args.runs),
            "bootlab analyze -f html": measure(analyze + ["-f", "html", str(log)], None, args.runs),
            "bootlab advise": measure(bootlab + ["advise", str(log)], None, args.runs),
            "bootgraph.pl (svg)": measure(["perl", bootgraph.stdout.strip()], log, args.runs),
            "floor: python re, lines": measure([sys.executable, "-c", FLOOR_PYTHON], log, args.runs),
            "floor: perl, lines": measure(["perl", "-ne", FLOOR_PERL], log, args.runs),
        }
        log.unlink()
        boots_log = {}
        if args.boots_lines:
            many = Path(tmp) / "boots.txt"
            boots, lines = build_boots(many, args.boots_lines)
            boots_log = {"boots": boots, "lines": lines, "bytes": many.stat().st_size}
            results["many boots: analyze --boot 1"] = measure(analyze + ["--boot", "1", str(many)], None, args.runs)
            results["many boots: analyze (last)"] = measure(analyze + [str(many)], None, args.runs)
    load = os.getloadavg()[1]  # the 5-minute average over the run: the ratios hold on a host this busy
    peer = results["bootgraph.pl (svg)"]["wall_s"]
    print(f"{n} lines ({size / 1e6:.0f} MB of initcall_debug dmesg), median of {args.runs} runs, "
          f"load average {load:.2f} on {os.cpu_count()} CPUs")
    if boots_log:
        print(f"many boots: {boots_log['lines']} lines ({boots_log['bytes'] / 1e6:.0f} MB) in {boots_log['boots']} "
              f"boots of {boots_log['lines'] // boots_log['boots']} lines")
    peer_cpu = results["bootgraph.pl (svg)"]["cpu_s"]
    print(f"{'tool':30} {'wall':>8} {'cpu':>8} {'peak RSS':>10} {'vs bootgraph.pl: wall':>22} {'cpu':>6}")
    for tool, r in results.items():
        print(f"{tool:30} {r['wall_s']:7.2f}s {r['cpu_s']:7.2f}s {r['peak_mb']:8.0f}MB {r['wall_s'] / peer:21.2f}x "
              f"{r['cpu_s'] / peer_cpu:5.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"lines": n, "bytes": size, "load_average": load, "many_boots": boots_log,
                                               "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
