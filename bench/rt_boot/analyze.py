"""bench/rt_boot: the cost of each loading step from the marks of bench.sh in the guest's
kernel log (guest ns under -icount: the numbers repeat), against the empty module.

Usage: analyze.py CONSOLE.log"""

from __future__ import annotations

import re
import statistics
import sys

MARK = re.compile(r"\[\s*(\d+)\.(\d{6})\] rtboot: (\w+)\.(start|end)")
ROUND = re.compile(r"rtboot: round (\w+)")
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


# The traced round (bench.sh): ftrace's function_graph output with syscall and process events.
TRACE_LINE = re.compile(r"^\s*(\d+)\.(\d{6}) \|\s+\d+\)\s+[+!#*@$]?\s*(?:([\d.]+) us)?\s*\|(\s*)(.*?)\s*$")
SWITCH = re.compile(r"^\s*\d+\)\s+\S+-\d+\s+=>\s+\S+-(\d+)")
SYS_ENTER = re.compile(r"/\* sys_enter: NR (\d+) ")
SYS_EXIT = re.compile(r"/\* sys_exit: NR (-?\d+) = (-?\d+)")
FORK = re.compile(r"/\* sched_process_fork: .* child_pid=(\d+)")
EXEC = re.compile(r"/\* sched_process_exec: filename=(\S+)")
MACHINE = re.compile(r"rtboot: machine (\w+)")
# The system calls the split needs, by the machine bench.sh names (x86_64's table, and the
# generic one arm64 uses: arch/x86/entry/syscalls/syscall_64.tbl, include/uapi/asm-generic/unistd.h).
SYSCALLS = {
    "x86_64": {"read": 0, "openat": 257, "ioctl": 16, "clone": 56, "execve": 59, "wait4": 61,
               "exit_group": 231, "finit_module": 313},
    "aarch64": {"read": 63, "openat": 56, "ioctl": 29, "clone": 220, "execve": 221, "wait4": 260,
                "exit_group": 94, "finit_module": 273},
}
# The traced round's children of the shell, in order, and the modules onestep loads.
TRACED_STEPS = ("empty", "onestep", "rtctl")
MODULES = {"empty": ("rtboot_empty.ko",), "onestep": ("rtsched.ko", "rtsched_hsf.ko")}


def trace_events(text: str) -> list[tuple[int, int, str, str]]:
    """(time ns, pid, kind, detail) from the traced round; kind: enter (detail: the system
    call's name, or its number if the split does not need it), exit ("NAME RET"), fork (child
    pid), exec, call (a loader phase's "name µs depth" at its start; depth: the spaces before
    the name).  The machine is bench.sh's mark; a console without it is x86_64's (the first
    runs were)."""
    machine = m[1] if (m := MACHINE.search(text)) else "x86_64"
    name = {nr: call for call, nr in SYSCALLS[machine].items()}
    block = text.split("==== rtboot trace begin ====", 1)[-1].split("==== rtboot trace end ====", 1)[0]
    out: list[tuple[int, int, str, str]] = []
    pid, stack = 0, []
    for line in block.splitlines():
        m = SWITCH.match(line)
        if m:
            pid = int(m[1])
            continue
        m = TRACE_LINE.match(line)
        if not m:
            continue
        ns = int(m[1]) * 1_000_000_000 + int(m[2]) * 1000
        body, depth = m[5], len(m[4])
        if (e := SYS_ENTER.search(body)):
            out.append((ns, pid, "enter", name.get(int(e[1]), e[1])))
        elif (e := SYS_EXIT.search(body)):
            out.append((ns, pid, "exit", f"{name.get(int(e[1]), e[1])} {e[2]}"))
        elif (e := FORK.search(body)):
            out.append((ns, pid, "fork", e[1]))
        elif (e := EXEC.search(body)):
            out.append((ns, pid, "exec", e[1]))
        elif body.endswith("{"):
            stack.append(body[:-1].strip().removesuffix("()"))
        elif body == "}":   # stamped at its return
            out.append((ns - round(float(m[3]) * 1000), pid, "call", f"{stack.pop()} {m[3]} {depth}"))
        elif body.endswith("();") and m[3]:   # a leaf, stamped at its entry
            out.append((ns, pid, "call", f"{body[:-3]} {m[3]} {depth}"))
    return out


def phases(events: list[tuple[int, int, str, str]], child: int, modules: tuple[str, ...]) -> list[tuple[str, float]]:
    """Where one child of the shell spent its time, in µs, from the shell's clone to its wait4."""
    clone = max(t for t, p, k, d in events if k == "enter" and d == "clone" and
                t <= next(t2 for t2, _, k2, d2 in events if k2 == "fork" and d2 == str(child)))
    waited = next(t for t, p, k, d in events if p != child and k == "exit" and d.startswith("wait4 ") and t > clone)
    mine = [e for e in events if e[1] == child]
    calls = [e for e in events if e[1] == child and e[2] == "call"]
    sys = [(t, k, d.split()[0]) for t, _, k, d in mine if k in ("enter", "exit")]
    rows: list[tuple[str, float]] = [("fork (the shell's clone to the child's first system call)", (sys[0][0] - clone) / 1000)]
    enters = [(i, t, nr) for i, (t, k, nr) in enumerate(sys) if k == "enter"]

    def exit_of(i: int) -> int:
        return next(t for t, k, _ in sys[i + 1:] if k == "exit")

    execs = [(i, t) for i, t, nr in enters if nr == "execve"]
    if execs:
        i, t = execs[0]
        rows.append(("exec", (exit_of(i) - t) / 1000))
        start = exit_of(i)
        rows.append(("C library start-up (exec to its first openat)", (next(t for _, t, nr in enters if nr == "openat" and t > start) - start) / 1000))
    opens = [(i, t) for i, t, nr in enters if nr == "openat"]
    finits = [(i, t) for i, t, nr in enters if nr == "finit_module"]
    for n, (i, t) in enumerate(finits):
        opened = max(t2 for _, t2 in opens if t2 < t)
        end = exit_of(i)
        name = modules[n] if n < len(modules) else f"module {n + 1}"
        rows.append((f"finit_module {name} (open to return)", (end - opened) / 1000))
        inside = [(t2, *c.split()) for t2, _, _, c in calls if t < t2 <= end]
        top = min((int(c[3]) for c in inside), default=0)
        # Each phase once (summed), parents before their children; the loader's steps that
        # are no functions of their own (inlined in load_module) are the rest.
        spent: dict[tuple[int, str], float] = {}
        for t2, fn, us, depth in sorted(inside, key=lambda c: (c[0], int(c[3]))):
            spent[(int(depth), fn)] = spent.get((int(depth), fn), 0.0) + float(us)
        for (depth, fn), us in spent.items():
            if us >= 5:
                rows.append((f"  {'  ' * (depth > top)}{fn}", us))
        rows.append(("  the rest: ELF checks, copying sections, symbols, relocations", (end - opened) / 1000 -
                     sum(us for (depth, _), us in spent.items() if depth == top)))
    ioctls = [(i, t) for i, t, nr in enters if nr == "ioctl"]
    reads = [(i, t) for i, t, nr in enters if nr == "read" and (not finits or t < finits[0][1])]
    if reads and execs:
        # The configuration is the first file rtctl opens; read, then parsed and admitted
        # before the next file is opened: the kernel's throttling settings (/proc/sys/kernel/
        # sched_rt_*, which the admission's note compares with), or else a module.
        opened = max(t for _, t in opens if t < reads[0][1])
        parsed = next(t for _, t in opens if t > reads[0][1])
        read_end = max(t for t, k, _ in sys if k == "exit" and t < parsed)
        rows.append(("configuration: open and read", (read_end - opened) / 1000))
        rows.append(("configuration: parse and admission (user time)", (parsed - read_end) / 1000))
        others = [t for _, t in opens if parsed <= t < (finits[0][1] if finits else ioctls[0][1])]
        if len(others) > 1:   # the last is the module's (or /dev/rtsched's) open
            rows.append((f"the throttling settings: {len(others) - 1} files opened and read", (others[-1] - parsed) / 1000))
    if ioctls:
        opened = max(t for _, t in opens if t < ioctls[0][1])
        rows.append((f"{len(ioctls)} ioctls on /dev/rtsched (open to the last)", (exit_of(ioctls[-1][0]) - opened) / 1000))
    leave = next(t for _, t, nr in enters if nr == "exit_group")
    rows.append(("exit (exit_group to the shell's wait4 returning)", (waited - leave) / 1000))
    counted = sum(us for label, us in rows if not label.startswith(" "))
    rows.append(("other (user code between, output)", (waited - clone) / 1000 - counted))
    rows.append(("total", (waited - clone) / 1000))
    return rows


def print_traced(text: str) -> None:
    events = trace_events(text)
    children = [int(d) for _, _, k, d in events if k == "fork"]
    if not children:
        print("no traced round (tracefs not available?)")
        return
    print("\ntraced round (ftrace: syscalls, fork/exec/exit, the loader's phases; tracing adds its own cost), µs")
    for n, step in enumerate(TRACED_STEPS):
        try:
            rows = phases(events, children[n], MODULES.get(step, ()))
        except (IndexError, StopIteration, ValueError):
            print(f"{step}: its trace is incomplete (the trace buffer full, or the step failed)")
            continue
        print(f"{step}:")
        for label, us in rows:
            print(f"  {label:<66}{us:>8.0f}")


def main() -> int:
    try:
        text = open(sys.argv[1], errors="replace").read()
    except OSError as err:
        print(f"{sys.argv[1]}: {err.strerror}", file=sys.stderr)
        return 2
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
    print_traced(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
