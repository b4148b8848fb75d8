"""`bootlab diff`: two boots side by side (recorded real boots of the reference device)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from bootlab.analysis import analyze
from bootlab.analysis.diff import diff
from bootlab.cli import main
from bootlab.lab.store import Store
from bootlab.sources import read

REAL = Path(__file__).parent / "data" / "real"
GENERIC, CLOUD = str(REAL / "generic-initcall.dmesg.gz"), str(REAL / "cloud-initcall.dmesg.gz")


def test_generic_against_cloud_kernel():
    a, b = analyze(read([GENERIC])), analyze(read([CLOUD]))
    d = diff(a, b, top=5)
    assert (d.total.before, d.total.after) == (a.phases.total, b.phases.total)
    assert [c.name for c in d.phases] == [s.name for s in a.phases.spans] == [s.name for s in b.phases.spans]
    assert sum(c.delta for c in d.phases) == d.total.delta
    initcalls = d.spans[0]
    assert initcalls.kind == "initcall" and initcalls.common > 500 and len(initcalls.changed) == 5
    deltas = [abs(c.delta) for c in initcalls.changed]
    assert deltas == sorted(deltas, reverse=True) and all(c.before is not None and c.after is not None
                                                          for c in initcalls.changed)
    # Drivers the cloud kernel leaves out, and the few it has on its own.
    only_generic = {c.name for c in initcalls.only_before}
    assert "amd_iommu_v2_init" in only_generic and all(c.after is None for c in initcalls.only_before)
    assert initcalls.total_only_before > initcalls.total_only_after > 0
    assert d.console_bytes.delta < 0 and not d.notes


def test_a_failed_boot_is_said_so_beside_one_that_worked(fixture_path):
    """A boot that panicked is shorter than one that reached ready: its total is no saving."""
    failed = analyze(read([fixture_path("console-kernel-panic.txt")]))
    d = diff(analyze(read([GENERIC])), failed)
    assert any(n.startswith("the second boot failed (") and "Kernel panic: VFS" in n
               and "its total is to its failure, not to ready" in n for n in d.notes)


def test_cli_text_and_json(tmp_path, capsys):
    assert main(["diff", GENERIC, CLOUD]) == 0
    out = capsys.readouterr().out
    assert out.startswith("first : Linux 6.1.0-56-amd64 from ") and "Initcalls that changed most (of " in out
    assert "Initcalls only in the first boot" in out and "note: one boot of each" in out
    target = tmp_path / "d.json"
    both = f"{REAL / 'generic-initcall.capture.gz'},{GENERIC}"  # several files of one boot
    assert main(["diff", "-f", "json", "-o", str(target), both, CLOUD]) == 0
    doc = json.loads(target.read_text())
    assert doc["schema"] == "bootlab-diff" and [s["format"] for s in doc["first"]["sources"]] == ["bootlab-capture",
                                                                                                   "dmesg"]
    assert all(c["delta"] == (c["after"] or 0) - (c["before"] or 0) for c in doc["phases_ns"])
    assert "different starts" in doc["notes"][0]  # from power-on against from kernel init


def test_cli_unreadable_boot_exit_2(tmp_path, capsys):
    bad = tmp_path / "empty.log"
    bad.write_bytes(b"")
    assert main(["diff", GENERIC, str(bad)]) == 2
    assert "empty file" in capsys.readouterr().err
    assert main(["diff", GENERIC, ","]) == 2


def test_runs_in_the_store(tmp_path, capsys):
    """BEFORE and AFTER may be runs in the store (recorded real captures here); a name
    that is neither a file nor a run says so."""
    store = Store(str(tmp_path / "d.db"))
    for kind in ("generic", "cloud"):
        store.add(status="ok", reason="ready", target={}, command=["qemu-system-x86_64"],
                  capture=gzip.decompress((REAL / f"{kind}-initcall.capture.gz").read_bytes()), analysis=None,
                  metrics={}, wall_ns=1, ready_line_ns=1, label=kind)
    db = str(tmp_path / "d.db")
    assert main(["diff", "--db", db, "-f", "json", "1", "2"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [doc[side]["kernel_version"] for side in ("first", "second")] == ["6.1.0-56-amd64", "6.1.0-56-cloud-amd64"]
    assert doc["phases_ns"][0]["name"] == "firmware + bootloader" and not doc["notes"]
    assert main(["diff", "--db", db, "1", "nonsense"]) == 2
    assert "nonsense: no such file, and no run 'nonsense'" in capsys.readouterr().err
