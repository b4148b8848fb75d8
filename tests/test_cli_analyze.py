"""`bootlab analyze`: formats, output files, exit status, the JSON schema."""

from __future__ import annotations

import gzip
import json
import os
import stat
import subprocess
import sys
import threading
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from bootlab.cli import main

SCHEMA = json.loads(resources.files("bootlab").joinpath("schema/analysis-3.json").read_text())


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
    assert doc["schema"] == "bootlab-analysis" and doc["version"] == 3
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


REAL = Path(__file__).parent / "data" / "real"


def _analyze_stdin(data: bytes, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bootlab", "analyze", *args, "-"], input=data,
                          capture_output=True, check=False)


def test_standard_input_reads_as_a_file(tmp_path):
    """`dmesg | bootlab analyze -`: a piped log (gzipped too) reads as the same file does."""
    log = REAL / "generic-initcall.dmesg.gz"
    from_file = json.loads(subprocess.run([sys.executable, "-m", "bootlab", "analyze", "-f", "json", str(log)],
                                          capture_output=True, check=True).stdout)
    for data in (log.read_bytes(), gzip.decompress(log.read_bytes())):
        piped = _analyze_stdin(data, "-f", "json")
        assert piped.returncode == 0, piped.stderr
        doc = json.loads(piped.stdout)
        assert doc["sources"][0]["file"] == "<stdin>" and doc["sources"][0]["format"] == "dmesg"
        assert doc["total_ns"] == from_file["total_ns"] and doc["blame"] == json.loads(
            json.dumps(from_file["blame"]).replace(from_file["sources"][0]["file"], "<stdin>"))


def test_standard_input_errors_name_it():
    garbage = _analyze_stdin(b"\x00\x01 not a log\n" * 3)
    assert garbage.returncode == 2 and garbage.stderr.decode().startswith("bootlab analyze: <stdin>")
    assert b"Traceback" not in garbage.stderr
    empty = _analyze_stdin(b"")
    assert empty.returncode == 2 and "<stdin>: empty file" in empty.stderr.decode()


def _kmsg_readable() -> bool:
    try:
        os.close(os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _kmsg_readable(), reason="/dev/kmsg is not readable here (a container, no root)")
def test_reads_this_machines_kernel_log_from_dev_kmsg(capsys):
    """On the device itself: /dev/kmsg is read as it holds the log now, without waiting
    for more (it never ends)."""
    assert main(["analyze", "-f", "json", "/dev/kmsg"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (source,) = doc["sources"]
    assert source["file"] == "/dev/kmsg" and source["format"] == "kmsg" and source["lines"] > 10
    assert doc["meta"]["kernel_version"] == os.uname().release and doc["phases"]


def test_other_character_devices_are_refused(capsys):
    assert main(["analyze", "/dev/zero"]) == 2  # read to its end, it would never end
    assert "character device that is not /dev/kmsg" in capsys.readouterr().err


def test_output_to_a_fifo_is_written_in_place(fixture_path, tmp_path):
    """-o on a device or a pipe writes to it; the atomic replace is for plain files."""
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    assert main(["analyze", "-o", str(fifo), fixture_path("dmesg-plain.txt")]) == 0
    reader.join(10)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and b"Startup finished" in received[0]


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


def test_long_lists_are_written_one_item_a_line(monkeypatch):
    """JSON: a long list (the events of a big log) one compact item per line, the same data."""
    from bootlab.analysis import Options, analyze
    from bootlab.render import json as json_render
    from bootlab.sources import read

    a = analyze(read([str(REAL / "generic-initcall.dmesg.gz")]), Options(events=True))
    monkeypatch.setattr(json_render, "LONG", 10)
    text = json_render.render(a)
    assert json.loads(text) == json.loads(json.dumps(json_render.document(a, True)))
    events = text[text.index('\n "events": [\n'):].splitlines()[2:-2]
    assert len(events) == len(a.boot.events) and all(line.startswith('  {"kind": ') for line in events)


def test_input_read_as_a_format_it_is_not_exits_2(fixture_path, capsys):
    # A systemd-analyze blame forced through the dmesg reader: not one line is a dmesg line.
    assert main(["analyze", "--input-format", "dmesg", fixture_path("systemd-blame.txt")]) == 2
    err = capsys.readouterr().err
    assert "systemd-blame.txt: error: nothing in its 4 lines could be read as dmesg (--input-format)" in err


@pytest.mark.parametrize("argv", [["analyze", "--baud", "0", "DMESG"], ["analyze", "--baud", "-9600", "DMESG"],
                                  ["capture", "-d", "/dev/null", "-b", "0"]])
def test_a_speed_of_zero_is_refused_not_ignored(fixture_path, capsys, argv):
    argv = [fixture_path("dmesg-plain.txt") if a == "DMESG" else a for a in argv]
    assert main(argv) == 2
    assert "a positive number of bits per second" in capsys.readouterr().err


def test_a_bootchart_directory_is_read_not_unreadable(corpus_path):
    assert main(["analyze", corpus_path("bootchart-example1")]) == 0


def test_a_kernel_log_without_times_whose_banner_wrapped_away_says_so(tmp_path, capsys):
    """A public Kobo Touch dmesg: no printk times and its buffer wrapped (`6>TCP reno
    registered` first): it was "not a boot log bootlab knows"; it is a kernel log in which
    nothing can be timed, and says that."""
    log = tmp_path / "dmesg.txt"
    log.write_text("6>TCP reno registered\nUDP hash table entries: 256 (order: 0, 4096 bytes)\n"
                   "NET: Registered protocol family 1\nFreeing init memory: 112K\n")
    assert main(["analyze", str(log)]) == 2
    out, err = capsys.readouterr()
    assert "no line of these logs carries a time" in out and "not a boot log" not in err
