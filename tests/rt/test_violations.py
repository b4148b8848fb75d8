"""A bound exceeded is a violation (issue 14, item 5): the recorded Table III trace with one
response time moved above its analytical bound is flagged by `rt check` (exit 1), by
`rt trace` in text and JSON, and in the HTML, with the likely cause when the boot's capture
says the guest ran without -icount."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from bootlab.rt.check import capture_meta, likely_cause
from bootlab.rt.report import html_section

DATA = Path(__file__).parent / "data"
REAL = Path(__file__).parents[1] / "data" / "real"
CONFIG = DATA / "guest_table3.toml"


def injected(tmp_path: Path) -> Path:
    """control's job 1 completes 12.719 ms after its release (the analysis bounds it by 10 ms)."""
    lines = (DATA / "guest_table3.trace").read_text().splitlines()
    moved = ["4049615066 complete task=1 job=1" if line.endswith(" complete task=1 job=1") else line for line in lines]
    head = [line for line in moved if line.startswith("#")]
    body = sorted((line for line in moved if not line.startswith("#")), key=lambda line: int(line.split()[0]))
    path = tmp_path / "injected.trace"
    path.write_text("\n".join(head + body) + "\n")
    return path


def test_the_recorded_trace_has_no_violation(rt_cli):
    status, out, _ = rt_cli("trace", DATA / "guest_table3.trace", "--config", CONFIG)
    assert status == 0 and "VIOLATION" not in out
    assert 'class="violation"' not in html_section(DATA / "guest_table3.trace", CONFIG)


def test_check_fails_on_a_response_above_its_bound(rt_cli, tmp_path):
    capture = tmp_path / "boot.capture"
    capture.write_bytes(gzip.decompress((REAL / "generic.capture.gz").read_bytes()))
    status, out, _ = rt_cli("check", CONFIG, injected(tmp_path), "--all", "--capture", capture)
    assert status == 1
    assert "control job 1: response time above the analytical bound: expected <= 10 ms, found 12.719397 ms" in out
    assert "likely cause: the guest ran under QEMU without -icount" in out


def test_trace_report_flags_it_in_text_json_and_html(rt_cli, tmp_path):
    trace = injected(tmp_path)
    status, out, _ = rt_cli("trace", trace, "--config", CONFIG)
    assert status == 0
    assert "VIOLATION: control: worst response 12.719 ms is above its analytical bound of 10.000 ms (1 of 50 completed jobs above it)" in out
    assert out.splitlines()[5].rstrip().endswith("ABOVE BOUND")   # control's row of the tasks table
    status, out, _ = rt_cli("trace", trace, "--config", CONFIG, "--format", "json")
    doc = json.loads(out)
    assert doc["violations"] == ["control: worst response 12.719 ms is above its analytical bound of 10.000 ms (1 of 50 completed jobs above it)"]
    assert [t["label"] for t in doc["tasks"] if t["bound_exceeded"]] == ["control"]
    html = html_section(trace, CONFIG, "a cause")
    assert '<tr class="violation" title="response time above the analytical bound"><td>control</td>' in html
    assert "1 violation of the analysis" in html and "likely cause: a cause" in html


def test_likely_cause_reads_the_capture_header():
    generic = capture_meta(gzip.decompress((REAL / "generic.capture.gz").read_bytes()))
    assert "without -icount" in likely_cause(generic)
    assert likely_cause({**generic, "argv": generic["argv"] + ["-icount", "shift=4,sleep=off"]}) is None
    assert likely_cause(capture_meta(b"not a capture\n")) is None


def test_demo_prints_and_highlights_it(tmp_path, capsys):
    """The demo reads the trace from the console capture of the boot that ran it."""
    from bootlab.cli.demo import scheduler_section
    from bootlab.sources.bootlab_capture import record

    boot = gzip.decompress((REAL / "generic.capture.gz").read_bytes())
    printed = (["==== rtsched-scenario table3 begin ====", "==== rtsched-trace begin ===="]
               + injected(tmp_path).read_text().splitlines()
               + ["==== rtsched-trace end ====", "==== rtsched-scenario table3 end ===="])
    capture = boot + b"".join(record(9_000_000_000 + i, "|", line.encode()) for i, line in enumerate(printed))

    section = scheduler_section(capture, {"/rt/table3.toml": str(CONFIG)}, "run 1, QEMU TCG without -icount")
    out = capsys.readouterr().out
    assert "deadline misses: 0" in out and "VIOLATION: control: worst response 12.719 ms" in out
    assert "likely cause: the guest ran under QEMU without -icount" in out
    assert 'class="violation"' in section.html and "without -icount" in section.html
