"""Kernel command line rules: quiet, lpj=, mem=, init=, maxcpus=."""

from __future__ import annotations

from .conftest import CORPUS, DATA, FIXTURES, findings, one, only


def test_quiet_from_a_capture_counts_each_line_until_the_next_message(reference):
    f = one(reference, "cmdline.quiet")
    assert f.patch == {"target": {"append": "quiet"}}
    assert f.confidence == "medium" and f.non_intrusive
    # 23083 bytes at 115200 baud is 2.004 s if every byte held the kernel up; the kernel
    # logged its next message sooner for many lines, so the estimate is less.
    assert "23083 bytes" in f.evidence[0]
    assert 1_000_000_000 < f.saving_ns < 2_003_645_834


def test_quiet_from_a_dmesg_is_an_estimate():
    f = one(findings(CORPUS / "rpi4-kernel__run1_dmesg.txt"), "cmdline.quiet")
    assert f.confidence == "low" and f.patch is None
    assert any("estimated" in note for note in f.notes)


def test_quiet_counts_no_kernel_log_printed_after_ready(reference_debug):
    # The initcall_debug run prints the whole kernel log again after ready: not the boot's cost.
    f = one(reference_debug, "cmdline.quiet")
    assert "1744 lines" in f.evidence[0]
    assert any("loglevel=" in note for note in f.notes)


def test_quiet_silent_when_already_quiet():
    assert not only(findings(CORPUS / "supermicro__dmesg.txt"), "cmdline.quiet")  # quiet on its command line
    # A console that printed only errors (no banner) was quiet already.
    assert not only(findings(CORPUS / "grabserial-bbb__graboutput.log.reference"), "cmdline.quiet")


def test_lpj_from_a_real_calibration():
    f = one(findings(FIXTURES / "grabserial-t.log"), "cmdline.lpj")
    assert "lpj=4980736" in f.title
    assert f.saving_ns == 540_000_000  # 0.010000 -> 0.550000: the next kernel message
    assert f.confidence == "high"


def test_lpj_silent_when_calibration_was_skipped(reference):
    # x86 and modern ARM take the value from a timer: "Calibrating delay loop (skipped)".
    assert not only(reference, "cmdline.lpj")
    assert not only(findings(CORPUS / "pine64__bootlog.txt"), "cmdline.lpj")


def test_mem_scales_the_measured_memory_setup(reference):
    f = one(reference, "cmdline.mem")
    assert f.patch == {"target": {"memory": 128}}
    # (0.108343 - 0.086692) s to "Memory:" + 8 ms deferred pages, three quarters of it
    assert f.saving_ns == round((21_651_000 + 8_000_000) * 0.75)


def test_mem_silent_when_mem_is_set():
    assert not only(findings(DATA / "mem-limited.txt"), "cmdline.mem")


def test_init_skips_the_services_before_the_application(reference):
    f = one(reference, "cmdline.init")
    assert "rdinit=" in f.title
    assert f.patch == {"initramfs": {"init": "direct"}}
    assert f.saving_ns > 0


def test_init_from_a_kernel_log():
    f = one(findings(DATA / "init-services.txt"), "cmdline.init")
    assert f.saving_ns == 260_000_000 and f.patch is None


def test_init_silent_without_services_before_the_application():
    assert not only(findings(FIXTURES / "dmesg-plain.txt"), "cmdline.init")


def test_maxcpus_spares_the_wait_for_cpus_that_never_start():
    f = one(findings(DATA / "cpus-fail.txt"), "cmdline.maxcpus")
    assert "`maxcpus=1`" in f.title and f.non_intrusive and f.confidence == "high"
    # 0.054055 -> 5.135489, 5.135509 -> 10.177370, 10.177390 -> 15.219250: from the line before each failure
    assert f.saving_ns == 5_081_434_000 + 5_041_861_000 + 5_041_860_000
    assert sum("the kernel waited" in e for e in f.evidence) == 3
    assert "Brought up 1 node, 1 CPU" in f.evidence[-1]


def test_maxcpus_is_not_offered_when_a_cpu_that_starts_comes_after_one_that_fails():
    f = one(findings(DATA / "cpus-fail-first.txt"), "cmdline.maxcpus")
    assert "maxcpus=" not in f.title and "CPU1" in f.title and not f.non_intrusive and f.patch is None
    assert f.saving_ns == 5_081_434_000 and "device tree" in f.how


def test_maxcpus_silent_when_set_or_every_cpu_started(reference):
    assert not only(findings(DATA / "cpus-maxcpus-set.txt"), "cmdline.maxcpus")
    assert not only(reference, "cmdline.maxcpus")
    assert not only(findings(CORPUS / "pine64__bootlog.txt"), "cmdline.maxcpus")
