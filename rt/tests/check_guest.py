#!/usr/bin/env python3
"""Judge the console log of the rtsched guest scenarios (rt/tests/guest).

Usage: check_guest.py CONSOLE_LOG [--tolerance-us N] [--smp] [--global-cpus N] [--semi] [--untimed]

Scenario output sits between "==== rtsched-scenario NAME begin ====" and
"==== rtsched-scenario NAME end rc=N ====", traces between
"==== rtsched-trace begin/end ====" (text format of docs/rt-formats.md).
Who ran is taken from the kernel's sched_switch lines, so the budget and
isolation checks do not trust the framework's own bookkeeping.

--untimed judges a debug kernel's run (lockdep, KASAN): what ran, the order
of the schedule and the kernel log, not deadlines and budgets ("SKIP").

Prints one "PASS"/"FAIL" line per check and a closing
"N passed, N failed" line; exits 1 if anything failed.  Stand-alone on
purpose (no bootlab imports).
"""
import argparse
import re
import sys
from collections import defaultdict

SCENARIOS = ["lowres_timers", "lazy_ring", "table3_first", "ring_enomem",
             "checks", "fp", "edf", "table3", "overload", "hsf_edf", "overrun", "kept_away",
             "killed_task", "rmmod_with_tasks", "unload_race", "frozen_task", "release_latency",
             "load_cycles",
             "one_step_load", "dmesg"]
# SET=smp (a multi-CPU guest): the partitioned plugins and CPU hotplug.
SMP_SCENARIOS = ["partitioned_fp", "partitioned_edf", "cpu_hotplug", "dmesg"]
# SET=global (a multi-CPU guest): the global plugins.
GLOBAL_SCENARIOS = ["global_params", "global_fp", "global_edf", "dmesg"]
# SET=semi (a multi-CPU guest): the semi-partitioned plugin on examples/semi.toml.
SEMI_SCENARIOS = ["semi_params", "semi", "dmesg"]
KERNEL_TROUBLE = re.compile(
    r"WARNING:|BUG:|Oops|Call Trace|general protection|"
    r"blocked for more than|scheduling while atomic|refcount_t:|"
    r"kernel BUG|RIP:")
# rtsched's default overrun_slack_us: a task's budget is wcet + this.
OVERRUN_SLACK_NS = 200_000
# Growth allowed over all load/unload cycles, for allocator noise.
LEAK_KB = 256
# release_latency (-icount guest time, one boot).  fp's release path: its median release
# latency less plain SCHED_FIFO's, in guest instructions (the kernels' own wake-ups differ:
# the ratio is 1.43 on ARM64, 1.80 on the built kernel).  Measured 2,132 on x86's generic
# kernel, 2,175 on -rt, 1,955 on the built one, 2,488 and 2,644 on ARM64 (two builds of
# one day: where its ticks fall moves with the binaries); 4,176 on x86 when every release
# queued an irq_work for its budget's watch.  The bound is halfway between.
RELEASE_PATH_INSNS = 3400
# fp's median beside 250 reservations and its worst beside them and an unprivileged status
# reader, as multiples of the same alone: 1.00 and 1.10-1.18 (7.7 when every event scanned
# every reservation; 3.1 when STATUS read every slot at once, with interrupts off and no
# preemption point).
RESERVED_MEDIAN_RATIO = 1.1
READER_MAX_RATIO = 1.5


def parse_scenarios(text):
    """{name: (rc, [lines])} from the console log."""
    scenarios = {}
    current, lines = None, []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        m = re.search(r"==== rtsched-scenario (\S+) (begin|end)(?: rc=(\d+))? ====", line)
        if m and m.group(2) == "begin":
            current, lines = m.group(1), []
        elif m and current == m.group(1):
            scenarios[current] = (int(m.group(3)), lines)
            current = None
        elif current:
            lines.append(line)
    return scenarios


def section(lines, begin, end):
    """The lines between a line containing begin and one containing end."""
    inside, out = False, []
    for line in lines:
        line = line.rstrip("\r")
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside:
            out.append(line)
    return out


def parse_trace(lines):
    """Events (time_ns, name, {key: value}) between the trace markers."""
    events = []
    for line in section(lines, "==== rtsched-trace begin", "==== rtsched-trace end"):
        fields = line.split()
        if len(fields) < 2 or not fields[0].isdigit():
            continue
        keys = dict(f.split("=", 1) for f in fields[2:] if "=" in f)
        events.append((int(fields[0]), fields[1], keys))
    return events


def parse_jitter(lines):
    """{mode: {n, median_ns, p99_ns, max_ns}} from rt_jitter's lines."""
    rows = {}
    for line in lines:
        m = re.search(r"jitter mode=(\w+) n=(\d+) median_ns=(-?\d+) p99_ns=(-?\d+) max_ns=(-?\d+)",
                      line)
        if m:
            rows[m.group(1)] = dict(zip(("n", "median_ns", "p99_ns", "max_ns"),
                                        map(int, m.groups()[1:])))
    return rows


def run_intervals(events):
    """{pid: [(start, end)]} from sched_switch lines."""
    runs, running_since, current = defaultdict(list), None, None
    for t, name, k in events:
        if name != "switch":
            continue
        if current is not None and running_since is not None:
            runs[current].append((running_since, t))
        current, running_since = int(k["next_pid"]), t
    return runs


def server_tasks(events):
    """{pid: server} and {server: (period, budget, prio)} as configured."""
    pid_server, servers = {}, {}
    for _, name, k in events:
        if name == "task_create" and "server" in k:
            pid_server[int(k["pid"])] = int(k["server"])
        elif name == "server_create":
            servers[int(k["server"])] = (int(k["period"]), int(k["budget"]),
                                         int(k["prio"]))
    return pid_server, servers


def active_windows(events):
    """{server: [(from, to)]}: when each server was the active one."""
    windows, since = defaultdict(list), {}
    for t, name, k in events:
        if name == "server_resume":
            since[int(k["server"])] = t
        elif name in ("deplete", "server_preempt"):
            s = int(k["server"])
            if s in since:
                windows[s].append((since.pop(s), t))
    last = events[-1][0] if events else 0
    for s, t in since.items():
        windows[s].append((t, last))
    return windows


def overlap(a, b, windows):
    return sum(max(0, min(b, w1) - max(a, w0)) for w0, w1 in windows)


class Checker:
    def __init__(self, timed=True):
        self.passed = self.failed = 0
        # False on a debug kernel: its checkers (lockdep, KASAN) slow every lock and
        # memory access, so deadlines and budgets say nothing about the framework there.
        self.timed = timed

    def check(self, ok, name, detail="", timing=False):
        if timing and not self.timed:
            print(f"SKIP {name}: timing not judged on this kernel" + (f" ({detail})" if detail else ""))
        elif ok:
            self.passed += 1
            print(f"PASS {name}" + (f": {detail}" if detail else ""))
        else:
            self.failed += 1
            print(f"FAIL {name}" + (f": {detail}" if detail else ""))

    def scenario_rc(self, scenarios, name):
        present = name in scenarios
        self.check(present and scenarios[name][0] == 0, f"{name} ran",
                   "missing" if not present else f"rc={scenarios[name][0]}")
        return present

    def release_latency(self, rows, insn_ns):
        """fp's release path against plain SCHED_FIFO's, beside reservations, beside a reader."""
        if not {"alone", "fifo", "reserved", "reader"} <= rows.keys():
            self.check(False, "release_latency: four latency runs", f"got {sorted(rows)}")
            return
        alone, fifo = rows["alone"]["median_ns"], rows["fifo"]["median_ns"]
        insns = (alone - fifo) / insn_ns
        self.check(insns <= RELEASE_PATH_INSNS, "fp's release path costs little more than a plain "
                   "SCHED_FIFO wake-up", f"median {alone} ns, plain {fifo} ns ({alone / fifo:.2f}x): "
                   f"{insns:.0f} instructions more, at most {RELEASE_PATH_INSNS}", timing=True)
        for name, what, key, bound in (
                ("reserved", "reservations without a thread cost no latency", "median_ns",
                 RESERVED_MEDIAN_RATIO),
                ("reader", "an unprivileged status reader barely delays releases", "max_ns",
                 READER_MAX_RATIO)):
            ratio = rows[name][key] / rows["alone"][key]
            self.check(ratio <= bound, what, f"{key[:-3]} {rows[name][key]} ns, alone "
                       f"{rows['alone'][key]} ns ({ratio:.2f}x, at most {bound}x)", timing=True)

    def misses(self, scenario, events, allowed_tasks=()):
        missed = sorted({k["task"] for _, n, k in events
                         if n == "miss" and int(k["task"]) not in allowed_tasks})
        self.check(not missed, f"{scenario}: deadlines met",
                   f"missed by tasks {missed}" if missed else
                   f"{sum(1 for e in events if e[1] == 'complete')} jobs", timing=True)

    def task_budget(self, scenario, events, task, tol):
        """From the sched_switch lines: the task ran at most wcet + slack
        in each of its periods (it was throttled, not left to run)."""
        if self.within_budget(scenario, events, task, tol, "throttled to its wcet") is None:
            return
        self.check(any(n == "overrun" and k["task"] == str(task)
                       for _, n, k in events),
                   f"{scenario}: task {task} overruns recorded")

    def within_budget(self, scenario, events, task, tol, what):
        """Check that task ran at most wcet + slack on its CPU (the
        sched_switch lines) in each of its periods; its task_create
        fields, None if untraced."""
        created = next((k for _, n, k in events
                        if n == "task_create" and k["task"] == str(task)), None)
        releases = [t for t, n, k in events
                    if n == "release" and k["task"] == str(task)]
        if created is None or not releases:
            self.check(False, f"{scenario}: task {task} traced")
            return None
        period, wcet = int(created["period"]), int(created["wcet"])
        runs = run_intervals(events).get(int(created["pid"]), [])
        used = [overlap(r, r + period, runs) for r in releases[:-1]]
        worst = max(used, default=0)
        self.check(bool(used) and worst <= wcet + OVERRUN_SLACK_NS + tol,
                   f"{scenario}: task {task} {what}",
                   f"max {worst / 1e6:.3f} ms per period, wcet "
                   f"{wcet / 1e6:.3f} ms, {len(used)} periods", timing=True)
        return created

    def kept_away(self, scenario, events, task, tol):
        """A thread outside the framework took the task's CPU in the middle
        of its jobs (the task switched out to it, runnable), and the task
        was charged only for the CPU it got: no overrun, no miss, and at
        most wcet + slack on its CPU in each period."""
        created = self.within_budget(scenario, events, task, tol, "ran at most its budget")
        if created is None:
            return
        pid = created["pid"]
        jobs = sum(1 for _, n, k in events if n == "complete" and k["task"] == str(task))
        taken = sum(1 for _, n, k in events if n == "switch" and k["prev_pid"] == pid
                    and k["prev_state"] == "R" and k["next_comm"] == "rt_intruder")
        self.check(jobs > 0 and taken >= jobs, f"{scenario}: the intruder took the CPU from task {task}'s jobs",
                   f"{taken} times in {jobs} jobs")
        overruns = sum(1 for _, n, k in events if n == "overrun" and k["task"] == str(task))
        # Timing: a debug kernel's checkers make the framework's own work
        # per job (charged to the task) exceed the slack.
        self.check(overruns == 0, f"{scenario}: task {task} not throttled for the time it was kept away",
                   f"{overruns} overruns", timing=True)
        self.misses(scenario, events)

    def first_jobs(self, scenario, events, servers):
        """Every server created and every task's job 0 released and started:
        the trace is whole from the start of the run."""
        created = {int(k["server"]) for _, n, k in events
                   if n == "server_create"}
        tasks = {int(k["task"]) for _, n, k in events if n == "task_create"}
        jobs0 = {(n, int(k["task"])) for _, n, k in events
                 if n in ("release", "start") and k.get("job") == "0"}
        whole = all(("release", t) in jobs0 and ("start", t) in jobs0
                    for t in tasks)
        self.check(len(created) == servers and bool(tasks) and whole,
                   f"{scenario}: servers created and every task's first job recorded",
                   f"servers {sorted(created)}, tasks {sorted(tasks)}")

    def hsf(self, scenario, events, tol, servers_by_deadline=False):
        pid_server, servers = server_tasks(events)
        runs = run_intervals(events)
        windows = active_windows(events)
        replenish = [t for t, n, _ in events if n == "replenish"]
        self.check(bool(servers) and bool(replenish),
                   f"{scenario}: servers traced", f"{len(servers)} servers")
        if not replenish:
            return
        epoch = min(replenish)
        # Budget: per server period, the CPU its tasks really got.
        for s, (period, budget, _) in sorted(servers.items()):
            used = defaultdict(int)
            for pid, srv in pid_server.items():
                if srv != s:
                    continue
                for a, b in runs.get(pid, []):
                    t = max(a, epoch)
                    while t < b:
                        k = (t - epoch) // period
                        end = min(b, epoch + (k + 1) * period)
                        used[k] += end - t
                        t = end
            worst = max(used.values(), default=0)
            self.check(worst <= budget + tol,
                       f"{scenario}: server {s} within budget",
                       f"max {worst / 1e6:.3f} ms per period, budget "
                       f"{budget / 1e6:.3f} ms, {len(used)} periods", timing=True)
        # Isolation: a server's tasks run only while it is active.
        worst, where = 0, None
        for pid, s in pid_server.items():
            for a, b in runs.get(pid, []):
                outside = (b - a) - overlap(a, b, windows.get(s, []))
                if outside > worst:
                    worst, where = outside, (s, a)
        self.check(worst <= tol, f"{scenario}: tasks run only in their server",
                   f"worst {worst / 1e3:.0f} us outside"
                   + (f" (server {where[0]} at {where[1]})" if where else ""), timing=True)
        # Order: after every instant, the active server is the first with
        # budget, by priority or by the end of its period (EDF), as
        # replayed from the trace.
        wrong, active, budget_left = 0, None, set()
        prio = {s: v[2] for s, v in servers.items()}
        period_end = {}
        server_events = [(t, n, int(k["server"])) for t, n, k in events
                         if n in ("replenish", "deplete", "server_resume",
                                  "server_preempt")]
        for i, (t, name, s) in enumerate(server_events):
            if name == "replenish":
                budget_left.add(s)
                period_end[s] = t + servers[s][0]
            elif name == "deplete":
                budget_left.discard(s)
                active = None if active == s else active
            elif name == "server_resume":
                active = s
            elif name == "server_preempt" and active == s:
                active = None
            if i + 1 == len(server_events) or server_events[i + 1][0] != t:
                best = min(budget_left, default=None, key=lambda x: (
                    period_end[x] if servers_by_deadline else prio[x], x))
                wrong += best != active
        order = "earlier-deadline" if servers_by_deadline else "higher-priority"
        self.check(wrong == 0, f"{scenario}: {order} servers preempt",
                   f"{wrong} instants with the wrong active server of "
                   f"{len(server_events)} server events")


def task_cpus(events):
    """{pid: cpu} of the tasks as created (partitioned plugins say cpu=)."""
    return {int(k["pid"]): int(k["cpu"]) for _, n, k in events
            if n == "task_create" and "cpu" in k and "pid" in k}


def registered_switches(events):
    """(time, pid, task, cpu) of every switch to a task's thread while it is registered:
    after its task_create and before its exit.  Before and after, the thread is not a task
    (it has its own CPU mask).  Records of one time are in the order they happened (the
    ring keeps them under one lock): a kernel on a jiffies clock stamps the thread's last
    switch on its old CPU with its task_create's time, recorded before it."""
    pid_of = {k["task"]: int(k["pid"]) for _, n, k in events
              if n == "task_create" and "pid" in k}
    created = {pid_of[k["task"]]: (t, i) for i, (t, n, k) in enumerate(events)
               if n == "task_create" and k["task"] in pid_of}
    left = {pid_of[k["task"]]: (t, i) for i, (t, n, k) in enumerate(events)
            if n == "exit" and k["task"] in pid_of}
    task_of = {pid: task for task, pid in pid_of.items()}
    never = (float("inf"), 0)
    return [(t, pid, task_of[pid], int(k["cpu"])) for i, (t, n, k) in enumerate(events)
            if n == "switch" and (pid := int(k["next_pid"])) in created
            and created[pid] <= (t, i) < left.get(pid, never)]


def off_cpu(events):
    """Switches to a registered task on another CPU than its own: (time, pid, cpu)."""
    own = task_cpus(events)
    return [(t, pid, cpu) for t, pid, _, cpu in registered_switches(events)
            if pid in own and cpu != own[pid]]


def host_timed_runs(scenarios, names):
    """(name, events) of the traced runs of a guest without -icount, whose time
    is the host's: misses are reported (INFO), not judged (rt/README.md)."""
    for name in names:
        if name not in scenarios:
            continue
        events = parse_trace(scenarios[name][1])
        missed = sorted({k["task"] for _, n, k in events if n == "miss"})
        print(f"INFO {name}: deadline misses by tasks {missed or 'none'}")
        yield name, events


def judge_smp(c, scenarios):
    """Placement only."""
    for name, events in host_timed_runs(scenarios, ("partitioned_fp", "partitioned_edf")):
        own = task_cpus(events)
        c.check(len(own) == 5 and len(set(own.values())) > 1,
                f"{name}: tasks on several CPUs", f"CPUs {sorted(own.values())}")
        wrong = off_cpu(events)
        c.check(not wrong, f"{name}: every task runs on its CPU only",
                f"{len(wrong)} switches elsewhere" + (f", first {wrong[0]}" if wrong else ""))


def migrations(events):
    """Jobs resumed on another CPU than they last ran on, from the job events
    (global plugins say cpu= on them): [(time, task, job, from, to)]."""
    last, moved = {}, []
    for t, n, k in events:
        if n not in ("start", "resume") or "cpu" not in k:
            continue
        job, cpu = (k["task"], k["job"]), int(k["cpu"])
        if job in last and last[job] != cpu:
            moved.append((t, k["task"], k["job"], last[job], cpu))
        last[job] = cpu
    return moved


def judge_global(c, scenarios, cpus):
    """Where the tasks ran, from the kernel's switches, and the migrations the
    trace records."""
    for name, events in host_timed_runs(scenarios, ("global_fp", "global_edf")):
        pids = {int(k["pid"]) for _, n, k in events if n == "task_create" and "pid" in k}
        used = {int(k["cpu"]) for _, n, k in events if n == "switch" and int(k["next_pid"]) in pids}
        c.check(len(pids) == 5 and used == set(range(cpus)),
                f"{name}: the tasks run on every real-time CPU and only there", f"CPUs {sorted(used)}")
        moved = migrations(events)
        c.check(bool(moved), f"{name}: preempted jobs resume on another CPU (migrations recorded)",
                f"{len(moved)} migrations" + (f", first {moved[0]}" if moved else ""))


def judge_semi(c, scenarios):
    """examples/semi.toml on two CPUs: from the kernel's switches, the two whole tasks each
    on one CPU (not the same) and the split one on both; from the job events, the split
    task's jobs leaving its first part's CPU for its second, and no other task's moving."""
    for name, events in host_timed_runs(scenarios, ("semi",)):
        cpus = defaultdict(set)
        for _, _, task, cpu in registered_switches(events):
            cpus[task].add(cpu)
        whole = sorted(tuple(v) for task, v in cpus.items() if task != "2")
        c.check(whole == [(0,), (1,)] and cpus.get("2") == {0, 1},
                f"{name}: whole tasks on one CPU each, the split task on both",
                f"CPUs by task {dict(sorted((t, sorted(v)) for t, v in cpus.items()))}")
        moved = migrations(events)
        c.check(bool(moved) and all(task == "2" and (a, b) == (0, 1) for _, task, _, a, b in moved),
                f"{name}: only the split task's jobs migrate, from its first part's CPU to its second",
                f"{len(moved)} migrations" + (f", first {moved[0]}" if moved else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--tolerance-us", type=int, default=1000,
                    help="timer and switch slack allowed per check (us)")
    ap.add_argument("--smp", action="store_true",
                    help="the console of SET=smp (partitioned plugins, several CPUs)")
    ap.add_argument("--global-cpus", type=int, metavar="N",
                    help="the console of SET=global (global plugins) on N CPUs")
    ap.add_argument("--semi", action="store_true",
                    help="the console of SET=semi (semi-partitioned plugin, two CPUs)")
    ap.add_argument("--icount-shift", type=int, default=0, metavar="N",
                    help="the guest's QEMU -icount shift: 2**N guest ns an instruction")
    ap.add_argument("--untimed", action="store_true",
                    help="a debug kernel's console (lockdep, KASAN): judge what ran, the order of "
                         "the schedule and the kernel log, not deadlines and budgets")
    args = ap.parse_args()
    tol = args.tolerance_us * 1000
    with open(args.log, errors="replace") as f:
        text = f.read()
    scenarios = parse_scenarios(text)
    c = Checker(timed=not args.untimed)
    c.check("==== rtsched-guest done ====" in text, "guest finished")
    # The multi-CPU sets combine (SET=multicore runs all three in one boot).
    chosen = [names for on, names in ((args.smp, SMP_SCENARIOS), (args.global_cpus, GLOBAL_SCENARIOS),
                                      (args.semi, SEMI_SCENARIOS)) if on]
    expected = dict.fromkeys(name for names in chosen for name in names) if chosen else SCENARIOS
    for name in expected:
        c.scenario_rc(scenarios, name)
    if args.smp:
        judge_smp(c, scenarios)
    if args.global_cpus:
        judge_global(c, scenarios, args.global_cpus)
    if args.semi:
        judge_semi(c, scenarios)

    for name, what in (("checks", "bad requests refused, unprivileged callers get EPERM"),
                       ("cpu_hotplug", "the real-time CPUs stay online while rtsched is loaded"),
                       ("global_params", "a plugin is not partitioned and global at once"),
                       ("semi_params", "a plugin is not global and semi-partitioned at once"),
                       ("one_step_load", "rtctl load --module: modules and configuration in one program"),
                       ("lowres_timers", "a task started on tick-based timers is warned about"),
                       ("lazy_ring", "no recorder ring before a task runs"),
                       ("release_latency", "the status of 250 reservations, read in batches"),
                       ("ring_enomem", "the ring allocated by the first task, a failed allocation a clear error")):
        if name in scenarios:
            lines = scenarios[name][1]
            fails = [x for x in lines if x.startswith("FAIL")]
            c.check(not fails and any(x.startswith("PASS") for x in lines), what,
                    "; ".join(fails) or f"{sum(x.startswith('PASS') for x in lines)} checks")
    for name in ("fp", "edf", "table3", "table3_first", "hsf_edf"):
        if name in scenarios:
            c.misses(name, parse_trace(scenarios[name][1]))
    for name in ("table3", "table3_first"):
        if name in scenarios:
            c.hsf(name, parse_trace(scenarios[name][1]), tol)
    if "table3_first" in scenarios:
        # The run that allocated the recorder's ring (Table III: 3 servers).
        c.first_jobs("table3_first", parse_trace(scenarios["table3_first"][1]), 3)
    if "hsf_edf" in scenarios:
        c.hsf("hsf_edf", parse_trace(scenarios["hsf_edf"][1]), tol,
              servers_by_deadline=True)
    if "overload" in scenarios:
        events = parse_trace(scenarios["overload"][1])
        c.misses("overload", events, allowed_tasks=(4,))
        c.check(any(n == "miss" and k["task"] == "4" for _, n, k in events),
                "overload: the spinning task misses")
        c.hsf("overload", events, tol)
    if "overrun" in scenarios:
        events = parse_trace(scenarios["overrun"][1])
        c.misses("overrun", events, allowed_tasks=(1,))
        c.task_budget("overrun", events, 1, tol)
    if "kept_away" in scenarios:
        c.kept_away("kept_away", parse_trace(scenarios["kept_away"][1]), 1, tol)
    if "release_latency" in scenarios:
        c.release_latency(parse_jitter(scenarios["release_latency"][1]), 2 ** args.icount_shift)
    if "rmmod_with_tasks" in scenarios:
        lines = scenarios["rmmod_with_tasks"][1]
        c.check(sum("detached policy=0" in x for x in lines) == 2,
                "rmmod returns running tasks to SCHED_OTHER")
    if "load_cycles" in scenarios:
        line = next((x for x in scenarios["load_cycles"][1]
                     if x.startswith("cycles=")), "")
        vals = dict(f.split("=") for f in line.split())
        growth = {k[:-10]: int(vals[k[:-10] + "_after_kb"]) - int(v)
                  for k, v in vals.items() if k.endswith("_before_kb")}
        c.check(bool(growth) and all(g <= LEAK_KB for g in growth.values()),
                "load/unload cycles leak nothing",
                f"{vals.get('cycles')} cycles, growth kB {growth}")
    if "dmesg" in scenarios:
        bad = [x for x in scenarios["dmesg"][1] if KERNEL_TROUBLE.search(x)]
        c.check(not bad, "kernel log clean", "; ".join(bad[:3]))
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
