"""Trimming a kernel's configuration from a probe boot: each slow built-in initcall traced
to the Kconfig option that builds it in Debian's source, the optimizer's kernel candidates
(compression, slab allocator, those options) configured for real, and a configuration's
difference from Debian's."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootlab.advice.kernel_config import idle_drivers
from bootlab.lab.candidates import kernel_config, slow_builtin_initcalls
from bootlab.lab.optimizer import Optimizer
from bootlab.lab.patch import apply
from bootlab.lab.store import Store
from bootlab.sources import read
from bootlab.targets import kernel_build, kernel_trim, kinds, packages
from bootlab.targets.reference import load

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "demo" / "kernel-small.toml"
GENERIC_INITCALLS = ROOT / "tests" / "data" / "real" / "generic-initcall.dmesg.gz"

def test_slow_initcalls_of_debians_kernel_are_traced_to_their_options(tree):
    config = kernel_build.read_config(packages.kernel("generic", fetch=False).config)
    slow = slow_builtin_initcalls(read([str(GENERIC_INITCALLS)]))
    found = kernel_trim.origins(tree, [name for name, _ in slow], config)
    assert len(found) >= 0.9 * len(slow)  # 94 of 99 on this boot
    assert found["serial8250_init"].file == "drivers/tty/serial/8250/8250_core.c"
    assert found["serial8250_init"].option == "SERIAL_8250"
    assert found["i8042_init"].option == "SERIO_I8042"
    assert found["agp_init"].option == "AGP"
    # Defined in two files (the ACPI core and an LG laptop driver, a module here): the one
    # built into the image is the one.
    assert found["acpi_init"].file == "drivers/acpi/bus.c"
    # An object every kernel builds has no option that removes it.
    assert found["chr_dev_init"].option is None


def test_kernel_candidates_configure_as_they_say(tree, tmp_path):
    small = load(str(SMALL))
    base_dir = tmp_path / "base"
    base_dir.mkdir()
    kernel_build.configure(small.kernel_config(), tree, base_dir)
    config = kernel_build.read_config(base_dir / ".config")
    origin = kernel_trim.origins(tree, ["serport_init"], config)["serport_init"]
    candidates = {c.name: c for c in kernel_config(small, config, [(origin, 30_000_000)])}
    assert {"kernel-lz4", "kernel-gzip", "kernel-slab", "kernel-o2", "kconfig-no-SERIO_SERPORT"} <= set(candidates)
    assert "kernel-xz" not in candidates and "kernel-os" not in candidates  # what it is already
    # tinyconfig is not preemptible and has no SMP: its RCU is Tiny RCU, PREEMPT brings preemptible RCU.
    assert config.get("CONFIG_TINY_RCU") == "y" and "kernel-preempt-none" not in candidates
    assert "preemptible RCU" in candidates["kernel-preempt"].description
    for name, on, off in (("kernel-lz4", "CONFIG_KERNEL_LZ4", "CONFIG_KERNEL_XZ"),
                          ("kernel-o2", "CONFIG_CC_OPTIMIZE_FOR_PERFORMANCE", "CONFIG_CC_OPTIMIZE_FOR_SIZE"),
                          ("kernel-preempt", "CONFIG_PREEMPT_RCU", "CONFIG_PREEMPT_NONE"),
                          ("kconfig-no-SERIO_SERPORT", None, "CONFIG_SERIO_SERPORT")):
        variant = kinds.from_dict(apply(small.to_dict(), candidates[name].patch), base=small.base)
        out = tmp_path / name
        out.mkdir()
        kernel_build.configure(variant.kernel_config(), tree, out)
        result = kernel_build.read_config(out / ".config")
        assert off not in result and (on is None or result[on] == "y")
        diff = kernel_build.difference(config, result)
        assert off.removeprefix("CONFIG_") in diff.removed


def test_built_in_drivers_that_found_no_device_are_turned_off_in_one_candidate(tree, tmp_path):
    """localmodconfig's pass done for built-ins: every driver of Debian's generic kernel that
    registered in the initcall_debug boot and probed nothing, off in one rebuild; what
    Kconfig will not let go (an option others select) is left as it is, before any build."""
    config = kernel_build.read_config(packages.kernel("generic", fetch=False).config)
    idle = sorted({ev.name for ev in idle_drivers(read([str(GENERIC_INITCALLS)]))})
    found = kernel_trim.origins(tree, idle, config)
    target = kinds.from_dict({"target": {"kernel": "built"}, "kconfig": {"base": "generic"}})
    unused = [found[n] for n in idle if n in found and found[n].option]
    types = kernel_build.kconfig_types(tree, [o.option for o in unused] + ["SERIAL_8250"])
    # pci_driver_init registers the PCI bus, not a driver: a bool, never offered.
    assert types["SERIAL_8250"] == "tristate" and types["PCI"] == "bool" and "PCI" in {o.option for o in unused}
    candidate = next(c for c in kernel_config(target, config, [], kernel_trim.modular(tree, unused))
                     if c.name == "kconfig-idle-drivers")
    asked = candidate.patch["kconfig"]["options"]
    assert len(asked) >= 5 and set(asked.values()) == {"n"} and "PCI" not in asked
    kept = Optimizer(Store(str(tmp_path / "o.db")), target, name="idle")._kconfig_kept(target, candidate)
    assert kept is not None
    options = kept.patch["kconfig"]["options"]
    assert options and set(options) <= set(asked)
    out = tmp_path / "idle"
    out.mkdir()
    kernel_build.configure(kinds.from_dict(apply(target.to_dict(), kept.patch)).kernel_config(), tree, out)
    removed = kernel_build.difference(config, kernel_build.read_config(out / ".config")).removed
    assert set(options) <= set(removed)


def test_a_configurations_difference_names_what_became_of_each_option():
    before = {"CONFIG_A": "y", "CONFIG_B": "y", "CONFIG_C": "m", "CONFIG_D": "y", "CONFIG_HZ": "250"}
    after = {"CONFIG_B": "m", "CONFIG_C": "y", "CONFIG_D": "y", "CONFIG_E": "y", "CONFIG_HZ": "100"}
    d = kernel_build.difference(before, after)
    assert (d.removed, d.made_modules, d.built_in, d.added, d.changed) == (
        ["A"], ["B"], ["C"], ["E"], ["HZ: 250 -> 100"])
    assert d.summary() == "1 removed, 1 made modules, 1 built in, 1 added, 1 changed"


@pytest.mark.qemu
@pytest.mark.usefixtures("tree")  # the kernel's source, to trace initcalls to options
def test_the_optimizers_probe_of_a_built_kernel_offers_its_configuration(tmp_path):
    small = load(str(SMALL))
    optimizer = Optimizer(Store(str(tmp_path / "o.db")), small, name="trim")
    facts, candidates = optimizer.probe(1, small)
    kernel = [c for c in candidates if "kconfig" in c.patch]
    assert {"kernel-lz4", "kernel-slab"} <= {c.name for c in kernel}
    # initcall_blacklist= is the stand-in for packaged kernels only.
    assert not any(c.name.startswith("skip-") for c in candidates)
