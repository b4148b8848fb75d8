#!/usr/bin/env python3
"""How close are capture timestamps to the truth?  bootlab capture vs grabserial, side by side.

A writer emits lines on two ptys at known instants: the same line on both, a few
microseconds apart, each instant taken right before its first byte is written.
`bootlab capture` reads one pty (as it runs by default: at SCHED_FIFO priority 10 when
permitted), Debian's `grabserial -T` another, and `bootlab capture --rt-priority 0` (an
ordinary process, as grabserial) a third, in the same run; repetitions rotate the tools
over the ptys.
For each line the error is (the tool's stamp for the line) - (the instant its first byte
was written).  Two streams: paced like a 115200-baud UART (one byte every 86.8 us) and
flat out (whole lines as fast as the pty takes them).  Bytes lost are counted too.

    .venv/bin/python bench/capture_accuracy.py [--lines 1000] [--repeat 3] [--hogs N] [--json FILE]
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
WRITER_PRIORITY = 20  # above bootlab capture's reader (10)


def make_lines(n: int) -> list[bytes]:
    return [f"[{i:6d}.000000] line {i:05d} of the console stream, bytes worth stamping: \xe9\r\n".encode("latin-1")
            for i in range(n)]


def emit(masters: list[int], lines: list[bytes], paced: bool, truth: list[list[tuple[int, float]]]) -> None:
    """Write every line to every pty; truth[k] gets (monotonic ns, wall s) per line.  Paced,
    each byte goes to every pty at once, one byte time apart (the same instants for every
    reader); flat out, each line to each pty in turn."""
    for line in lines:
        if paced:
            start = time.monotonic_ns()
            for k in range(len(masters)):
                truth[k].append((start, time.time()))
            for i, b in enumerate(line):
                due = start + i * BYTE_NS
                wait = due - time.monotonic_ns()
                if wait > 0:
                    time.sleep(wait / 1e9)
                for fd in masters:
                    os.write(fd, bytes([b]))
            time.sleep(0.002)  # a short silence between lines, as on a real console
        else:
            for k, fd in enumerate(masters):
                truth[k].append((time.monotonic_ns(), time.time()))
                os.write(fd, line)


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


# A process of its own (a thread would take the writer's GIL): the host's steal time (a
# virtual machine's CPUs taken by its hypervisor) every 5 ms, to tell which late stamps the
# hypervisor made.
STEAL_SAMPLER = """
import signal, sys, time
from bootlab.capture.stalls import host_steal_ms
signal.signal(signal.SIGINT, lambda *_: sys.exit(0))  # stopped as the readers are
with open(sys.argv[1], "w") as out:
    while True:
        out.write(f"{time.monotonic_ns()} {host_steal_ms()}\\n")
        out.flush()
        time.sleep(0.005)
"""


def steal_windows(path: Path) -> tuple[list[tuple[int, int]], float]:
    """The (start, end) monotonic ns between two samples across which steal time grew, and
    the steal time over the whole stream (ms)."""
    samples = [(int(t), float(s)) for t, s in (line.split() for line in path.read_text().splitlines() if line.count(" ") == 1)]
    windows = [(t0, t1) for (t0, s0), (t1, s1) in zip(samples, samples[1:]) if s1 > s0]
    return windows, (samples[-1][1] - samples[0][1]) if samples else 0.0


def stolen(windows: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether the hypervisor took a CPU between a line's instant and its stamp."""
    return any(w0 <= end and w1 >= start for w0, w1 in windows)


def percentiles(errors_us: list[float]) -> dict:
    a = np.asarray(errors_us)
    return {"p50_us": float(np.percentile(a, 50)), "p99_us": float(np.percentile(a, 99)), "max_us": float(a.max()),
            "min_us": float(a.min()), "lines": len(a)}


TOOLS = ("bootlab", "grabserial", "bootlab-ordinary")


def reader(tool: str, pty: str, out: Path, paced: bool) -> list[str]:
    """The paced stream is a 115200-baud line, and bootlab is told so (`--line-baud`: a pty
    bridged from a serial port); flat out it is no line at all."""
    if tool == "grabserial":
        return ["grabserial", "-S", "-d", pty, "-T", "-F", "%s.%f", "-Q", "-o", str(out)]
    speed = ["--line-baud", "115200"] if paced else []
    capture = [sys.executable, "-m", "bootlab", "capture", "-Q", "--pty", pty, *speed, "-o", str(out)]
    return capture + (["--rt-priority", "0"] if tool == "bootlab-ordinary" else [])


def run(mode: str, n: int, work: Path, keep: Path | None = None, shift: int = 0) -> dict:
    """One stream read by the three tools side by side.  Tool k of the order rotated by
    `shift` reads pty k: which pty is written first and which reader was started first
    changed which tool got a late tail beside CPU hogs, so repetitions rotate them."""
    lines = make_lines(n)
    tools = TOOLS[shift % len(TOOLS):] + TOOLS[:shift % len(TOOLS)]
    ptys = []
    for _ in tools:
        m, s = os.openpty()
        tty.setraw(s)
        ptys.append((m, s, os.ttyname(s)))
    outs = [work / f"{mode}-{tool}.{'grabserial' if tool == 'grabserial' else 'capture'}" for tool in tools]
    readers = [subprocess.Popen(reader(tool, pty[2], out, mode == "paced"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for tool, pty, out in zip(tools, ptys, outs)]
    time.sleep(3)  # every tool started and opened its port
    # The writer's instants are the truth: at a real-time priority above the readers' it is
    # not delayed between taking an instant and writing (on a loaded host an ordinary writer
    # is, by milliseconds, and that noise would be charged to whichever reader it hit).  It
    # sleeps between bytes, so it takes little from the readers.
    steal_log = work / f"{mode}.steal"
    sampler = subprocess.Popen([sys.executable, "-c", STEAL_SAMPLER, str(steal_log)])
    writer_policy = _realtime(WRITER_PRIORITY)
    truth: list[list[tuple[int, float]]] = [[] for _ in tools]
    emit([m for m, _, _ in ptys], lines, mode == "paced", truth)
    time.sleep(3)  # let every reader drain
    procs = (*readers, sampler)
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
    windows, steal_ms = steal_windows(steal_log)
    result = {}
    for k, (tool, out) in enumerate(zip(tools, outs)):
        if tool == "grabserial":
            (stamps, body), times, scale = grabserial_stamps(out), [w for _, w in truth[k]], 1e6
        else:
            (stamps, body), times, scale = bootlab_stamps(out), [t for t, _ in truth[k]], 1e-3
        errors = [(s - t) * scale for s, t in zip(stamps, times)]
        mono = [t for t, _ in truth[k]]  # the lines' instants on the monotonic clock, for the steal windows
        unstolen = [e for e, t in zip(errors, mono) if not stolen(windows, t, t + int(e * 1e3))]
        expected = sent.replace(b"\r", b"") if tool == "grabserial" else sent
        result[tool] = {**(percentiles(errors) if errors else {}), "lines_seen": len(stamps), "pty": k,
                        "bytes_sent": len(expected), "bytes_lost": bytes_lost(expected, body),
                        "unstolen": percentiles(unstolen) if unstolen else {}}
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            (keep / f"{mode}-{shift}-{tool}-errors.json").write_text(json.dumps(errors))
            shutil.copy(out, keep / f"{shift}-{out.name}")
    result["writer"] = writer_policy
    result["steal_ms"] = steal_ms
    return result


def _realtime(priority: int) -> str:
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(priority))
    except OSError as err:
        return f"SCHED_OTHER (SCHED_FIFO refused: {err.strerror})"
    return f"SCHED_FIFO {priority}"


def report(mode: str, tools: dict) -> None:
    print(f"{mode:8} writer at {tools['writer']}; the hypervisor took {tools['steal_ms']:.0f} ms of the host's CPUs")
    for tool in TOOLS:
        r, u = tools[tool], tools[tool]["unstolen"]
        print(f"{mode:8} {tool:16} pty {r['pty']} {r.get('p50_us', float('nan')):10.1f} "
              f"{r.get('p99_us', float('nan')):10.1f} {r.get('max_us', float('nan')):10.1f} {r['lines_seen']:6d} "
              f"{r['bytes_lost']!s:>10}   without steal: {u.get('lines', 0)} lines, "
              f"p99 {u.get('p99_us', float('nan')):.1f}, max {u.get('max_us', float('nan')):.1f}")


def ratios(tools: dict) -> dict:
    """grabserial's error over bootlab's (as it runs by default), per quantile."""
    b, g = tools["bootlab"], tools["grabserial"]
    return {q: g[f"{q}_us"] / b[f"{q}_us"] for q in ("p50", "p99", "max")} if "p99_us" in b and "p99_us" in g else {}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, metavar="N",
                        help="run the streams N times, the tools' ptys rotated each time (default 3: each tool "
                             "on each pty once)")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--hogs", type=int, default=0, metavar="N",
                        help="run N CPU-bound processes beside the tools (a loaded host)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the captures and each line's error here")
    args = parser.parse_args()
    if not shutil.which("grabserial"):
        print("grabserial is not installed (apt-get install grabserial)", file=sys.stderr)
        return 2
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            runs = [{mode: run(mode, args.lines, Path(tmp), keep=args.keep, shift=i) for mode in ("paced", "flat")}
                    for i in range(args.repeat)]
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    print(f"capture stamp error (stamp - instant the line's first byte was written), {args.lines} lines per stream, "
          f"{args.repeat} repetitions, beside {args.hogs} CPU hogs")
    print(f"{'stream':8} {'tool':16} {'':5} {'p50 us':>10} {'p99 us':>10} {'max us':>10} {'lines':>6} {'bytes lost':>10}")
    summary = {}
    for i, results in enumerate(runs):
        print(f"repetition {i + 1}")
        for mode, tools in results.items():
            report(mode, tools)
            tools["ratios"] = ratios(tools)
    for mode in ("paced", "flat"):
        p99 = {tool: [r[mode][tool].get("p99_us", float("nan")) for r in runs] for tool in TOOLS}
        median = {q: float(np.median([r[mode]["ratios"].get(q, 0.0) for r in runs])) for q in ("p50", "p99", "max")}
        summary[mode] = {"p99_us": p99, "median_ratios": median}
        print(f"{mode:8} p99 per repetition (us): " +
              "; ".join(f"{tool} {', '.join(f'{x:.0f}' for x in xs)}" for tool, xs in p99.items()))
        print(f"{mode:8} grabserial/bootlab error ratio, median of the repetitions: " +
              ", ".join(f"{q} {r:.1f}x" for q, r in median.items()))
    # The goal (absolute errors move with the host's load; ratios measured side by side do not).
    met = {"paced: p99 no worse than grabserial": summary["paced"]["median_ratios"]["p99"] >= 1.0,
           "flat out: p99 at least 20x better": summary["flat"]["median_ratios"]["p99"] >= 20.0,
           "no byte lost": all(r[m]["bootlab"]["bytes_lost"] == 0 for r in runs for m in r)}
    for what, ok in met.items():
        print(f"goal {what}: {'met' if ok else 'NOT met'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
