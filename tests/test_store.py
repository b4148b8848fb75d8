"""The run store: round trip, migrations, atomic runs."""

from __future__ import annotations

import sqlite3

import pytest

from bootlab.cli import main
from bootlab.lab import store as store_mod
from bootlab.lab.store import SCHEMA_VERSION, Store, StoreError


def _add(s: Store, **kw) -> int:
    args = dict(status="ok", reason="ready", target={"name": "t"}, command=["qemu"], capture=b"#cap\n",
                analysis={"total_ns": 5}, metrics={"total": 5.0, "phase:kernel init": 2.0}, wall_ns=7, ready_line_ns=5)
    args.update(kw)
    return s.add(**args)


def test_round_trip(tmp_path):
    s = Store(str(tmp_path / "b.db"))
    rid = _add(s, label="x", campaign="c", variant="v", sequence=3)
    run = s.get(rid)
    assert (run.status, run.label, run.campaign, run.variant, run.sequence) == ("ok", "x", "c", "v", 3)
    assert run.metrics == {"total": 5.0, "phase:kernel init": 2.0}
    assert s.capture(rid) == b"#cap\n" and s.analysis(rid) == {"total_ns": 5}
    assert s.get(run.uuid[:8]).id == rid
    assert run.host["python"] and run.tool_version.startswith("bootlab")
    assert [r.id for r in s.runs(campaign="c")] == [rid]
    assert s.runs(label="nope") == []
    with pytest.raises(StoreError):
        s.get(999)
    with pytest.raises(StoreError, match="no run"):
        s.get("\u00b2")  # a digit to str.isdigit(), not to int()
    # a missing id is never taken for the start of a uuid (before, `--run 7` gave the run
    # whose uuid began with 7, one time in sixteen)
    for digit in set("0123456789") - {str(rid)}:
        with pytest.raises(StoreError, match="no run"):
            s.get(digit)
    with pytest.raises(StoreError, match="no run"):
        s.get(run.uuid[:7])


def test_migrates_an_old_database(tmp_path):
    path = str(tmp_path / "old.db")
    db = sqlite3.connect(path)
    db.executescript(store_mod.MIGRATIONS[0])
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO runs (uuid, created, status, target, command, host, tool_version) "
               "VALUES ('u1', 0, 'ok', '{}', '[]', '{}', 'bootlab 0.0')")
    db.commit()
    db.close()
    s = Store(path)
    assert s.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert s.get(1).sequence is None  # the old run is still readable
    assert s.get(_add(s, sequence=1)).sequence == 1


def test_refuses_a_newer_database(tmp_path):
    path = str(tmp_path / "new.db")
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(StoreError, match="newer"):
        Store(path)


def test_not_a_database(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError):
        Store(str(path))


def test_a_run_is_all_or_nothing(tmp_path):
    s = Store(str(tmp_path / "a.db"))
    reader = Store(str(tmp_path / "a.db"))
    with pytest.raises(TypeError):
        _add(s, metrics={"total": object()})  # fails half way, after the run row
    assert reader.runs() == []
    _add(s)
    assert len(reader.runs()) == 1 and reader.runs()[0].metrics


def test_a_uuid_prefix_of_digits_finds_its_run(tmp_path):
    s = Store(str(tmp_path / "d.db"))
    rid = s.add(status="ok", reason="ready", target={}, command=[], capture=None, analysis=None, metrics={},
                wall_ns=1, ready_line_ns=1, run_uuid="12345678-aaaa-4bbb-8ccc-dddddddddddd")
    assert s.get("12345678").id == rid and s.get(str(rid)).id == rid


@pytest.mark.parametrize("argv", [["runs"], ["show", "1"], ["export", "1"], ["compare", "a", "b"], ["advise", "1"],
                                  ["diff", "1", "2"]])
def test_read_only_verbs_never_make_a_store(tmp_path, capsys, argv):
    db = tmp_path / "bootlab.db"
    assert main(argv + ["--db", str(db)]) == 2
    assert not db.exists()
    err = capsys.readouterr().err
    assert f"{db}: no run store here" in err and "--db" in err


def test_a_boot_stopped_with_ctrl_c_is_interrupted_not_failed(tmp_path):
    from bootlab.capture.session import Result
    from bootlab.targets.result import classify

    assert classify(Result("interrupted"), 60.0, "console closed") == ("interrupted", "interrupted")
    # A store written before: its interrupted boots were "failed"; opening it says what they were.
    path = str(tmp_path / "old.db")
    db = sqlite3.connect(path)
    for step in store_mod.MIGRATIONS[:2]:
        db.executescript(step)
    db.execute("PRAGMA user_version = 2")
    for uuid, reason in (("u1", "interrupted"), ("u2", "console closed")):
        db.execute("INSERT INTO runs (uuid, created, status, reason, target, command, host, tool_version) "
                   f"VALUES ('{uuid}', 0, 'failed', '{reason}', '{{}}', '[]', '{{}}', 'bootlab 0.0')")
    db.commit()
    db.close()
    s = Store(path)
    assert [(r.status, r.reason) for r in s.runs()] == [("interrupted", "interrupted"), ("failed", "console closed")]


def test_runs_lists_the_interrupted_ones(tmp_path, capsys):
    db = str(tmp_path / "r.db")
    s = Store(db)
    _add(s, status="interrupted", reason="interrupted")
    _add(s)
    s.close()
    assert main(["runs", "--db", db, "--status", "interrupted", "-f", "json"]) == 0
    assert '"interrupted"' in capsys.readouterr().out
