#!/usr/bin/env python3
"""How close are capture timestamps to the truth?  bootlab capture vs grabserial, side by side.

A writer emits lines on two ptys at known instants: the same line on both, a few
microseconds apart, each instant taken right before its first byte is written.
`bootlab capture` reads one pty (as it runs by default: at SCHED_FIFO priority 10 when
permitted), Debian's `grabserial -T` another, and `bootlab capture --rt-priority 0` (an
ordinary process, as grabserial) a third, in the same run.
For each line the error is (the tool's stamp for the line) - (the instant its first byte
was written).  Two streams: paced like a 115200-baud UART (one byte every 86.8 us) and
flat out (whole lines as fast as the pty takes them).  Bytes lost are counted too.

    .venv/bin/python bench/capture_accuracy.py [--lines 1000] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tty
from collections import Counter
from pathlib import Path

import numpy as np

from bootlab.sources import bootlab_capture
from bootlab.timeline import Boot

BYTE_NS = 10 * 1_000_000_000 // 115200


def make_lines(n: int) -> list[bytes]:
    return [f"[{i:6d}.000000] line {i:05d} of the console stream, bytes worth stamping: \xe9\r\n".encode("latin-1")
            for i in range(n)]


def emit(masters: list[int], lines: list[bytes], paced: bool, truth: list[list[tuple[int, float]]]) -> None:
    """Write every line to every pty; truth[k] gets (monotonic ns, wall s) per line."""
    for line in lines:
        for k, fd in enumerate(masters):
            truth[k].append((time.monotonic_ns(), time.time()))
            if paced:
                start = time.monotonic_ns()
                for i, b in enumerate(line):
                    while time.monotonic_ns() < start + i * BYTE_NS:
                        pass
                    os.write(fd, bytes([b]))
            else:
                os.write(fd, line)
        if paced:
            time.sleep(0.002)  # a short silence between lines, as on a real console


def bootlab_stamps(path: Path) -> tuple[list[int], bytes]:
    data = path.read_bytes()
    t0 = int(re.search(rb"! zero monotonic_ns=(\d+)", data).group(1))
    stamps, body, first, cur = [], b"", None, b""
    for _, t, flag, payload in bootlab_capture.iter_records(data, str(path), Boot()):
        if flag != "|":
            continue
        first = t if first is None else first
        cur += b"".join(raw for _, raw in bootlab_capture.segments(t, payload))
        if not payload.endswith(bootlab_capture.CONTINUES):
            stamps.append(t0 + first)
            body += cur + b"\n"
            first, cur = None, b""
    return stamps, body


GRAB = re.compile(rb"^\[(\d+\.\d+) +-?\d+\.\d+\] ")


def grabserial_stamps(path: Path) -> tuple[list[float], bytes]:
    stamps, body = [], b""
    for line in path.read_bytes().split(b"\n"):
        m = GRAB.match(line)
        if m:
            stamps.append(float(m.group(1)))
            body += line[m.end():] + b"\n"
    return stamps, body


def bytes_lost(sent: bytes, received: bytes) -> int:
    """Bytes sent that never came back (counted per byte value: order does not matter)."""
    have = Counter(received)
    return sum(max(0, n - have[b]) for b, n in Counter(sent).items())


def percentiles(errors_us: list[float]) -> dict:
    a = np.asarray(errors_us)
    return {"p50_us": float(np.percentile(a, 50)), "p99_us": float(np.percentile(a, 99)), "max_us": float(a.max()),
            "min_us": float(a.min()), "lines": len(a)}


def run(mode: str, n: int, work: Path) -> dict:
    lines = make_lines(n)
    ptys = []
    for _ in range(3):
        m, s = os.openpty()
        tty.setraw(s)
        ptys.append((m, s, os.ttyname(s)))
    cap, grab = work / f"{mode}.capture", work / f"{mode}.grabserial"
    capture = [sys.executable, "-m", "bootlab", "capture", "-Q"]
    bootlab = subprocess.Popen(capture + ["--pty", ptys[0][2], "-o", str(cap)], stderr=subprocess.DEVNULL)
    cap_other = work / f"{mode}-ordinary.capture"
    bootlab_other = subprocess.Popen(capture + ["--pty", ptys[2][2], "-o", str(cap_other), "--rt-priority", "0"],
                                     stderr=subprocess.DEVNULL)
    grabber = subprocess.Popen(["grabserial", "-S", "-d", ptys[1][2], "-T", "-F", "%s.%f", "-Q", "-o", str(grab)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(3)  # both tools started and opened their port
    # The writer busy-waits between bytes: at the lowest priority it does not delay the
    # kernel's pty work or the two readers (there are only 2 CPUs).
    os.nice(19)
    truth: list[list[tuple[int, float]]] = [[], [], []]
    emit([ptys[0][0], ptys[1][0], ptys[2][0]], lines, mode == "paced", truth)
    time.sleep(3)  # let every reader drain
    procs = (bootlab, grabber, bootlab_other)
    for p in procs:
        p.send_signal(signal.SIGINT)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
    for m, s, _ in ptys:
        os.close(m)
        os.close(s)
    sent = b"".join(lines)
    b_stamps, b_body = bootlab_stamps(cap)
    g_stamps, g_body = grabserial_stamps(grab)
    o_stamps, o_body = bootlab_stamps(cap_other)
    result = {}
    for tool, stamps, body, times, scale in (("bootlab", b_stamps, b_body, [t for t, _ in truth[0]], 1e-3),
                                              ("grabserial", g_stamps, g_body, [w for _, w in truth[1]], 1e6),
                                              ("bootlab-ordinary", o_stamps, o_body, [t for t, _ in truth[2]], 1e-3)):
        errors = [(s - t) * scale for s, t in zip(stamps, times)]
        expected = sent.replace(b"\r", b"") if tool == "grabserial" else sent
        result[tool] = {**(percentiles(errors) if errors else {}), "lines_seen": len(stamps),
                        "bytes_sent": len(expected), "bytes_lost": bytes_lost(expected, body)}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    if not shutil.which("grabserial"):
        print("grabserial is not installed (apt-get install grabserial)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        results = {mode: run(mode, args.lines, Path(tmp)) for mode in ("paced", "flat")}
    print(f"capture stamp error (stamp - instant the line's first byte was written), {args.lines} lines per stream")
    print(f"{'stream':8} {'tool':16} {'p50 us':>10} {'p99 us':>10} {'max us':>10} {'lines':>6} {'bytes lost':>10}")
    for mode, tools in results.items():
        for tool, r in tools.items():
            print(f"{mode:8} {tool:16} {r.get('p50_us', float('nan')):10.1f} {r.get('p99_us', float('nan')):10.1f} "
                  f"{r.get('max_us', float('nan')):10.1f} {r['lines_seen']:6d} {r['bytes_lost']!s:>10}")
        b, g = tools["bootlab"], tools["grabserial"]
        if "p99_us" in b and "p99_us" in g:
            print(f"{mode:8} grabserial/bootlab p99 error ratio: {g['p99_us'] / b['p99_us']:.1f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
