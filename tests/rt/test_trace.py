"""Reading recorder traces: the documented example, damage (the readable prefix is kept
and the damage located), growth of the format, and garbage that must never raise."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bootlab.rt.config import load_config
from bootlab.rt.gantt import gantt_svg
from bootlab.rt.grasp import grasp_trace
from bootlab.rt.perfetto import perfetto_json
from bootlab.rt.report import to_dict, to_text
from bootlab.rt.schedule import Schedule
from bootlab.rt.simulate import simulate
from bootlab.rt.trace import format_trace, parse_trace

DATA = Path(__file__).parent / "data"
MS = 1_000_000

# The example of docs/rt-formats.md, as the recorder writes it (switch lines out of order).
DOC_EXAMPLE = """\
# rtsched-trace 1 plugin=hsf-fp
1000000 server_create server=0 period=12000000 budget=4000000 prio=0
1000000 task_create task=1 pid=123 server=0 period=24000000 wcet=2000000 deadline=24000000 prio=0
1000000 replenish server=0 budget=4000000
1000000 release task=1 job=0 deadline=25000000
1000000 server_resume server=0
1000000 start task=1 job=0
1500000 preempt task=1 job=0
1700000 resume task=1 job=0
3000000 complete task=1 job=0
5000000 deplete server=0
5000000 server_preempt server=0
25000000 miss task=1 job=3 deadline=25000000
1234567 switch cpu=0 prev_pid=123 prev_comm=task1 prev_state=R next_pid=0 next_comm=swapper/0
1300000 overflow lost=17
"""


def simulated_text() -> str:
    config = load_config(DATA / "table3_tasks.toml")
    return format_trace(simulate(config, 120 * MS), config.plugin)


def test_documented_example():
    trace = parse_trace(DOC_EXAMPLE, "doc")
    assert trace.plugin == "hsf-fp" and trace.problems == []
    assert [e.time for e in trace.events] == sorted(e.time for e in trace.events)
    schedule = Schedule.from_trace(trace)
    assert [(g.start, g.end) for g in schedule.segments] == [(1_000_000, 1_500_000), (1_700_000, 3_000_000)]
    assert [(w.start, w.end) for w in schedule.windows] == [(1_000_000, 5_000_000)]
    job = schedule.jobs[(1, 0)]
    assert (job.response, job.lateness, job.executed) == (2_000_000, -22_000_000, 1_800_000)
    assert schedule.tasks[1]["pid"] == 123
    assert schedule.cpu[0].pid == 0 and schedule.overflows[0]["lost"] == 17
    assert schedule.anomalies == []


def test_truncated_line_keeps_the_prefix_and_says_where():
    text = simulated_text()
    cut = text[: text.index(" release task=3 job=1") + len(" release task=3 j")]
    trace = parse_trace(cut, "cut")
    assert trace.damage is not None
    assert trace.damage.line == cut.count("\n") + 1
    assert trace.damage.message == "'j' is not key=value"
    assert any("no newline" in p.message for p in trace.problems)
    assert trace.events and all(e.time <= 40 * MS for e in trace.events)


def test_corrupt_line_stops_reading_and_counts_the_rest():
    lines = simulated_text().splitlines()
    lines[20] = "12x00 complete task=1 job=0"
    trace = parse_trace("\n".join(lines) + "\n", "bad")
    assert trace.damage.line == 21
    assert "time '12x00' is not a non-negative integer" in trace.damage.message
    assert f"{len(lines) - 21} following lines not read" in trace.damage.message
    assert len(trace.events) == 19


def test_binary_garbage_is_damage():
    trace = parse_trace(b"# rtsched-trace 1 plugin=fp\n0 release task=1 job=0 deadline=5\n\x00\xff\xfe garbage\n", "bin")
    assert len(trace.events) == 1 and trace.damage.line == 3 and "not text" in trace.damage.message


def test_unknown_events_and_keys_are_skipped_with_a_warning():
    trace = parse_trace("# rtsched-trace 1 plugin=fp\n5 frobnicate x=1\n6 release task=1 job=0 deadline=9 colour=red\n")
    assert trace.damage is None
    assert [str(p) for p in trace.problems] == ["line 2: unknown event 'frobnicate' skipped"]
    assert trace.events[0]["colour"] == "red"


def test_missing_header_and_bad_integer_fields():
    trace = parse_trace("0 start task=a job=0\n")
    assert trace.damage.message.startswith("start: task=a is not a non-negative integer")
    assert parse_trace("0 start task=1 job=0\n").problems[-1].message.startswith("no '# rtsched-trace' header")


def test_inconsistent_events_become_anomalies_not_errors():
    trace = parse_trace("# rtsched-trace 1 plugin=fp\n0 start task=1 job=0\n1 start task=2 job=0\n"
                        "2 resume task=3 job=0\n3 preempt task=9 job=9\n4 complete task=1 job=0\n")
    schedule = Schedule.from_trace(trace)
    assert len(schedule.anomalies) == 4
    assert [(g.owner, g.start, g.end) for g in schedule.segments] == [(1, 0, 1), (2, 1, 2), (3, 2, 4)]


def exercise(data: bytes | str) -> None:
    """Everything `bootlab rt trace` does with a trace."""
    trace = parse_trace(data, "fuzz")
    schedule = Schedule.from_trace(trace)
    to_text(trace, schedule)
    to_dict(trace, schedule)
    gantt_svg(schedule)
    grasp_trace(trace, schedule)
    perfetto_json(schedule)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_never_raise(data):
    exercise(data)
    exercise(b"# rtsched-trace 1 plugin=hsf-fp\n" + data)


SAMPLE = simulated_text().splitlines(keepends=True)


@st.composite
def mutated(draw) -> str:
    lines = list(SAMPLE)
    for _ in range(draw(st.integers(1, 6))):
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "swap", "truncate", "flip", "retime"]))
        if action == "delete":
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, lines[index])
        elif action == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[index], lines[other] = lines[other], lines[index]
        elif action == "truncate":
            lines[index] = lines[index][: draw(st.integers(0, len(lines[index])))]
        elif action == "flip":
            position = draw(st.integers(0, max(len(lines[index]) - 1, 0)))
            lines[index] = lines[index][:position] + draw(st.characters()) + lines[index][position + 1:]
        else:
            words = lines[index].split(" ", 1)
            lines[index] = f"{draw(st.integers(0, 200 * MS))} {words[-1]}"
        if not lines:
            break
    return "".join(lines)


@settings(max_examples=300, deadline=None)
@given(mutated())
def test_mutated_traces_never_raise(text):
    exercise(text)
    exercise(text.encode("utf-8", errors="surrogatepass"))
