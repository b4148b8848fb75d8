"""Real boots of the reference device (tests/data/real, recorded by scripts/record-test-logs:
Debian 6.1 generic and cloud kernels, with and without initcall_debug, printk.time=1)."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bootlab.analysis import analyze
from bootlab.sources import NotALog, read
from bootlab.timeline import Clock, Kind, Mark, Phase

REAL = Path(__file__).parent / "data" / "real"


def _path(name: str) -> str:
    return str(REAL / name)


@pytest.mark.parametrize("kernel", ["generic", "cloud"])
@pytest.mark.parametrize("initcalls", [False, True])
def test_capture_phases_from_power_on(kernel, initcalls):
    name = f"{kernel}{'-initcall' if initcalls else ''}"
    a = analyze(read([_path(f"{name}.capture.gz")]))
    phases = [s.phases[0] for s in a.phases.spans]
    assert phases == [Phase.FIRMWARE, Phase.KERNEL_LOAD, Phase.KERNEL_INIT, Phase.INITCALLS, Phase.INIT,
                      Phase.SERVICES, Phase.APPLICATION]
    assert a.boot.meta["host_zero"] == "power-on"
    assert a.boot.meta["kernel_version"].endswith("cloud-amd64" if kernel == "cloud" else "-amd64")
    assert a.phases.end.mark == Mark.READY
    assert a.console.printed and a.console.bytes > 10_000


@pytest.mark.parametrize("kernel", ["generic", "cloud"])
def test_initcall_dmesg_pairs_every_call(kernel):
    path = _path(f"{kernel}-initcall.dmesg.gz")
    text = gzip.decompress(Path(path).read_bytes()).decode()
    returned = len(re.findall(r"initcall \S+ returned", text)) + len(re.findall(r": \S+ took \d+ usecs", text))
    boot = read([path])
    calls = [ev for ev in boot.events if ev.kind == Kind.INITCALL]
    assert len(calls) == returned
    assert not [ev for ev in calls if (ev.attrs or {}).get("unfinished")]
    assert boot.meta["cmdline"].endswith("initcall_debug")


def test_capture_and_dmesg_of_one_boot_merge():
    a = analyze(read([_path("generic-initcall.capture.gz"), _path("generic-initcall.dmesg.gz")]))
    assert a.boot.clocks[Clock.PRINTK].method == "anchors"
    names = [b.name for b in a.initcalls]
    assert "acpi_init" in names[:3]
    # The capture's dmesg dump and the dmesg file report the same initcalls once.
    calls = [ev.name for ev in a.boot.events if ev.kind == Kind.INITCALL and not (ev.attrs or {}).get("fixup")]
    assert len(calls) == len(set(zip(calls, [ev.t for ev in a.boot.events if ev.kind == Kind.INITCALL
                                             and not (ev.attrs or {}).get("fixup")])))
    assert a.critical.kernel_track == "pid 1" and a.critical.kernel_steps > 500
    assert a.critical.kernel_top[0].name == "acpi_init"


def test_cloud_kernel_decompresses_faster_than_generic():
    def load_phase(name):
        a = analyze(read([_path(f"{name}.capture.gz")]))
        return next(s.duration for s in a.phases.spans if s.phases[0] == Phase.KERNEL_LOAD)
    # Debian's generic image is xz-compressed, the cloud image lz4: under TCG the difference
    # is seconds, far above boot-to-boot noise.
    assert load_phase("cloud") < load_phase("generic")


@pytest.mark.parametrize("name", ["generic-initcall.dmesg.gz", "generic-initcall.capture.gz"])
def test_kernel_critical_path_spans_pid_1s_initcalls(name):
    a = analyze(read([_path(name)]))
    cp, boot = a.critical, a.boot
    steps = [ev for ev in boot.of_kind(Kind.INITCALL, Kind.ASYNC_WAIT)
             if ev.track == "pid 1" and ev.dur is not None and ev.t is not None and not (ev.attrs or {}).get("fixup")]
    assert cp.kernel_track == "pid 1" and cp.kernel_steps == len(steps) > 300
    assert cp.kernel_span == max(boot.at_end(ev) for ev in steps) - min(boot.at(ev) for ev in steps)
    assert cp.kernel_total == sum(ev.dur for ev in steps) <= cp.kernel_span


def test_kernel_log_printed_again_after_ready_is_not_counted_twice():
    """The capture holds some kernel lines live on the console and the whole log again
    after ready (the target's dmesg dump): each initcall and marker once, no warning."""
    boot = read([_path("generic-initcall.capture.gz")])
    initcalls = [(e.name, e.t, e.dur, (e.attrs or {}).get("device")) for e in boot.of_kind(Kind.INITCALL)]
    markers = [(e.name, e.t, e.clock) for e in boot.of_kind(Kind.MARKER)]
    assert len(initcalls) == len(set(initcalls)) and len(markers) == len(set(markers))
    assert not any("goes back" in d.message for d in boot.diagnostics)


def _host_dmesg(*options: str) -> bytes | None:
    try:
        out = subprocess.run(["dmesg", *options], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 and out.stdout else None


def test_this_machines_dmesg_reads_alike_in_every_time_format(tmp_path):
    """util-linux dmesg on the machine running the tests: plain, -d, -x, -r,
    --time-format=iso and --time-format=delta give one boot; so does -e (reltime) up to its
    first change of minute, whose line is named in a warning; -T is refused with a clear
    message."""
    plain = _host_dmesg()
    if plain is None:
        pytest.skip("dmesg cannot read the kernel log here")
    # A message logged between two dmesg runs would differ: compare the common lines.
    expected = analyze(read([_write(tmp_path, "plain.txt", plain)]))
    for option in ("-d", "-x", "-r", "--time-format=iso", "--time-format=delta", "-e"):
        data = _host_dmesg(option)
        assert data is not None, option
        got = analyze(read([_write(tmp_path, option.strip("-") + ".txt", data)]))
        n = min(len(expected.boot.logs[0]), len(got.boot.logs[0]))
        minutes = [i for i, line in enumerate(data.decode("utf-8", "replace").splitlines())
                   if re.match(r"\[[A-Z][a-z]{2} ?\d", line)] if option == "-e" else []
        if len(minutes) > 1:  # the time before a change of minute is unknown
            n = min(n, minutes[1])
            assert any(d.line == minutes[1] + 1 and "instead of the time since" in d.message
                       for d in got.boot.diagnostics), option
        want = list(expected.boot.logs[0].t)[:n]
        if option in ("--time-format=delta", "-e"):  # util-linux loses the first stamp that is not zero
            first = next((t for t in want if t), 0)
            want = [t - first if t else t for t in want]
        assert list(got.boot.logs[0].t)[:n] == want, option
        if option != "-e":
            assert got.phases.boundaries.keys() == expected.phases.boundaries.keys(), option
    with pytest.raises(NotALog, match="dmesg -T"):
        read([_write(tmp_path, "T.txt", _host_dmesg("-T"))])


def _write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


JOURNALD = "/lib/systemd/systemd-journald"


def test_a_real_journal_reads_alike_as_json_and_short_monotonic(tmp_path):
    """A real systemd-journald (run in a private /run) takes in this machine's kernel log
    and a program's ready line; journalctl's -o json, -o json-pretty and -o short-monotonic
    of that journal give one boot."""
    if os.geteuid() != 0 or not os.path.exists(JOURNALD) or shutil.which("unshare") is None:
        pytest.skip("needs root, unshare and systemd-journald")
    out = {fmt: tmp_path / f"journal-{fmt}.txt" for fmt in ("json", "json-pretty", "short-monotonic")}
    dump = "; ".join(f"journalctl -D /run/log/journal -o {fmt} > {path}" for fmt, path in out.items())
    script = ("mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal /run/log/journal && "
              f"{{ {JOURNALD} & pid=$!; sleep 2; echo 'BOOTLAB READY' | systemd-cat -t grabber; sleep 1; "
              f"{dump}; kill $pid; }}")
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, timeout=60)
    if done.returncode != 0 or not out["json"].stat().st_size:
        pytest.skip(f"journald did not run here: {done.stderr.decode()[-200:]}")
    reads = {fmt: analyze(read([str(path)])) for fmt, path in out.items()}
    assert {fmt: a.boot.sources[0].format for fmt, a in reads.items()} == {
        "json": "journal-json", "json-pretty": "journal-json", "short-monotonic": "journal"}
    expected = reads["short-monotonic"]
    assert expected.phases.end.mark == Mark.READY and "BOOTLAB READY" in expected.phases.end.evidence
    for fmt in ("json", "json-pretty"):
        a = reads[fmt]
        assert a.phases.end.at == expected.phases.end.at, fmt
        assert [(s.name, s.duration) for s in a.phases.spans] == [(s.name, s.duration) for s in expected.phases.spans]
        assert not [d for d in a.boot.diagnostics if d.severity == "error"], fmt


def test_a_kernel_log_that_lost_its_start_says_so(tmp_path):
    """A saved kernel log begins with the kernel's first message at time zero; one whose
    start the log buffer overwrote (here: cut) says what is missing and how to keep it."""
    lines = gzip.decompress((REAL / "generic-initcall.dmesg.gz").read_bytes()).splitlines(keepends=True)
    assert not [n for n in analyze(read([_write(tmp_path, "whole.txt", b"".join(lines))])).phases.notes
                if "begins at" in n]
    cut = analyze(read([_write(tmp_path, "cut.txt", b"".join(lines[400:]))]))
    (note,) = [n for n in cut.phases.notes if "begins at" in n]
    assert "cut.txt begins at 1.8" in note and "log_buf_len=" in note
