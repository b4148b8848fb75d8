"""Filesystem, service and application rules."""

from __future__ import annotations

from .conftest import CORPUS, DATA, FIXTURES, findings, one, only

BLAME = CORPUS / "rpi4-userspace__run_1_blame.txt"
CHAIN = CORPUS / "rpi4-userspace__run_1_chain.txt"
SYSV = DATA / "sysvinit-console.log"


def test_jffs2_root_scaled_by_the_ubifs_measurement():
    f = one(findings(DATA / "jffs2-root.txt"), "fs.jffs2")
    assert f.saving_ns == round(2_620_000_000 * (1 - 1.50 / 2.62))  # seed 002's own numbers


def test_jffs2_silent_on_ubifs():
    assert not only(findings(DATA / "ubifs-root.txt"), "fs.jffs2")


def test_fsck_on_the_critical_chain():
    f = one(findings(BLAME, CHAIN), "fs.fsck")
    assert f.saving_ns == 549_000_000 and f.confidence == "medium"  # systemd-fsck@... +549ms on the chain
    assert any("systemd-fsck-root.service" in note for note in f.notes)  # in blame, not on the chain


def test_fsck_silent_when_the_filesystem_was_clean():
    # "rootfs: clean" means the check was skipped: the silence before it was something else.
    assert not only(findings(CORPUS / "grabserial-bbb__graboutput.log.reference"), "fs.fsck")


def test_journal_replay():
    f = one(findings(DATA / "ext4-recovery.txt"), "fs.journal-replay")
    assert f.saving_ns == 210_000_000


def test_journal_replay_silent_on_a_clean_mount():
    assert not only(findings(CORPUS / "pine64__bootlog.txt"), "fs.journal-replay")


def test_udev_units_without_a_chain_are_an_upper_bound():
    f = one(findings(BLAME), "services.udev")
    assert f.confidence == "low" and f.saving_ns == 250_000_000 + 195_000_000 + 98_000_000
    assert any("upper bound" in note for note in f.notes)


def test_udev_in_rc_scripts_is_measured():
    f = one(findings(SYSV), "services.udev")
    assert f.saving_ns == 520_000_000 and f.confidence == "medium"


def test_udev_silent_without_udev(reference):
    assert not only(reference, "services.udev")


def test_unneeded_services_in_rc_scripts():
    found = {f.title: f.saving_ns for f in only(findings(SYSV), "services.unneeded")}
    assert found == {"Disable Avahi (mDNS/DNS-SD discovery) if the product does not use it": 20_260_000_000,
                     "Disable Bluetooth if the product does not use it": 1_190_000_000}


def test_unneeded_services_off_the_chain_save_no_boot_time():
    found = {f.title.split(" (")[0]: f for f in only(findings(BLAME, CHAIN), "services.unneeded")}
    assert found["Disable cloud-init"].saving_ns == 1_588_000_000 + 412_000_000 + 327_000_000
    avahi = found["Disable Avahi"]
    assert avahi.saving_ns is None and any("not on the critical chain" in note for note in avahi.notes)


def test_unneeded_silent_on_the_reference_device(reference):
    assert not only(reference, "services.unneeded")


def test_critical_chain_units_not_covered_by_other_rules():
    found = only(findings(BLAME, CHAIN), "services.critical-chain")
    assert [f.saving_ns for f in found] == [1_895_000_000, 904_000_000, 219_000_000]
    assert "NetworkManager.service" in found[0].title and "multi-user.target" in found[0].title


def test_critical_chain_silent_without_a_chain():
    assert not only(findings(BLAME), "services.critical-chain")


def test_app_startup():
    f = one(findings(DATA / "app-slow.txt"), "app.startup")
    assert f.saving_ns is None and any("2.000s" in e for e in f.evidence)


def test_app_startup_silent_when_the_app_is_quick(reference):
    assert not only(reference, "app.startup")


def test_ready_marker_missing():
    f = one(findings(FIXTURES / "dmesg-continuation.txt"), "app.ready-marker")
    assert "--ready" in f.how


def test_ready_marker_present(reference):
    assert not only(reference, "app.ready-marker")
