"""`bootlab compare`: naming sets of runs, outputs, and the exit status of the gate."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bootlab.cli import main

from .conftest import add_run


@pytest.fixture
def db(store):
    """Labels: main (5 s), slow (+10%), same (= main), few and few2 (3 runs), broken (never ready);
    a campaign with two variants."""
    rng = np.random.default_rng(0)
    for label, mean, n in (("main", 5e9, 8), ("slow", 5.5e9, 8), ("same", 5e9, 8), ("few", 6e9, 3),
                           ("few2", 5e9, 3)):
        for _ in range(n):
            add_run(store, mean * (1 + 0.01 * rng.standard_normal()), label=label)
    for _ in range(5):
        add_run(store, None, status="timeout", reason="killed: silence", label="broken")
    for seq in range(10):
        variant = ("baseline", "quiet")[seq % 2]
        add_run(store, (5e9 if variant == "baseline" else 4e9) * (1 + 0.01 * rng.standard_normal()),
                campaign="camp", variant=variant, sequence=seq)
    return store.path


def test_slower_fails_the_gate(db, capsys):
    assert main(["compare", "main", "slow", "--db", db, "--fail-if-slower", "5"]) == 1
    captured = capsys.readouterr()
    assert "slow is slower than main" in captured.out and "gate: FAIL" in captured.err


def test_slower_within_the_allowance_passes(db, capsys):
    assert main(["compare", "main", "slow", "--db", db, "--fail-if-slower", "15"]) == 0
    assert "within the allowed 15%" in capsys.readouterr().err


def test_no_difference_passes(db, capsys):
    assert main(["compare", "main", "same", "--db", db, "--fail-if-slower", "0"]) == 0
    assert "gate: pass" in capsys.readouterr().err


def test_faster_passes_and_campaign_variants_are_named(db, capsys):
    assert main(["compare", "camp:baseline", "camp:quiet", "--db", db, "--fail-if-slower", "1"]) == 0
    assert "camp:quiet is faster than camp:baseline" in capsys.readouterr().out


def test_too_few_runs_cannot_gate(db, capsys):
    assert main(["compare", "few2", "few", "--db", db, "--fail-if-slower", "5"]) == 2
    assert "can never be significant" in capsys.readouterr().err


def test_never_ready_fails_the_gate(db, capsys):
    assert main(["compare", "main", "broken", "--db", db, "--fail-if-slower", "5"]) == 1
    assert "never reached the ready marker" in capsys.readouterr().err


def test_bad_references(db, capsys):
    assert main(["compare", "main", "nothing", "--db", db]) == 2
    assert main(["compare", "camp", "main", "--db", db]) == 2  # two variants: name one
    assert main(["compare", "999", "main", "--db", db]) == 2
    assert main(["compare", "broken", "main", "--db", db]) == 2  # A has no numbers
    err = capsys.readouterr().err
    assert "'nothing' is not a run id" in err and "camp:baseline" in err and "Traceback" not in err


def test_two_single_runs(db, capsys):
    assert main(["compare", "1", "9", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "too few runs to test" in out and "n=1" in out


def test_json_and_html(db, capsys, tmp_path):
    assert main(["compare", "main", "slow", "--db", db, "-f", "json", "--fail-if-slower", "5"]) == 1
    doc = json.loads(capsys.readouterr().out)
    total = next(m for m in doc["metrics"] if m["metric"] == "total")
    assert doc["verdict"] == "slower" and total["significant"] and 8 < total["percent"] < 12
    assert doc["gate"]["failed"] and len(doc["a"]["ok"]) == 8
    out = tmp_path / "cmp.html"
    assert main(["compare", "main", "slow", "--db", db, "-f", "html", "-o", str(out)]) == 0
    html = out.read_text()
    assert "<table>" in html and "slow is slower than main" in html
