"""Classes of real boot logs that were read wrong (issue 15): each test names the class."""

from __future__ import annotations

from bootlab.analysis import analyze
from bootlab.analysis.diff import diff
from bootlab.sources import read


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
