"""Classes of real boot logs that were read wrong (issue 15): each test names the class."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import jsonschema

from bootlab.advice import advise
from bootlab.analysis import analyze
from bootlab.analysis.diff import diff
from bootlab.cli import main
from bootlab.render import render
from bootlab.sources import read
from bootlab.sources.userspace import Patterns
from bootlab.timeline import NS_PER_MS as MS

SCHEMA = json.loads(resources.files("bootlab").joinpath("schema/analysis-3.json").read_text())


def analysis(*paths):
    return analyze(read(list(paths)))


def test_blame_keeps_functions_of_the_same_name_in_different_modules_apart(fixture_path):
    # An Android GKI kernel with CFI reports every module's init as __cfi_check [module].
    a = analysis(fixture_path("dmesg-modules-cfi.txt"))
    cfi = [b for b in a.initcalls if b.name == "__cfi_check"]
    assert len(cfi) == 7
    assert [b.detail for b in cfi[:3]] == ["[msm_drm]", "[ath11k_pci]", "[snd_soc_wcd938x]"]
    changes = diff(a, a).spans[0]
    assert changes.common == 9  # two built-in initcalls and seven module functions


def test_probe_outcomes_are_classed_and_errno_named(fixture_path):
    # "returned 1" is a driver that bound; -517 and 517 are deferrals, retried later;
    # -19 ENODEV and -6 ENXIO are hardware that is not there; the rest failed.
    a = analysis(fixture_path("dmesg-probe-outcomes.txt"))
    assert [(b.name, b.detail) for b in a.failures] == [("regulator_fixed_init", "returned -22 EINVAL"),
                                                        ("sof-audio-pci", "returned -2 ENOENT")]
    assert [(b.name, b.detail) for b in a.absent] == [("hpet_late_init", "returned -19 ENODEV"),
                                                      ("acpi_thermal_init", "returned -6 ENXIO")]
    assert [(b.name, b.detail) for b in a.deferred] == [("0000:00:15.0", "returned -517 EPROBE_DEFER"),
                                                        ("0000:00:15.1", "returned 517 EPROBE_DEFER")]
    assert "i8042" not in {b.name for b in a.failures + a.absent + a.deferred}


def test_probe_outcomes_in_text_and_json(fixture_path, capsys):
    assert main(["analyze", fixture_path("dmesg-probe-outcomes.txt")]) == 0
    text = capsys.readouterr().out
    assert "Initcalls and probes that failed (2):" in text and "returned -22 EINVAL" in text
    assert "Hardware not found" in text and "returned -19 ENODEV" in text
    assert "Probes deferred" in text and "returned -517 EPROBE_DEFER" in text
    assert main(["analyze", "-f", "json", fixture_path("dmesg-probe-outcomes.txt")]) == 0
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, SCHEMA)
    assert [(f["ret"], f["errno"], f["outcome"]) for f in doc["deferred"]] == [(-517, "EPROBE_DEFER", "deferred"),
                                                                               (517, "EPROBE_DEFER", "deferred")]
    assert doc["absent"][0]["errno"] == "ENODEV" and doc["failures"][0]["outcome"] == "failed"


def test_oldest_initcall_form_lasts_until_the_next_call_an_upper_bound(fixture_path):
    # 2.6.1x prints `Calling initcall 0x...: fn+0x0/0x..()` and no return line.
    a = analysis(fixture_path("initcall-oldest.txt"))
    pci = next(b for b in a.initcalls if b.name == "pci_init")
    assert (pci.duration, pci.upper_bound) == (750 * MS, True)
    assert "upper bound" in pci.detail
    last = next(b for b in a.initcalls if b.name == "net_olddevs_init")
    assert last.duration == 130 * MS  # until the root filesystem was mounted
    assert not any("never returned" in d.message for d in a.boot.diagnostics)
    assert sum("oldest form" in d.message for d in a.boot.diagnostics) == 1


def test_no_advice_on_upper_bounds(fixture_path):
    from bootlab.advice import advise

    a = analysis(fixture_path("initcall-oldest.txt"))
    findings = advise(a.boot, a)
    assert not [f for f in findings if "pci_init" in " ".join(f.evidence)]


def test_freeing_init_memory_starts_userspace_on_old_kernels(fixture_path):
    a = analysis(fixture_path("initcall-oldest.txt"))
    start = a.phases.boundaries["userspace.start"]
    assert start.at == 1570 * MS and ":17 " in start.evidence


def test_upper_bounds_are_labelled_in_text_and_json(fixture_path, capsys):
    assert main(["analyze", fixture_path("initcall-oldest.txt")]) == 0
    assert "≤750ms  pci_init" in capsys.readouterr().out
    assert main(["analyze", "-f", "json", fixture_path("initcall-oldest.txt")]) == 0
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, SCHEMA)
    pci = next(b for b in doc["blame"]["initcalls"] if b["name"] == "pci_init")
    assert pci["upper_bound"] and doc["critical_path"]["kernel_longest"][0]["upper_bound"]


def test_module_initcalls_are_not_the_kernels_initcall_phase(fixture_path):
    # modprobe and udev loaded these modules at 22-27 s: the kernel had long finished.
    a = analysis(fixture_path("ftrace-modules.txt"))
    assert "initcalls.start" not in a.phases.boundaries
    assert [s.name for s in a.phases.spans] == ["kernel init + initcalls + rootfs/init"]
    assert any("every initcall in these logs is a module's" in n for n in a.phases.notes)
    assert {b.name: b.detail for b in a.initcalls}["i915_init"] == "[i915]"
    assert [lv for lv, _t, _n in a.levels] == ["module"]


def test_a_wrapped_android_dmesg_of_module_initcalls(fixture_path):
    a = analysis(fixture_path("dmesg-android-wrapped.txt"))
    assert "initcalls.start" not in a.phases.boundaries
    assert not any(s.phases[0].value == "initcalls" for s in a.phases.spans)


def test_userspace_joined_to_a_dmesg_that_runs_long_past_the_boot(fixture_path):
    # A desktop's dmesg runs to 543 s; its critical chain's units are also in the dmesg
    # (`systemd[1]: Listening on systemd-journald.socket`): that places the chain.
    a = analysis(fixture_path("dmesg-desktop-late.txt"), fixture_path("systemd-chain-desktop.txt"))
    info = a.boot.clocks["userspace"]
    assert info.method == "anchors" and "systemd-journald.socket active" in info.evidence
    target = next(s for s in a.critical.userspace if s.name == "graphical.target")
    assert 15_500 * MS < target.start < 15_700 * MS  # 4.132 s - 0.332 s + 11.805 s
    assert a.phases.end.at == target.start and "graphical.target" in a.phases.end.evidence
    assert any("the boot ends at the default target" in n for n in a.phases.notes)
    services = next(s for s in a.phases.spans if s.name == "services")
    assert services.duration / a.phases.total < 0.8
    assert not any("placed right after the last" in d.message for d in a.boot.diagnostics)


def test_userspace_placed_by_the_switch_from_the_initrd(fixture_path, corpus_path):
    a = analysis(fixture_path("dmesg-initrd-switch.txt"), corpus_path("rpi4-userspace__run_1_chain.txt"))
    info = a.boot.clocks["userspace"]
    assert info.offset == 4_880_217_000 and "systemd switched from the initrd" in info.evidence
    assert a.phases.end.at == 4_880_217_000 + 8_345 * MS


def test_userspace_placed_where_the_kernel_started_init(fixture_path, corpus_path):
    a = analysis(fixture_path("dmesg-crng-late.txt"), corpus_path("rpi4-userspace__run_1_chain.txt"))
    info = a.boot.clocks["userspace"]
    assert info.offset == 1_436_200_000 and "the kernel started init" in info.evidence


def test_without_a_ready_line_the_boot_ends_at_its_last_milestone(fixture_path):
    # `random: crng init done` 100 s later and a hot-plug are not the boot.
    a = analysis(fixture_path("dmesg-crng-late.txt"))
    assert a.phases.end.at == 1_436_200_000
    assert any("the logs go on to 101.733 s" in n for n in a.phases.notes)
    assert a.phases.spans[-1].end == a.phases.end.at


def test_an_untimed_login_prompt_is_placed_from_its_neighbours(fixture_path):
    a = analysis(fixture_path("console-untimed-login.txt"))
    assert a.phases.end.mark == "ready" and a.phases.end.at == 3_870_001_000
    assert "buildroot login" in a.phases.end.evidence and "placed at line 11" in a.phases.end.evidence
    # The boot ended no earlier: the headline says so (an i.MX93 Falcon-mode console's login
    # came after its last kernel line, 0.432 s, by however long its Yocto userspace took).
    assert a.phases.end.lower_bound and "ready reached at least " in render(a, "text")
    assert json.loads(render(a, "json"))["end"]["lower_bound"] is True


def test_a_login_prompt_with_the_name_typed_after_it_ends_the_boot(fixture_path):
    # A console captured while someone logged in: the getty's prompt carries the name typed
    # after it (`board login: root`); the shell's lines after it are not the prompt.
    a = analysis(fixture_path("console-login-typed.txt"))
    assert a.phases.end.mark == "ready" and a.phases.end.at == 4_918_230_000
    assert "board login: root" in a.phases.end.evidence and "placed at line 11" in a.phases.end.evidence


def test_a_log_without_times_says_why_nothing_is_timed(fixture_path):
    a = analysis(fixture_path("console-untimed.txt"))
    assert not a.phases.spans
    assert any("no line of these logs carries a time" in n for n in a.phases.notes)


def test_systemds_own_total_is_reported(fixture_path):
    # 1.234 + 2.345 + 3.457 = 7.036; systemd printed 7.037 s (each part rounded on its own).
    a = analysis(fixture_path("systemd-time-rounded.txt"))
    assert a.phases.total == 7_037 * MS


def test_startup_finished_in_a_kernel_log_is_read_as_systemds_figures(fixture_path):
    boot = read([fixture_path("journal.txt")])
    assert boot.meta["systemd_time"] == {"kernel": 1_500 * MS, "userspace": 2_500 * MS}


def test_durations_keep_three_significant_digits_whatever_their_value():
    from bootlab.render.fmt import span

    assert span(1_389_000) == "1.39ms"  # not 1ms
    assert [span(84_000_000), span(84_500_000)] == ["84.0ms", "84.5ms"]  # never 84ms beside 84.5ms
    assert [span(821_000_000), span(999_999), span(999_600_000)] == ["821ms", "1.00ms", "1.000s"]
    assert [span(5_000), span(588_000), span(450)] == ["5.00us", "588us", "450ns"]


def test_oldest_initcall_form_without_a_colon_or_a_name(fixture_path):
    # 2.6.3 printed "Calling initcall 0xc03f7e19 pcibios_init"; without kallsyms, the address only.
    a = analysis(fixture_path("initcall-oldest-bare.txt"))
    assert [(b.name, b.duration, b.upper_bound) for b in a.initcalls] == [
        ("pcibios_init", 170 * MS, True), ("0xc03f1e7c", 18 * MS, True), ("netdev_init", 2 * MS, True)]


def test_a_critical_chain_alone_ends_at_its_target(fixture_path):
    a = analysis(fixture_path("systemd-chain-desktop.txt"))
    assert a.phases.end.at == 11_805 * MS and "graphical.target" in a.phases.end.evidence
    assert any("the boot ends at the default target" in n for n in a.phases.notes)


def test_the_root_slice_is_a_unit_of_the_chain_not_tree(fixture_path):
    a = analysis(fixture_path("systemd-chain-desktop.txt"))
    assert [s.name for s in a.critical.userspace][-2:] == ["system.slice", "-.slice"]


def test_units_of_the_initrd_do_not_place_the_real_roots_clock(fixture_path):
    # The initrd listens on systemd-journald.socket too: only the real root's line is the chain's.
    a = analysis(fixture_path("dmesg-initrd-units.txt"), fixture_path("systemd-chain-desktop.txt"))
    info = a.boot.clocks["userspace"]
    assert info.offset == 5_460_552_000 - 332 * MS and ":8 " in info.evidence


def test_module_initcalls_are_not_the_kernels_critical_path(fixture_path):
    assert analysis(fixture_path("ftrace-modules.txt")).critical.kernel_track is None
    # Android's first-stage init is PID 1 when it loads modules: its __cfi_check are not kernel steps.
    assert analysis(fixture_path("dmesg-android-wrapped.txt")).critical.kernel_track is None
    cp = analysis(fixture_path("dmesg-modules-cfi.txt")).critical
    assert cp.kernel_track == "pid 1" and {s.name for s in cp.kernel_top} == {"pci_subsys_init", "init_mmap_min_addr"}


def test_outcome_lists_made_when_read_are_those_made_at_once():
    # The failed and absent lists are made from the columns only as far as they are read
    # (a million-line log has tens of thousands; the text report shows ten): any part read
    # first is what the whole list holds there, and the lists still read as lists.
    log = str(Path(__file__).parent / "data" / "real" / "generic-initcall.dmesg.gz")
    whole = list(analysis(log).absent)
    assert len(whole) > 10
    fresh = analysis(log)
    assert len(fresh.absent) == len(whole)
    assert fresh.absent[:3] == whole[:3] and fresh.absent[-1] == whole[-1] and fresh.absent[5] == whole[5]
    assert fresh.absent == whole and fresh.absent + fresh.deferred == whole + list(fresh.deferred)
    assert [] + fresh.failures == list(fresh.failures) and whole[0] in fresh.absent


def test_initcalls_start_without_devtmpfs_or_initcall_debug(fixture_path):
    """A kernel without devtmpfs (Android's GKI has none) and without initcall_debug had no
    boundary between kernel init and the initcalls: one merged phase.  The kernel brings
    its other CPUs up just before its initcalls; on one CPU, netlink registers itself in one
    of the first (a core initcall), an upper bound."""
    a = analysis(fixture_path("console-gki-no-devtmpfs.txt"))
    names = [s.name for s in a.phases.spans]
    assert names[:2] == ["kernel init", "initcalls"], names
    assert a.phases.spans[1].start == 143_905_000
    assert "smp: Brought up; the initcalls follow within milliseconds" in a.phases.spans[1].start_evidence
    a = analysis(fixture_path("dmesg-up-no-devtmpfs.txt"))
    assert [s.name for s in a.phases.spans][:2] == ["kernel init", "initcalls"]
    assert a.phases.spans[1].start == 71_518_000  # "NET: Registered protocol family 16", not family 2
    assert "the initcalls had started by then" in a.phases.spans[1].start_evidence


def test_a_root_device_that_never_appears_ends_the_boot_at_the_wait(fixture_path):
    # A handheld's console (public RK3566 log): the kernel waits for its root device at
    # 1.589 s and prints only deferred probes 10 s later.  The boot ended at netlink's
    # initcall (62 ms), the last milestone read; it ends at the wait, in the initcalls,
    # and a note says userspace was never reached.
    a = analysis(fixture_path("console-root-never-appears.txt"))
    assert a.phases.end.at == 1_588_806_000 and "Waiting for root device PARTUUID=0badc0de-02" in a.phases.end.evidence
    assert [s.name for s in a.phases.spans] == ["kernel init", "initcalls"]
    assert any("never reached userspace" in n for n in a.phases.notes)


def test_a_root_wait_in_a_log_without_times_is_said(fixture_path, tmp_path):
    """A kernel without printk times whose console ends at `Waiting for root device ...` (a
    Zybo's PetaLinux console, public): "nothing can be timed" was all it said.  It says the
    boot never reached userspace unless the log was cut there; a root mounted after the
    wait says nothing."""
    lines = [re.sub(r"^\[\s*\d+\.\d+\] ", "", line)
             for line in open(fixture_path("console-root-never-appears.txt")).read().splitlines()]
    untimed = tmp_path / "untimed.log"
    untimed.write_text("\n".join(lines) + "\n")
    a = analysis(str(untimed))
    assert a.phases.end is None
    (note,) = [n for n in a.phases.notes if "waited for its root device" in n]
    assert "PARTUUID=0badc0de-02" in note and "unless the log was cut there, this boot never reached userspace" in note
    wait = next(k for k, line in enumerate(lines) if line.startswith("Waiting for root device"))
    mounted = tmp_path / "mounted.log"
    mounted.write_text("\n".join(lines[:wait + 1] + ["VFS: Mounted root (ext4 filesystem) on device 179:2.",
                                                      "Run /sbin/init as init process"]) + "\n")
    assert not [n for n in analysis(str(mounted)).phases.notes if "waited for its root device" in n]


def test_a_kernel_panic_ends_the_boot_as_failed(fixture_path):
    # The shape of a public Milk-V Meles console (openEuler, the root's filesystem not
    # mountable): the boot ended at "bootconsole disabled" (2.865 s) with "no ready marker
    # found", as if it had been cut.  It failed at the panic: its end is the panic, named so.
    a = analysis(fixture_path("console-kernel-panic.txt"))
    assert a.phases.end.mark == "failure" and a.phases.end.at == 3_516_603_000
    assert "Kernel panic: VFS: Unable to mount root fs on unknown-block(179,4)" in a.phases.end.evidence
    assert any("the kernel panicked" in n and "never reached ready" in n for n in a.phases.notes)
    findings = advise(a.boot, a)
    assert findings[0].rule == "boot.kernel-panic" and "no filesystem the kernel has" in findings[0].how
    assert "app.ready-marker" not in [f.rule for f in findings]
    # A ready line before a panic (a crash after the boot) keeps the boot's end at ready.
    late = analyze(read([fixture_path("console-kernel-panic.txt")], Patterns.from_options(ready="Switched to clocksource")))
    assert late.phases.end.mark == "ready" and late.phases.end.at == 511_752_000


def test_systemds_emergency_mode_ends_the_boot_as_failed(fixture_path, tmp_path):
    # A mount that never came sends systemd to its emergency target: the boot ended at its
    # last unit, "no ready marker found"; it failed there, and the advice names the units.
    text = open(fixture_path("console-kernel-panic.txt")).read().split("[    3.401877]")[0]
    log = tmp_path / "emergency.txt"
    log.write_text(text + "[    3.401877] Run /sbin/init as init process\n"
                   "[    3.600000] systemd[1]: systemd 252.30-1~deb12u2 running in system mode\n"
                   "         Starting systemd-fsck@dev-mmcblk0p5.service - File System Check on /dev/mmcblk0p5...\n"
                   "[    4.100000] EXT4-fs (mmcblk0p5): bad geometry: block count 2621440 exceeds size of device\n"
                   "[FAILED] Failed to mount data.mount - /data.\n"
                   "[DEPEND] Dependency failed for local-fs.target - Local File Systems.\n"
                   "[  OK  ] Reached target emergency.target - Emergency Mode.\n"
                   "You are in emergency mode. After logging in, type \"journalctl -xb\" to view\n"
                   "Give root password for maintenance\n")
    a = analysis(str(log))
    assert a.phases.end.mark == "failure" and a.phases.end.at == 4_100_000_000  # (the status lines carry no time)
    assert "Emergency mode: systemd reached emergency.target" in a.phases.end.evidence
    assert any(n.startswith("systemd went to emergency mode") for n in a.phases.notes)
    (first, *_rest) = advise(a.boot, a)
    assert first.rule == "boot.emergency-mode"
    assert any("Failed to mount data.mount" in e for e in first.evidence)
    assert any("Dependency failed for local-fs.target" in e for e in first.evidence)


def test_an_initramfs_that_gives_a_shell_ends_the_boot_as_failed(tmp_path):
    # A public console of an Ubuntu initramfs (initramfs-tools) that never found its root
    # ended at `Run /init`, "no ready marker found", 0 ns of rootfs/init; dracut's emergency
    # shell the same: the boot failed where the initramfs gave up, and the advice says why.
    kernel = ("[    0.000000] Linux version 5.15.0-101-generic (buildd@lcy02-amd64-031) (gcc 11.4.0) #111-Ubuntu SMP\n"
              "[    0.300000] devtmpfs: initialized\n"
              "[   27.985661] Run /init as init process\n"
              "Loading, please wait...\n"
              "Starting version 249.11-0ubuntu3.7\n"
              "[   31.052677] e1000 0000:00:03.0 ens3: renamed from eth0\n")
    tools = tmp_path / "initramfs-tools.log"
    tools.write_text(kernel + "Begin: Waiting for root file system ... Begin: Running /scripts/local-block ... done.\n"
                     "done.\n"
                     "Gave up waiting for root file system device.  Common problems:\n"
                     " - Boot args (cat /proc/cmdline)\n"
                     "ALERT!  /dev/sda does not exist.  Dropping to a shell!\n\n"
                     "BusyBox v1.30.1 (Ubuntu 1:1.30.1-7ubuntu3) built-in shell (ash)\n"
                     "(initramfs) \n")
    a = analysis(str(tools))
    assert a.phases.end.mark == "failure" and a.phases.end.at == 31_052_677_000  # (untimed: the timed line before)
    assert "Initramfs shell: /dev/sda does not exist" in a.phases.end.evidence
    (first, *_rest) = advise(a.boot, a)
    assert first.rule == "boot.initramfs-shell" and "did not appear" in first.how
    dracut = tmp_path / "dracut.log"
    dracut.write_text(kernel + "[  189.112233] dracut-initqueue[312]: Warning: dracut-initqueue: timeout, still waiting "
                      "for following initqueue hooks:\n"
                      "[  189.220000] dracut-initqueue[312]: Warning: /dev/disk/by-uuid/5e4c-9a1b does not exist\n"
                      "Generating \"/run/initramfs/rdsosreport.txt\"\n\n"
                      "Entering emergency mode. Exit the shell to continue.\n"
                      "Type \"journalctl\" to view system logs.\n"
                      "dracut:/# \n")
    b = analysis(str(dracut))
    assert b.phases.end.mark == "failure" and b.phases.end.at == 189_220_000_000
    assert "dracut's emergency shell: /dev/disk/by-uuid/5e4c-9a1b does not exist" in b.phases.end.evidence
    assert advise(b.boot, b)[0].rule == "boot.initramfs-shell"


def test_a_log_that_ends_as_init_starts_times_no_userspace(fixture_path, tmp_path):
    # A public Sipeed Maix (K210) console ends at "Run /init as init process": its last phase
    # was a 0 ns "rootfs/init", which the log does not hold.  One that goes on after init's
    # start (a GoPro's dmesg, 18 s more) keeps it: the boot's end there is a guess.
    text = open(fixture_path("console-kernel-panic.txt")).read().split("[    3.401877]")[0]
    log = tmp_path / "k210.txt"
    log.write_text(text + "[    3.401877] Run /init as init process\n")
    a = analysis(str(log))
    assert [s.name for s in a.phases.spans] == ["kernel init", "initcalls"]
    assert any("the logs end as init starts" in n for n in a.phases.notes)
    log.write_text(text + "[    3.401877] Run /init as init process\n[    9.000000] random: crng init done\n")
    b = analysis(str(log))
    assert [s.name for s in b.phases.spans][-1] == "rootfs/init"
    assert not any("the logs end as init starts" in n for n in b.phases.notes)


def test_a_console_that_ends_at_the_kernel_handover_times_no_kernel_phase(fixture_path):
    # A bootloader's log alone (public Allwinner sun8iw21 dongle: boot0, OP-TEE and a vendor
    # U-Boot stamping seconds, cut at "Starting kernel ..."): its last phase was a 0 ns
    # "kernel load/decompress + kernel init + initcalls + rootfs/init" at the handover, phases
    # the log does not hold.  The boot ends with the bootloader, and a note says why.
    a = analysis(fixture_path("console-ends-at-handover.txt"))
    assert a.phases.end.at == 2_987 * MS
    assert [s.name for s in a.phases.spans] == ["firmware", "bootloader"]  # boot0's banner at 31 ms
    assert any("the logs end at the kernel handover" in n for n in a.phases.notes)


def test_a_console_cut_at_the_kernels_first_lines_ends_in_kernel_init(fixture_path):
    # A console quoted up to the kernel's first lines, all stamped zero (a public Orange Pi
    # Zero3's vendor image, in its README): its last phase was a 0 ns "kernel init +
    # initcalls + rootfs/init", naming phases the log never reached.
    a = analysis(fixture_path("console-cut-at-kernel-start.txt"))
    assert [s.name for s in a.phases.spans][-1] == "kernel init"
    assert a.phases.spans[-1].duration == 0 and a.phases.end.at == 7_352 * MS


def test_a_kernel_log_of_what_came_after_the_boot_times_no_phase(fixture_path):
    # A router's dmesg saved minutes after boot (public MediaTek Filogic log): its buffer
    # wrapped at 38 s and only Wi-Fi and bridge messages are left.  It was read as one
    # 4 min 48 s phase "kernel init + initcalls + rootfs/init" from printk zero to its last
    # line; it holds no step of the boot, so no phase is timed and a note says why.
    a = analysis(fixture_path("dmesg-after-boot.txt"))
    assert not a.phases.spans and a.phases.end is None
    assert any("they hold what was printed after the boot" in n for n in a.phases.notes)
    assert any("begins at 38.344607 s of printk time" in n for n in a.phases.notes)
