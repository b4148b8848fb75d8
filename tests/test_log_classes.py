"""Classes of real boot logs that were read wrong (issue 15): each test names the class."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema

from bootlab.analysis import analyze
from bootlab.analysis.diff import diff
from bootlab.cli import main
from bootlab.sources import read

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
