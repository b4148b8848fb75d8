"""bench/rt_smp: how long the host kept each of the guest's vCPUs off a CPU.

Guest time under TCG without -icount is the host's: while the host runs something else in
place of a vCPU's thread (or the thread waits for a lock of QEMU's), the guest's clock goes
on and that vCPU does nothing.  This samples, every millisecond, each vCPU thread's CPU time
on the host (/proc/PID/task/TID/schedstat, its first field) beside the host's
CLOCK_MONOTONIC: what a sample interval's wall time has more than that CPU time, the vCPU
stood still.  analyze.py maps the samples to guest time and charges what stood still to the
jobs it delayed.

The QEMU is the one started under PARENT (bench/guest.sh's shell); its vCPU threads are
named by QEMU's monitor (query-cpus-fast, on the QMP socket bootlab gives every QEMU).

Usage: host_steal.py PARENT OUT.  OUT:
    # host_steal 1 cpus=0:TID,1:TID
    HOST_NS CPU_NS_0 CPU_NS_1
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from qemu.qmp import QMPError

from bootlab.targets.qemu_cpus import Monitor

PERIOD = 0.001  # s between samples
WAIT = 600      # s to wait for QEMU and its monitor


def _parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[1])


def _descends(pid: int, ancestor: int) -> bool:
    try:
        while pid > 1:
            pid = _parent_of(pid)
            if pid == ancestor:
                return True
    except (OSError, ValueError):
        pass
    return False


def find_qemu(parent: int) -> tuple[int, Monitor] | None:
    """The QEMU under `parent` and its monitor, once it has one."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if not os.path.basename(argv[0]).startswith("qemu-system"):
            continue
        monitor = Monitor.of(argv)
        if monitor and _descends(int(entry.name), parent):
            return int(entry.name), monitor
    return None


def main(parent: int, out: str) -> int:
    deadline = time.monotonic() + WAIT
    threads = None
    while threads is None:
        if time.monotonic() > deadline:
            print(f"host_steal: no QEMU with a monitor under pid {parent} after {WAIT} s", file=sys.stderr)
            return 2
        found = find_qemu(parent)
        if found:
            pid, monitor = found
            try:
                threads = monitor.vcpu_threads()
            except (OSError, QMPError):
                pass  # the monitor is not listening yet
        time.sleep(0.05)
    cpus = sorted(threads)
    fds = [os.open(f"/proc/{pid}/task/{threads[c]}/schedstat", os.O_RDONLY) for c in cpus]
    with open(out, "w") as f:
        f.write(f"# host_steal 1 cpus={','.join(f'{c}:{threads[c]}' for c in cpus)}\n")
        while True:
            try:
                now = time.monotonic_ns()
                used = [os.pread(fd, 128, 0).split(maxsplit=1)[0].decode() for fd in fds]
            except (OSError, IndexError):
                break  # QEMU exited
            if not all(used):
                break
            f.write(f"{now} {' '.join(used)}\n")
            time.sleep(PERIOD)
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), sys.argv[2]) if len(sys.argv) == 3 else 2)
