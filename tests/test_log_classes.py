"""Classes of real boot logs that were read wrong (issue 15): each test names the class."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema

from bootlab.analysis import analyze
from bootlab.analysis.diff import diff
from bootlab.cli import main
from bootlab.sources import read
from bootlab.timeline import NS_PER_MS as MS

SCHEMA = json.loads(resources.files("bootlab").joinpath("schema/analysis-2.json").read_text())


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
