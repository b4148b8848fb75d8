"""Gantt (SVG, PNG), Grasp, Perfetto, the text/JSON trace report and the HTML fragment."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser
from pathlib import Path

from bootlab.rt.config import load_config
from bootlab.rt.gantt import gantt_svg
from bootlab.rt.grasp import grasp_trace
from bootlab.rt.perfetto import perfetto_json
from bootlab.rt.report import html_section, server_stats, task_stats
from bootlab.rt.schedule import Schedule
from bootlab.rt.simulate import ExecOverride, simulate
from bootlab.rt.trace import format_trace, parse_trace

DATA = Path(__file__).parent / "data"
MS = 1_000_000
SVG = "{http://www.w3.org/2000/svg}"


def table3_trace(overrides=()):
    config = load_config(DATA / "table3_tasks.toml")
    return config, parse_trace(format_trace(simulate(config, 112 * MS, overrides), config.plugin), "table3.trace")


def test_svg_gantt_has_a_row_per_server_and_task():
    config, trace = table3_trace()
    schedule = Schedule.from_trace(trace)
    schedule.name_from(config)
    root = ElementTree.fromstring(gantt_svg(schedule))
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("x") == "4"]   # the row labels, not the legend
    assert labels[:4] == ["Server0", "control (Server0)", "sensor (Server0)", "Server1"]
    titles = {t.text.split(":")[0] for t in root.iter(f"{SVG}title")}   # "control job 4: 2 ms from 96 ms"
    assert "control job 4" in titles and "Server2 active" in titles


def test_misses_are_drawn_in_red():
    config, trace = table3_trace([ExecOverride(4, 30 * MS, job=0)])
    svg = gantt_svg(Schedule.from_trace(trace))
    assert re.search(r'<g class="at" data-s="\d+" [^>]*><title>job 0 deadline missed</title><path [^>]*fill="#d62728"', svg)


def test_grasp_export():
    config, trace = table3_trace()
    schedule = Schedule.from_trace(trace)
    schedule.name_from(config)
    lines = grasp_trace(trace, schedule).splitlines()
    assert 'newTask task1 -priority 0 -name "control (Server0)" -color #4e79a7' in lines
    assert 'newServer server2 -priority 2 -budget 8000 -capacity 8000 -name "Server2"' in lines
    assert "plot 0 serverReplenished server0 4000" in lines
    assert "plot 0 jobArrived job1.0 task1" in lines
    assert "plot 12000 serverPreempted server2" in lines
    assert "plot 20000 serverDepleted server2" in lines
    assert "plot 2000 jobCompleted job1.0" in lines


def test_perfetto_export_uses_the_shared_writer():
    _, trace = table3_trace()
    doc = json.loads(perfetto_json(Schedule.from_trace(trace)))
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"server0", "task1"} <= names
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["name"] == "task4 job 0"]
    assert [(s["ts"], s["dur"]) for s in slices] == [(8000.0, 4000.0), (16000.0, 2000.0)]
    budgets = sorted((e["ts"], e["args"]["budget_ms"]) for e in doc["traceEvents"] if e["ph"] == "C" and e["name"] == "server2 budget")
    assert budgets[:4] == [(0.0, 8.0), (12000.0, 4.0), (20000.0, 0.0), (28000.0, 8.0)]


def test_stats_per_task_and_server():
    config, trace = table3_trace([ExecOverride(4, 30 * MS, job=0)])
    schedule = Schedule.from_trace(trace)
    grabber = next(s for s in task_stats(schedule) if s.task == 4)
    # Job 0 runs 30 ms instead of 6: it misses, and so does job 1 queued behind it.
    assert grabber.misses == 2 and grabber.worst_lateness == 38 * MS
    assert all(s.overruns == 0 and s.worst_used == s.budget for s in server_stats(schedule))


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.tags += [f"@{name}={value}" for name, value in attrs if name in ("src", "href")]

    def handle_data(self, data):
        self.text.append(data)


def test_html_section_is_self_contained(tmp_path):
    config, trace = table3_trace([ExecOverride(1, 30 * MS, job=1)])
    fragment = html_section(trace, config)
    parsed = _Collector()
    parsed.feed(fragment)
    assert parsed.tags[0] == "section" and "svg" in parsed.tags and parsed.tags.count("table") == 3
    assert "script" not in parsed.tags and not [t for t in parsed.tags if t.startswith("@")]
    text = " ".join(parsed.text)
    assert "control" in text and "Missed deadlines" in text
    # The same from files, without a configuration.
    path = tmp_path / "t.trace"
    path.write_text(format_trace(trace.events, "hsf-fp"))
    assert "task1" in html_section(path)


def test_cli_trace_writes_every_view(rt_cli, tmp_path):
    _, trace = table3_trace()
    path = tmp_path / "table3.trace"
    path.write_text(format_trace(trace.events, "hsf-fp"))
    outputs = {kind: tmp_path / f"out.{kind}" for kind in ("svg", "png", "grasp", "perfetto")}
    status, out, _ = rt_cli("trace", path, "--config", DATA / "table3_tasks.toml",
                            *[arg for kind, file in outputs.items() for arg in (f"--{kind}", file)])
    assert status == 0
    assert "control   1  Server0" in out and "Servers: budget used per period" in out
    assert outputs["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert outputs["svg"].read_text().startswith("<svg")
    assert outputs["grasp"].read_text().startswith("# Grasp trace")
    json.loads(outputs["perfetto"].read_text())
    status, out, _ = rt_cli("trace", path, "--format", "json")
    doc = json.loads(out)
    assert doc["plugin"] == "hsf-fp" and doc["damage"] is None and len(doc["jobs"]) == 16


def test_cli_trace_damaged_and_unreadable(rt_cli, tmp_path):
    damaged = tmp_path / "damaged.trace"
    damaged.write_text("# rtsched-trace 1 plugin=fp\n0 release task=1 job=0 deadline=5\n5 complete task=\n")
    status, out, err = rt_cli("trace", damaged)
    assert status == 0 and "line 3: complete: task= is not a non-negative integer" in err
    assert "damage: line 3" in out and "task1" in out
    garbage = tmp_path / "garbage.trace"
    garbage.write_bytes(b"\x00\x01\x02")
    status, _, err = rt_cli("trace", garbage)
    assert status == 2 and "no readable events" in err


def test_sched_switch_gives_the_kernels_view():
    trace = parse_trace(
        "# rtsched-trace 1 plugin=fp\n"
        "0 task_create task=1 pid=321 period=10000000 wcet=2000000 deadline=10000000 prio=0\n"
        "0 release task=1 job=0 deadline=10000000\n"
        "100 switch cpu=0 prev_pid=0 prev_comm=swapper/0 prev_state=R next_pid=321 next_comm=control\n"
        "100 start task=1 job=0\n"
        "1000100 switch cpu=0 prev_pid=321 prev_comm=control prev_state=R next_pid=55 next_comm=ksoftirqd/0\n"
        "1000100 preempt task=1 job=0\n"
        "1200100 switch cpu=0 prev_pid=55 prev_comm=ksoftirqd/0 prev_state=S next_pid=321 next_comm=control\n"
        "1200100 resume task=1 job=0\n"
        "2200100 complete task=1 job=0\n"
        "2200100 switch cpu=0 prev_pid=321 prev_comm=control prev_state=S next_pid=0 next_comm=swapper/0\n")
    schedule = Schedule.from_trace(trace)
    assert [(c.pid, c.task, c.end - c.start) for c in schedule.cpu[:3]] == [(321, 1, 1_000_000), (55, None, 200_000), (321, 1, 1_000_000)]
    (stats,) = task_stats(schedule)
    assert (stats.executed, stats.on_cpu, stats.worst_response) == (2_000_000, 2_000_000, 2_200_100)
    svg = gantt_svg(schedule)
    assert "<title>ksoftirqd/0 55: 0.2 ms from " in svg and "CPU (sched_switch)" in svg


def test_cpu_time_from_switches_on_several_cpus():
    # Task 1 (pid 10) on CPU 0 for 3 ms while CPU 1 switches twice: each CPU's switches
    # follow each other, not the other CPU's.
    trace = parse_trace("\n".join([
        "# rtsched-trace 1 plugin=partitioned-fp",
        "0 task_create task=1 pid=10 period=10000000 wcet=3000000 deadline=10000000 prio=0 cpu=0",
        "0 switch cpu=0 prev_pid=0 prev_comm=idle prev_state=R next_pid=10 next_comm=t",
        "1000000 switch cpu=1 prev_pid=0 prev_comm=idle prev_state=R next_pid=20 next_comm=u",
        "2000000 switch cpu=1 prev_pid=20 prev_comm=u prev_state=S next_pid=0 next_comm=idle",
        "3000000 switch cpu=0 prev_pid=10 prev_comm=t prev_state=S next_pid=0 next_comm=idle",
        "4000000 overflow lost=0",
    ]) + "\n")
    stats = {s.task: s for s in task_stats(Schedule.from_trace(trace))}
    assert stats[1].on_cpu == 3_000_000
    # The Gantt chart draws each CPU's switches in a row of its own.
    svg = gantt_svg(Schedule.from_trace(trace))
    assert "CPU 0 (sched_switch)" in svg and "CPU 1 (sched_switch)" in svg and "CPU (sched_switch)" not in svg
