"""The campaign runner: interleaving, resuming from the store after any interruption,
failed variants, and refusing to mix definitions."""

from __future__ import annotations

import json
import os

import pytest

from bootlab.lab import boots, campaign, reports
from bootlab.lab.boots import captures_dir
from bootlab.lab.campaign import Campaign, Variant
from bootlab.targets.reference import Target, TargetError

from .conftest import FakeBooter, add_run


def make(names=("baseline", "a", "b"), runs=3, name="c", give_up_after=2) -> Campaign:
    variants = []
    for i, n in enumerate(names):
        t = Target()
        t.target.cpus = i + 1  # each variant its own definition
        variants.append(Variant(n, "", t, {"target": {"cpus": i + 1}} if i else {}))
    return Campaign(name, variants, runs=runs, give_up_after=give_up_after)


def run(c, store, fake):
    return campaign.run(c, store, booter=fake.for_variant)


def test_schedule_interleaves_baseline_first():
    c = make(runs=3)
    assert [v for _, v in c.schedule()] == ["baseline", "a", "b"] * 3
    assert [s for s, _ in c.schedule()] == list(range(9))


def test_runs_are_stored_in_schedule_order(store):
    c = make(runs=3)
    fake = FakeBooter({"baseline": 5e9, "a": 4e9, "b": 6e9})
    st = run(c, store, fake)
    assert fake.calls == c.schedule()
    assert st.complete and len(st.done) == 9
    stored = store.runs(campaign="c")
    assert [(r.sequence, r.variant) for r in stored] == c.schedule()


def test_crash_between_runs_resumes_without_repeating_or_losing(store):
    c = make(runs=4)
    means = {"baseline": 5e9, "a": 4e9, "b": 6e9}
    with pytest.raises(RuntimeError):
        run(c, store, FakeBooter(means, crash_at=5))
    assert len(store.runs(campaign="c")) == 5
    fake = FakeBooter(means)
    st = run(c, store, fake)
    assert fake.calls == c.schedule()[5:]  # exactly what was left, in order
    sequences = [r.sequence for r in store.runs(campaign="c")]
    assert sorted(sequences) == list(range(12)) and st.complete
    # Nothing left: running again boots nothing.
    again = FakeBooter(means)
    run(c, store, again)
    assert again.calls == []


def test_interrupted_boot_does_not_count_and_is_run_again(store):
    c = make(runs=2)
    means = {"baseline": 5e9, "a": 4e9, "b": 6e9}
    with pytest.raises(KeyboardInterrupt):
        run(c, store, FakeBooter(means, interrupt_at=3))
    stored = store.runs(campaign="c")
    assert [r.reason for r in stored][-1] == "interrupted" and len(stored) == 4
    st = campaign.state(c, store)
    assert sorted(st.done) == [0, 1, 2]
    fake = FakeBooter(means)
    st = run(c, store, fake)
    assert fake.calls[0] == (3, "baseline") and st.complete
    assert all(r.reason != "interrupted" for r in st.done.values())
    res = campaign.results(c, st)
    assert len(res.result("baseline").runs.runs) == 2  # the interrupted one is not among them


def test_run_killed_in_progress_leaves_a_capture_that_never_counts(store, tmp_path):
    """kill -9 during a boot: the capture file was being written, no row was stored."""
    c = make(runs=2)
    means = {"baseline": 5e9, "a": 4e9, "b": 6e9}
    with pytest.raises(RuntimeError):
        run(c, store, FakeBooter(means, crash_at=2))
    half = captures_dir(store.path) / "0000-half.capture"
    half.write_bytes(b'#bootlab-capture 1 {"zero": "power-on"}\n0.000000000 ! power-on\n0.1000 | SeaBI')
    st = campaign.state(c, store)
    assert sorted(st.done) == [0, 1]
    fake = FakeBooter(means)
    st = run(c, store, fake)
    assert fake.calls == c.schedule()[2:] and st.complete
    assert len(store.runs(campaign="c")) == 6


def test_failed_variant_is_excluded_with_a_warning_and_given_up(store):
    c = make(runs=4, give_up_after=2)
    fake = FakeBooter({"baseline": 5e9, "a": 4e9, "b": 6e9}, fail={"b"})
    st = run(c, store, fake)
    assert [v for _, v in fake.calls].count("b") == 2  # not booted after two failures
    assert st.gave_up("b") and st.complete
    res = campaign.results(c, st)
    b = res.result("b")
    assert b.gave_up and not b.runs.ok and b.comparison.row().comparison is None
    assert any(w.startswith("b: gave up after 2 failed boots") for w in res.warnings)
    assert res.result("a").comparison.row().comparison is not None


def test_changed_definition_is_refused(store):
    c = make(runs=2)
    run(c, store, FakeBooter({"baseline": 5e9, "a": 4e9, "b": 6e9}))
    changed = make(runs=2)
    changed.variant("a").spec.initramfs.compression = "lz4"
    with pytest.raises(campaign.CampaignError, match="another definition of 'a'"):
        campaign.state(changed, store)
    reordered = make(names=("baseline", "b", "a"), runs=2)
    with pytest.raises(campaign.CampaignError, match="other variants"):
        campaign.state(reordered, store)


def test_more_runs_extend_a_finished_campaign(store):
    means = {"baseline": 5e9, "a": 4e9, "b": 6e9}
    run(make(runs=2), store, FakeBooter(means))
    fake = FakeBooter(means)
    run(make(runs=3), store, fake)
    assert fake.calls == make(runs=3).schedule()[6:]


def test_fewer_runs_use_the_first_ones_and_say_what_was_left_out(store):
    means = {"baseline": 5e9, "a": 4e9, "b": 6e9}
    run(make(runs=3), store, FakeBooter(means))
    fewer = make(runs=2)
    st = campaign.state(fewer, store)
    assert st.complete and sorted(st.done) == list(range(6)) and st.ignored == 3
    assert "3 stored runs beyond this schedule left out" in reports.campaign_text(campaign.results(fewer, st))


def test_one_runner_per_campaign(store):
    c = make(runs=2)
    with campaign._Lock(store, c.name):
        with pytest.raises(campaign.CampaignBusy):
            run(c, store, FakeBooter({"baseline": 5e9, "a": 4e9, "b": 6e9}))


def test_report_from_the_store_without_the_file(store):
    c = make(runs=3)
    run(c, store, FakeBooter({"baseline": 5e9, "a": 4e9, "b": 6e9}))
    rebuilt = campaign.from_store(store, "c")
    assert [v.name for v in rebuilt.variants] == ["baseline", "a", "b"] and rebuilt.runs == 3
    assert rebuilt.variant("a").patch == {"target": {"cpus": 2}}
    assert campaign.state(rebuilt, store).complete


def test_stray_runs_of_other_campaigns_do_not_count(store):
    add_run(store, 1e9, campaign="other", variant="baseline", sequence=0)
    c = make(runs=2)
    assert campaign.state(c, store).done == {}
    assert os.path.exists(store.path)


def test_duplicate_variant_names_are_refused(store):
    with pytest.raises(campaign.CampaignError, match="unique"):
        campaign.state(make(names=("baseline", "a", "a")), store)


def test_runs_from_different_builds_are_flagged(store):
    c = make(names=("baseline", "a"), runs=2)
    run(c, store, FakeBooter({"baseline": 5e9, "a": 4e9}))
    for i, r in enumerate(store.runs(campaign="c")):
        target = {**r.target, "digest": f"d{i % 3}"}
        store.db.execute("UPDATE runs SET target = ? WHERE id = ?", (json.dumps(target), r.id))
    res = campaign.results(c, campaign.state(c, store))
    assert any(w.startswith("baseline: booted from 2 different builds") for w in res.warnings)


def test_a_device_that_cannot_power_on_is_failed_runs_naming_the_step(store, tmp_path):
    """The boot sequence's failures are runs: each names the step; the campaign goes on
    (and gives up on a variant whose first boots all failed)."""
    far, near = os.openpty()
    try:
        text = (f"runs = 3\ngive_up_after = 2\n[board]\ndevice = '{os.ttyname(near)}'\n"
                "power_on = 'echo relay unplugged >&2; exit 3'\nready = 'READY'\n"
                "[variant.other]\nprepare = 'true'\n")
        (tmp_path / "c.toml").write_text(text)
        c = campaign.load(str(tmp_path / "c.toml"))
        campaign.run(c, store)
    finally:
        os.close(far)
        os.close(near)
    runs = store.runs(campaign="c")
    assert [r.status for r in runs] == ["failed"] * 4  # two per variant, then it gave up
    assert all(r.reason.startswith("power-on: command failed with status 3") and "relay unplugged" in r.reason
               for r in runs)
    assert b"failed power-on" in store.capture(runs[0].id)


def test_runs_whose_console_lost_bytes_are_flagged(store):
    """A run whose console capture lost bytes (found against the kernel log printed after
    ready) is named in the campaign's warnings: never silently."""
    c = make(names=("baseline", "a"), runs=2)
    run(c, store, FakeBooter({"baseline": 5e9, "a": 4e9}))
    lossy = store.runs(campaign="c")[1]
    store.db.execute("INSERT INTO metrics (run_id, name, value) VALUES (?, 'console:lost_bytes', 12)", (lossy.id,))
    res = campaign.results(c, campaign.state(c, store))
    assert [w for w in res.warnings if "lost" in w] == [
        f"{lossy.variant}: the console lost 12 bytes in 1 of 2 runs (runs {lossy.id}; `bootlab show RUN` names the lines)"]
    assert "the console lost 12 bytes" in reports.campaign_text(res)
    # Counted by the damaged lines' shape (no kernel log printed after ready): a lower bound.
    store.db.execute("INSERT INTO metrics (run_id, name, value) VALUES (?, 'console:lost_bytes_by_shape', 1)", (lossy.id,))
    res = campaign.results(c, campaign.state(c, store))
    assert [w for w in res.warnings if "lost" in w] == [
        f"{lossy.variant}: the console lost at least 12 bytes in 1 of 2 runs (runs {lossy.id}; `bootlab show RUN` "
        "names the lines)"]
