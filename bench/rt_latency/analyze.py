#!/usr/bin/env python3
"""Summarise the rt_latency guest run: release jitter (median, p99, max) of
the rtsched fp plugin (alone; beside 250 reservations no thread runs; beside
them and an unprivileged loop reading the status), a plain SCHED_FIFO
clock_nanosleep() loop and
cyclictest, as ratios to the plain loop, and the latency of hsf-fp server
switches (planned server boundary to the new server's task on the CPU);
for each CPU of a multi-CPU guest (guest-smp.toml) in turn.

Usage: analyze.py CONSOLE_LOG
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "rt", "tests"))
from check_guest import parse_jitter, parse_trace, section  # noqa: E402  (shared parsers)


def cyclictest_stats(lines):
    """median, p99 and max in ns from cyclictest's histogram (us buckets)."""
    hist, maximum = [], None
    for line in lines:
        fields = line.split()[1:]
        if len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit():
            if int(fields[1]):
                hist.append((int(fields[0]), int(fields[1])))
        m = re.search(r"Max Latencies:\s*(\d+)", line)
        if m:
            maximum = int(m.group(1)) * 1000
    total = sum(n for _, n in hist)
    if not total:
        return None

    def quantile(q):
        seen = 0
        for us, n in hist:
            seen += n
            if seen >= q * total:
                return us * 1000
        return hist[-1][0] * 1000
    return {"n": total, "median_ns": quantile(0.5), "p99_ns": quantile(0.99),
            "max_ns": maximum if maximum is not None else hist[-1][0] * 1000}


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def server_switches(events):
    """Latencies (ns) from a planned server switch to its task running a job."""
    pid_task = {int(k["pid"]): (int(k["task"]), int(k["server"])) for _, n, k in events
                if n == "task_create" and "server" in k}
    lat = []
    for i, (t, name, k) in enumerate(events):
        if name != "server_resume":
            continue
        handover = any(n in ("deplete", "server_preempt") and tt == t
                       for tt, n, _ in events[max(0, i - 10):i])
        # The first switch of the window, if it went to the server's task
        # (a server without ready work leaves the CPU to Linux).
        j, nxt = next(((j, e) for j, e in enumerate(events[i + 1:], i + 1) if e[1] == "switch" or (
            e[1] in ("deplete", "server_preempt") and e[2]["server"] == k["server"])), (None, None))
        if not (handover and nxt and nxt[1] == "switch"):
            continue
        task, server = pid_task.get(int(nxt[2]["next_pid"]), (None, None))
        # ... and the task went on with a job there: at the end of a run a
        # task that has done its jobs is switched in to exit, long after.
        job = any(n in ("start", "resume") and int(e["task"]) == task and tt == nxt[0]
                  for tt, n, e in events[j + 1:j + 4])
        if server == int(k["server"]) and job:
            lat.append(nxt[0] - t)
    return lat


def per_cpu(lines):
    """The console cut at each "==== rt_latency begin" marker: {cpu: its lines}
    (the one-CPU console's single section, without cpu=, is CPU 0)."""
    parts, cpu = {}, None
    for line in lines:
        m = re.search(r"==== rt_latency begin(?: cpu=(\d+))?", line)
        if m:
            cpu = int(m.group(1) or 0)
        if cpu is not None:
            parts.setdefault(cpu, []).append(line)
    return parts


def report(lines):
    """Print one CPU's jitter table and server switches; whether fp and fifo ran."""
    body = section(lines, "==== rt_latency begin", "==== rt_latency end")
    rows = parse_jitter(body)
    ct = cyclictest_stats([x for x in body if x.startswith("cyclictest")])
    if ct:
        rows["cyclictest"] = ct
    base = rows.get("fifo")
    print("release jitter (actual start - planned release), guest ns")
    print(f"{'':12} {'n':>6} {'median':>9} {'p99':>9} {'max':>9}   ratio to plain SCHED_FIFO")
    for name in ("fp", "fp_reserved", "fp_reader", "fifo", "cyclictest"):
        r = rows.get(name)
        if not r:
            print(f"{name:12} missing")
            continue
        ratio = "  ".join(f"{r[k] / base[k]:.2f}" if base and base[k] else "-"
                          for k in ("median_ns", "p99_ns", "max_ns"))
        print(f"{name:12} {r['n']:>6} {r['median_ns']:>9} {r['p99_ns']:>9} {r['max_ns']:>9}   {ratio}")
    lat = server_switches(parse_trace(lines))
    if lat:
        med, p99, mx = percentile(lat, 0.5), percentile(lat, 0.99), max(lat)
        print(f"server switch (planned boundary -> next server's task running): n={len(lat)} "
              f"median {med} ns, p99 {p99} ns, max {mx} ns")
        if base:
            print(f"  as ratio to plain SCHED_FIFO wake-up: median {med / base['median_ns']:.2f}, "
                  f"p99 {p99 / base['p99_ns']:.2f}, max {mx / base['max_ns']:.2f}")
    else:
        print("server switch: no samples")
    return {"fp", "fifo"} <= rows.keys()


def main():
    with open(sys.argv[1], errors="replace") as f:
        parts = per_cpu(f.read().splitlines())
    ok = bool(parts)
    for cpu, lines in sorted(parts.items()):
        if len(parts) > 1:
            print(f"== CPU {cpu} (the real-time CPU, rt_cpu={cpu})")
        ok = report(lines) and ok
    if not parts:
        print("no rt_latency section in the console")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
