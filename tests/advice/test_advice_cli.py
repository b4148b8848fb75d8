"""`bootlab advise`: files and stored runs, text and JSON, errors; the rule registry."""

from __future__ import annotations

import json

import pytest

from bootlab.advice import RULES, advise
from bootlab.analysis import analyze
from bootlab.cli import main
from bootlab.lab.store import Store
from bootlab.sources import read

from .conftest import CORPUS, DATA, REFERENCE, target_of

FAMILIES = {"firmware", "bootloader", "kernel image", "kernel command line", "kernel configuration", "drivers",
            "filesystems", "services", "application", "boot failure"}
BBB = str(CORPUS / "grabserial-bbb__graboutput.log.reference")


def stored_run(tmp_path) -> str:
    db = str(tmp_path / "runs.db")
    Store(db).add(status="ok", reason="", target=target_of(REFERENCE), command=["qemu-system-x86_64"],
                  capture=REFERENCE.read_bytes(), analysis=None, metrics={}, wall_ns=None, ready_line_ns=None)
    return db


def test_every_family_has_rules():
    boot = read([BBB])
    advise(boot, analyze(boot))  # the first call imports the family modules, which register their rules
    assert {family for family, _ in RULES} == FAMILIES


def test_text_ranks_findings_with_evidence_and_how(capsys):
    assert main(["advise", BBB]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Advice for the boot")
    assert "1. Boot an uncompressed kernel image" in out  # the largest saving first
    assert "Set U-Boot's bootdelay to 0" in out
    assert "grabserial-bbb__graboutput.log.reference:19: Hit any key to stop autoboot:" in out
    assert "   how: At the U-Boot prompt: `setenv bootdelay 0; saveenv`" in out


def test_json_document(capsys):
    assert main(["advise", "-f", "json", BBB, str(DATA / "uboot-untimed.txt")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "bootlab-advice" and doc["version"] == 1 and doc["run"] is None
    savings = [f["saving_ns"] for f in doc["findings"] if f["saving_ns"] is not None]
    assert savings == sorted(savings, reverse=True)
    first = doc["findings"][0]
    assert set(first) == {"rule", "family", "title", "saving_ns", "share", "confidence", "non_intrusive", "how",
                          "evidence", "notes", "patch"}
    assert first["share"] == pytest.approx(first["saving_ns"] / doc["total_ns"])


def test_a_stored_run_gets_patches(tmp_path, capsys):
    db = stored_run(tmp_path)
    assert main(["advise", "--run", "1", "--db", db, "-f", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run"] == 1
    patches = {f["rule"]: f["patch"] for f in doc["findings"]}
    assert patches["cmdline.quiet"] == {"target": {"append": "quiet"}}
    assert patches["image.uncompressed"] == {"target": {"image": "vmlinux"}}
    assert any("run-1.capture:" in e for f in doc["findings"] for e in f["evidence"])


def test_text_shows_the_patch(tmp_path, capsys):
    assert main(["advise", "--run", "1", "--db", stored_run(tmp_path)]) == 0
    assert 'reference device patch: {"target": {"append": "quiet"}}' in capsys.readouterr().out


def test_output_file(tmp_path):
    out = tmp_path / "advice.json"
    assert main(["advise", "-f", "json", "-o", str(out), BBB]) == 0
    assert json.loads(out.read_text())["findings"]


@pytest.mark.parametrize("argv, message", [
    ([], "either log FILEs or a RUN"),
    ([BBB, "--run", "1"], "either log FILEs or a RUN"),
    (["/nonexistent.log"], "/nonexistent.log: no such file, and no run '/nonexistent.log'"),
    (["--run", "7"], "no run '7'"),
])
def test_bad_usage_is_a_message(tmp_path, capsys, argv, message):
    assert main(["advise", *argv, "--db", stored_run(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_binary_input_is_a_message(tmp_path, capsys):
    noise = tmp_path / "noise.bin"
    noise.write_bytes(bytes(range(256)) * 20)
    assert main(["advise", str(noise)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_nothing_to_propose(tmp_path, capsys):
    quiet = tmp_path / "quiet.txt"
    quiet.write_text("[    0.000000] Linux version 6.1.0 (x@y) #1\n[    0.000000] Command line: quiet\n"
                     "[    0.100000] Run /init as init process\n[    0.200000] BOOTLAB READY\n")
    assert main(["advise", str(quiet)]) == 0
    assert "No change to propose" in capsys.readouterr().out


def test_a_run_is_named_as_diff_names_it(tmp_path, capsys):
    db = stored_run(tmp_path)
    assert main(["advise", "1", "--db", db, "-f", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["run"] == 1
