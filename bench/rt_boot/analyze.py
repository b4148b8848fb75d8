"""bench/rt_boot: the cost of each loading step from the marks of bench.sh in the guest's
kernel log (guest ns under -icount: the numbers repeat), against the empty module.

Usage: analyze.py CONSOLE.log"""

from __future__ import annotations

import re
import statistics
import sys

MARK = re.compile(r"\[\s*(\d+)\.(\d{6})\] rtboot: (\w+)\.(start|end)")
ROUND = re.compile(r"rtboot: round (\d+)")
INIT = re.compile(r"initcall (\w+)\+\S+ \[(\w+)\] returned 0 after (\d+) usecs")
STEPS = ("empty", "core", "plugin", "config", "rtctl", "onestep")
SCHEDULER = ("core", "plugin", "config")


def rounds(text: str) -> list[dict[str, int]]:
    """Per round, each step's duration in µs."""
    out: list[dict[str, int]] = []
    started: dict[str, int] = {}
    for line in text.splitlines():
        if ROUND.search(line):
            out.append({})
        m = MARK.search(line)
        if m and out:
            us = int(m[1]) * 1_000_000 + int(m[2])
            if m[4] == "start":
                started[m[3]] = us
            else:
                out[-1][m[3]] = us - started.pop(m[3])
    return [r for r in out if all(s in r for s in STEPS)]


def main() -> int:
    text = open(sys.argv[1], errors="replace").read()
    if "rtboot: " in text and " failed" in text and re.search(r"rtboot: \w+ failed", text):
        print("a step failed:", re.findall(r"rtboot: \w+ failed", text))
        return 1
    found = rounds(text)
    if not found:
        print("no complete round in", sys.argv[1])
        return 1
    inits: dict[str, list[int]] = {}
    for m in INIT.finditer(text):
        inits.setdefault(m[2], []).append(int(m[3]))
    median = {s: statistics.median(r[s] for r in found) for s in STEPS}
    print(f"{len(found)} rounds; µs, first round (first load in this boot) and median of all")
    print(f"{'step':<10}{'first':>8}{'median':>8}{'x empty':>9}  module init (median)")
    for step in STEPS:
        module = {"empty": "rtboot_empty", "core": "rtsched", "plugin": "rtsched_hsf"}.get(step)
        init = f"{statistics.median(inits[module]):.0f}" if module in inits else "-"
        print(f"{step:<10}{found[0][step]:>8}{median[step]:>8.0f}{median[step] / median['empty']:>9.2f}  {init}")
    first = sum(found[0][s] for s in SCHEDULER)
    total = sum(median[s] for s in SCHEDULER)
    print(f"{'scheduler':<10}{first:>8}{total:>8.0f}{total / median['empty']:>9.2f}  (core + plugin + config)")
    print("onestep: rtctl load --module rtsched.ko --module rtsched_hsf.ko table3.toml, the same in one program")
    return 0


if __name__ == "__main__":
    sys.exit(main())
