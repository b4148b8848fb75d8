"""`bootlab analyze`: formats, output files, exit status, the JSON schema."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from bootlab.cli import main

SCHEMA = json.loads(resources.files("bootlab").joinpath("schema/analysis-2.json").read_text())


def test_text_default(fixture_path, capsys):
    assert main(["analyze", fixture_path("dmesg-plain.txt")]) == 0
    out = capsys.readouterr().out
    assert "Startup finished in" in out and "pci_subsys_init" in out


@pytest.mark.parametrize("fmt", ["json", "html", "svg", "perfetto"])
def test_every_format_to_file(fixture_path, tmp_path, fmt):
    target = tmp_path / f"out.{fmt}"
    assert main(["analyze", "-f", fmt, "-o", str(target), fixture_path("grabserial-t.log")]) == 0
    content = target.read_text()
    if fmt in ("json", "perfetto"):
        json.loads(content)
    elif fmt == "html":
        assert content.startswith("<!DOCTYPE html>") and "<svg" in content
        assert "src=\"http" not in content and "href=\"http" not in content  # self-contained
    else:
        assert "<svg" in content


def test_json_matches_schema(fixture_path, corpus_path, tmp_path):
    target = tmp_path / "a.json"
    files = [corpus_path("rpi4-kernel__run1_dmesg.txt"), fixture_path("systemd-blame.txt")]
    assert main(["analyze", "-f", "json", "--events", "-o", str(target), *files]) == 0
    doc = json.loads(target.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["schema"] == "bootlab-analysis" and doc["version"] == 2
    assert doc["blame"]["initcalls"][0]["name"] == "init_kprobe_trace"
    assert len(doc["events"]) > 700


def test_perfetto_trace_shape(fixture_path, tmp_path):
    target = tmp_path / "t.json"
    main(["analyze", "-f", "perfetto", "-o", str(target), fixture_path("initcall-variants.txt")])
    events = json.loads(target.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert any(e["name"] == "foo_driver_init" and e["dur"] == 787 for e in slices)
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"pid 1", "pid 245", "probes"} <= names


def test_unreadable_input_exit_2(tmp_path, capsys):
    bad = tmp_path / "empty.log"
    bad.write_bytes(b"")
    assert main(["analyze", str(bad)]) == 2
    assert "empty file" in capsys.readouterr().err


def test_missing_file_exit_2(capsys):
    assert main(["analyze", "/nonexistent/boot.log"]) == 2
    assert "No such file" in capsys.readouterr().err


def test_partly_unreadable_still_reports(fixture_path, tmp_path, capsys):
    bad = tmp_path / "noise.bin"
    bad.write_bytes(bytes(range(256)) * 100)
    assert main(["analyze", fixture_path("dmesg-plain.txt"), str(bad)]) == 2
    captured = capsys.readouterr()
    assert "Startup finished" in captured.out and "binary data" in captured.err


def test_ready_option(fixture_path, capsys):
    assert main(["analyze", "--ready", r"Run /init", fixture_path("dmesg-plain.txt")]) == 0
    assert "ready reached 0.502 s" in capsys.readouterr().out


def test_bad_regex(fixture_path, capsys):
    assert main(["analyze", "--ready", "(", fixture_path("dmesg-plain.txt")]) == 2
    assert "regular expression" in capsys.readouterr().err


def test_unwritable_output(fixture_path, capsys):
    assert main(["analyze", "-o", "/nonexistent/dir/x.txt", fixture_path("dmesg-plain.txt")]) == 2
