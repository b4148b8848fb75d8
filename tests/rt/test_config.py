"""Configuration loading: valid files in both syntaxes, and every kind of bad input named
with its key and line, exit status 2 and no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bootlab.rt.config import ConfigError, load_config, parse_config

DATA = Path(__file__).parent / "data"

TABLE3_JSON = """{
  "plugin": "hsf-fp",
  "unit": "ms",
  "server": [
    {"id": 0, "name": "Server0", "period": 12, "budget": 4, "priority": 0},
    {"id": 1, "name": "Server1", "period": 20, "budget": 4, "priority": 1},
    {"id": 2, "name": "Server2", "period": 28, "budget": 8, "priority": 2}
  ],
  "task": [
    {"id": 1, "server": 0, "period": 24, "wcet": 2, "priority": 0}
  ]
}
"""


def test_table3_toml_loads_in_microseconds():
    config = load_config(DATA / "table3.toml")
    assert config.plugin == "hsf-fp" and config.unit == "ms"
    assert [(s.id, s.period, s.budget, s.priority) for s in config.servers] == [
        (0, 12_000, 4_000, 0), (1, 20_000, 4_000, 1), (2, 28_000, 8_000, 2)]
    assert config.servers[0].label == "Server0"


def test_json_is_the_same_structure(tmp_path):
    path = tmp_path / "table3.json"
    path.write_text(TABLE3_JSON)
    config = load_config(path)
    assert [s.budget for s in config.servers] == [4_000, 4_000, 8_000]
    task = config.tasks[0]
    assert (task.deadline, task.offset, task.jobs, task.server) == (24_000, 0, 0, 0)


def test_fractional_milliseconds_become_whole_microseconds():
    config = parse_config('plugin = "fp"\nunit = "ms"\n[[task]]\nid = 0\nperiod = 2.5\nwcet = 0.125\npriority = 0\n')
    assert (config.tasks[0].period, config.tasks[0].wcet) == (2_500, 125)


def test_edf_tasks_need_no_priority():
    config = parse_config('plugin = "edf"\n[[task]]\nid = 3\nperiod = 100\nwcet = 10\n')
    assert config.tasks[0].priority == 0


def error_of(text: str, syntax: str = "toml") -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "cfg", syntax)
    return str(caught.value)


def test_overrun_is_throttle_or_signal():
    base = 'plugin = "fp"\n[[task]]\nid = 0\nperiod = 1000\nwcet = 10\npriority = 0\n'
    assert parse_config(base).tasks[0].overrun == "throttle"
    assert parse_config(base + 'overrun = "signal"\n').tasks[0].overrun == "signal"
    assert "cfg:7: [[task]] #1: overrun: must be 'throttle' or 'signal', got 'kill'" in error_of(
        base + 'overrun = "kill"\n')


def test_release_is_periodic_or_sporadic():
    base = 'plugin = "fp"\n[[task]]\nid = 0\nperiod = 1000\nwcet = 10\npriority = 0\n'
    assert parse_config(base).tasks[0].release == "periodic"
    assert parse_config(base + 'release = "sporadic"\n').tasks[0].release == "sporadic"
    assert "release: must be 'periodic' or 'sporadic', got 'daily'" in error_of(base + 'release = "daily"\n')


def test_unknown_plugin_names_key_and_line():
    message = error_of('unit = "ms"\nplugin = "rm"\n')
    assert "cfg:2: plugin: unknown plugin 'rm'" in message
    assert "hsf-fp" in message


def test_unknown_key_in_a_table_names_it_and_its_line():
    message = error_of('plugin = "fp"\n[[task]]\nid = 0\nperiod = 10\nwcet = 1\npriority = 0\ncolour = "red"\n')
    assert "cfg:7: [[task]] #1: colour: unknown key" in message


def test_missing_key_points_at_its_table():
    message = error_of('plugin = "hsf-fp"\n[[server]]\nid = 0\nperiod = 10\npriority = 0\n')
    assert "cfg:2: [[server]] #1: budget: missing key" in message


def test_impossible_parameters_are_each_reported():
    message = error_of(
        'plugin = "hsf-fp"\n'
        '[[server]]\nid = 0\nperiod = 10\nbudget = 12\npriority = 0\n'
        '[[task]]\nid = 1\nserver = 0\nperiod = 10\nwcet = 8\ndeadline = 5\npriority = 100\n')
    assert "cfg:5: [[server]] #1: budget: must satisfy 0 < budget <= period (10), got 12" in message
    assert "cfg:11: [[task]] #1: wcet: must satisfy 0 < wcet <= deadline (5), got 8" in message
    assert "cfg:13: [[task]] #1: priority: must be an integer 0..99, got 100" in message


def test_deadline_beyond_period_and_negative_values():
    message = error_of('plugin = "fp"\n[[task]]\nid = 0\nperiod = 10\nwcet = 1\ndeadline = 11\npriority = 0\noffset = -1\n')
    assert "cfg:6: [[task]] #1: deadline: must satisfy deadline <= period (10), got 11" in message
    assert "cfg:8: [[task]] #1: offset: must be >= 0, got -1" in message


def test_duplicate_ids():
    message = error_of('plugin = "fp"\n[[task]]\nid = 4\nperiod = 10\nwcet = 1\npriority = 0\n'
                       '[[task]]\nid = 4\nperiod = 20\nwcet = 1\npriority = 1\n')
    assert "cfg:8: [[task]] #2: id: duplicate task id 4" in message


def test_task_in_a_missing_server_and_servers_in_flat_plugins():
    message = error_of('plugin = "hsf-fp"\n[[server]]\nid = 0\nperiod = 10\nbudget = 2\npriority = 0\n'
                       '[[task]]\nid = 1\nserver = 3\nperiod = 10\nwcet = 1\npriority = 0\n')
    assert "cfg:9: [[task]] #1: server: no server with id 3" in message
    message = error_of('plugin = "fp"\n[[server]]\nid = 0\nperiod = 10\nbudget = 2\npriority = 0\n')
    assert "cfg:2: server: servers are for the hierarchical plugins (hsf-*) only" in message


def test_wrong_types_and_ids_out_of_range():
    message = error_of('plugin = "hsf-fp"\n[[server]]\nid = 64\nperiod = "10"\nbudget = true\npriority = 0\n')
    assert "cfg:3: [[server]] #1: id: must be an integer 0..63, got 64" in message
    assert "cfg:4: [[server]] #1: period: must be a number of us, got '10'" in message
    assert "cfg:5: [[server]] #1: budget: must be a number of us, got True" in message


def test_sub_microsecond_values_are_refused():
    message = error_of('plugin = "fp"\nunit = "ms"\n[[task]]\nid = 0\nperiod = 1.0005\nwcet = 1\npriority = 0\n')
    assert "cfg:5: [[task]] #1: period: 1.0005 ms is not a whole number of microseconds" in message


def test_toml_syntax_error_has_its_line():
    message = error_of('plugin = "fp"\n[[task]]\nid = = 3\n')
    assert "TOML syntax error" in message and "line 3" in message


def test_json_errors_have_lines():
    message = error_of(TABLE3_JSON.replace('"budget": 8', '"budget": 30'), "json")
    assert "cfg:7: [[server]] #3: budget: must satisfy 0 < budget <= period (28), got 30" in message
    message = error_of(TABLE3_JSON.replace('"priority": 0}\n  ]', '"priority": 0, "core": 1}\n  ]'), "json")
    assert "cfg:10: [[task]] #1: core: unknown key" in message
    message = error_of(TABLE3_JSON.replace('"priority": 0}\n  ]', '"priority": 0, "cpu": 1}\n  ]'), "json")
    assert "cfg:10: [[task]] #1: cpu: for the partitioned plugins only, not 'hsf-fp'" in message
    message = error_of('{"plugin": "fp",\n "plugin": "edf", "task": []}', "json")
    assert "cfg:2: plugin: duplicate key" in message
    message = error_of('{"plugin": "fp",\n "task": [}', "json")
    assert message.startswith("cfg:2: JSON syntax error")


def test_cli_reports_bad_config_with_status_2(rt_cli, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('plugin = "hsf-fp"\n[[server]]\nid = 0\nperiod = 10\nbudget = 0\npriority = 0\nspeed = 3\n')
    status, out, err = rt_cli("analyze", path)
    assert status == 2 and out == ""
    assert f"{path}:5: [[server]] #1: budget: must be > 0, got 0" in err
    assert f"{path}:7: [[server]] #1: speed: unknown key" in err
    assert "Traceback" not in err


def test_cli_missing_file_is_status_2(rt_cli, tmp_path):
    status, _, err = rt_cli("simulate", tmp_path / "nope.toml", "--until", "1ms")
    assert status == 2 and "cannot read" in err


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 300) | st.floats(allow_nan=True) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6)
SERVER_ENTRY = st.dictionaries(st.sampled_from(["id", "name", "period", "budget", "priority", "extra"]), JSON_VALUES)
TASK_ENTRY = st.dictionaries(st.sampled_from(["id", "name", "server", "period", "wcet", "deadline", "priority",
                                              "offset", "jobs", "extra"]), JSON_VALUES)
DOCUMENTS = st.fixed_dictionaries({}, optional={
    "plugin": st.sampled_from(["fp", "edf", "hsf-fp"]) | JSON_VALUES,
    "unit": st.sampled_from(["us", "ms"]) | JSON_VALUES,
    "server": st.lists(SERVER_ENTRY | JSON_VALUES, max_size=3) | JSON_VALUES,
    "task": st.lists(TASK_ENTRY | JSON_VALUES, max_size=3) | JSON_VALUES,
}) | JSON_VALUES


@settings(max_examples=300, deadline=None)
@given(DOCUMENTS)
def test_any_document_is_loaded_or_refused_with_a_message(document):
    text = json.dumps(document, indent=1)
    try:
        config = parse_config(text, "fuzz.json", "json")
    except ConfigError as err:
        assert str(err)
    else:
        assert config.plugin in ("fp", "edf", "hsf-fp")


def test_multicore_keys():
    config = parse_config('plugin = "partitioned-edf"\ncpus = 3\nassignment = "worst-fit"\n'
                          '[[task]]\nid = 0\nperiod = 1000\nwcet = 10\ncpu = 2\n', "cfg")
    assert (config.multicore, config.task_policy, config.cpus, config.assignment) == ("partitioned", "edf", 3, "worst-fit")
    assert config.tasks[0].cpu == 2 and config.tasks[0].priority == 0
    message = error_of('plugin = "global-fp"\nassignment = "first-fit"\n[[task]]\nid = 0\nperiod = 1000\n'
                       'wcet = 10\npriority = 0\ncpu = 0\n')
    assert "cfg: cpus: missing key" in message
    assert "cfg:2: assignment: for the partitioned plugins only, not 'global-fp'" in message
    assert "cfg:8: [[task]] #1: cpu: for the partitioned plugins only, not 'global-fp'" in message
    message = error_of('plugin = "partitioned-fp"\ncpus = 2\n[[task]]\nid = 0\nperiod = 1000\nwcet = 10\n'
                       'priority = 0\ncpu = 2\n')
    assert "cfg:8: [[task]] #1: cpu: must be an integer 0..1, got 2" in message
    assert "cfg:2: cpus: for the multicore plugins only" in error_of('plugin = "fp"\ncpus = 2\n')


def test_overhead_us_is_microseconds_whatever_the_unit():
    config = parse_config('plugin = "fp"\nunit = "ms"\noverhead_us = 40\n'
                          '[[task]]\nid = 0\nperiod = 10\nwcet = 2\npriority = 0\n', "cfg")
    assert config.overhead_us == 40 and config.tasks[0].wcet == 2000  # the wcet stays the task's own
    assert parse_config('plugin = "fp"\n[[task]]\nid = 0\nperiod = 1000\nwcet = 2\npriority = 0\n',
                        "cfg").overhead_us == 0
    assert "cfg:1: overhead_us: must be an integer 0..1000000, got -1" in error_of(
        'overhead_us = -1\nplugin = "fp"\n[[task]]\nid = 0\nperiod = 1000\nwcet = 2\n')
    assert "cfg:1: overhead_us: must be an integer 0..1000000, got 0.5" in error_of(
        'overhead_us = 0.5\nplugin = "fp"\n[[task]]\nid = 0\nperiod = 1000\nwcet = 2\n')
