#!/usr/bin/env python3
"""Where the reference device's kernel spends a stretch of its boot that prints nothing:
the guest's program counter sampled through QEMU's monitor, between two console lines.

The x86 reference device is booted from its target file with its own QEMU command line
(without `quiet`, so that the kernel's `pr_info` lines bound the stretch), plus a monitor
socket; `info registers` is asked as fast as QEMU answers (about 1.5–3 kHz under TCG) and
each answer stamped on the host's clock, as is each console line (read unthrottled).  The
samples between the first line holding FROM and the first holding TO are counted by
function, named from the guest's own /proc/kallsyms (read by one more boot of the same
kernel, `nokaslr`).

Under TCG the RIP QEMU reports is the one it last wrote back (at the end of a translation
block, or at each iteration of a string instruction): right to the function in most
cases, to the code page at worst.  Sampling slows the guest by a few per cent.

    .venv/bin/python bench/kernel_pc_samples.py demo/camera-built.toml --boots 4 \\
        --from "Freeing initrd memory" --to "Freeing unused kernel image (initmem)"
"""

from __future__ import annotations

import argparse
import bisect
import collections
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from bootlab.targets import reference  # noqa: E402

_STAMP = re.compile(r"\[\s*(\d+\.\d+)\]")


def _argv(built: reference.Built, append: str) -> list[str]:
    argv = built.qemu_argv()
    argv[argv.index("-append") + 1] = append
    return argv


def _without_quiet(cmdline: str) -> str:
    return " ".join(word for word in cmdline.split() if word != "quiet")


def kallsyms(built: reference.Built) -> tuple[list[int], list[str]]:
    """The kernel's text symbols, from /proc/kallsyms of a boot that prints them."""
    script = "mount -t proc p /proc; cat /proc/kallsyms; reboot -f"  # QEMU exits (-no-reboot)
    argv = _argv(built, f'{_without_quiet(built.cmdline)} quiet nokaslr rdinit=/bin/sh -- -c "{script}"')
    out = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=120).stdout
    table = sorted((int(a, 16), name) for a, kind, name in
                   (line.split()[:3] for line in out.splitlines() if len(line.split()) >= 3)
                   if kind in "tTwW" and re.fullmatch(r"[0-9a-f]{16}", a))
    if not table:
        sys.exit("no symbols read from /proc/kallsyms (a kernel without CONFIG_KALLSYMS?)")
    return [a for a, _ in table], [n for _, n in table]


def sampled_boot(built: reference.Built, seconds: float) -> tuple[list[tuple[float, str]], list[tuple[float, int]]]:
    """One boot: its console lines and its RIP samples, each with its host time."""
    with tempfile.TemporaryDirectory() as tmp:
        monitor = os.path.join(tmp, "monitor")
        argv = _argv(built, _without_quiet(built.cmdline) + " nokaslr") + ["-monitor", f"unix:{monitor},server,nowait"]
        qemu = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        lines: list[tuple[float, str]] = []

        def read() -> None:
            for line in qemu.stdout:
                lines.append((time.monotonic(), line.decode(errors="replace")))

        threading.Thread(target=read, daemon=True).start()
        while not os.path.exists(monitor):
            time.sleep(0.001)
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(monitor)

        def ask(command: str) -> str:
            sock.sendall(command.encode() + b"\n")
            answer = b""
            while not answer.endswith(b"(qemu) "):
                answer += sock.recv(65536)
            return answer.decode(errors="replace")

        ask("")
        samples: list[tuple[float, int]] = []
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            m = re.search(r"RIP=([0-9a-f]+)", ask("info registers"))
            if m:
                samples.append((time.monotonic(), int(m.group(1), 16)))
        qemu.kill()
        qemu.wait()
        return lines, samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("target", help="a reference device's target file")
    ap.add_argument("--from", dest="start", required=True, help="the console line that opens the stretch")
    ap.add_argument("--to", dest="end", required=True, help="the console line that closes it")
    ap.add_argument("--boots", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3.0, help="how long each boot is sampled")
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args()
    built = reference.build(reference.load(args.target))
    addresses, names = kallsyms(built)

    def function(pc: int) -> str:
        i = bisect.bisect_right(addresses, pc) - 1
        return names[i] if i >= 0 and pc >= addresses[0] else "[outside the kernel's text]"

    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for n in range(args.boots):
        lines, samples = sampled_boot(built, args.seconds)
        opened = next(((t, text) for t, text in lines if args.start in text), None)
        closed = next(((t, text) for t, text in lines if args.end in text), None)
        if opened is None or closed is None:
            print(f"boot {n + 1}: the console did not print both lines in {args.seconds:g} s")
            continue
        printk = [float(m.group(1)) if m else None for m in (_STAMP.search(opened[1]), _STAMP.search(closed[1]))]
        inside = [function(pc) for t, pc in samples if opened[0] <= t <= closed[0]]
        counts = collections.Counter(inside)
        kernel = f", printk {1000 * (printk[1] - printk[0]):.0f} ms" if None not in printk else ""
        print(f"boot {n + 1}: {1000 * (closed[0] - opened[0]):.0f} ms on the host{kernel}, {len(inside)} samples")
        for name, count in counts.most_common(args.top):
            print(f"  {100 * count / len(inside):5.1f}%  {name}")


if __name__ == "__main__":
    main()
