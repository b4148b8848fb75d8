"""Kernel configuration and driver rules, mostly from initcall_debug logs."""

from __future__ import annotations

from .conftest import CORPUS, DATA, FIXTURES, findings, one, only

RPI4 = CORPUS / "rpi4-kernel__run1_dmesg.txt"


def test_trim_counts_builtin_drivers_that_found_no_device():
    f = one(findings(RPI4), "config.trim")
    assert f.saving_ns > 10_000_000 and f.confidence == "medium"
    assert "found no device" in f.evidence[0]


def test_trim_without_initcall_data_asks_for_initcall_debug(reference):
    f = one(reference, "config.trim")
    assert f.saving_ns is None and f.patch == {"target": {"kernel": "cloud"}}
    assert any("initcall_debug" in note for note in f.notes)


def test_trim_silent_on_a_small_kernel():
    assert not only(findings(FIXTURES / "dmesg-plain.txt"), "config.trim")


def test_slab_on_a_kernel_that_still_has_it(reference):
    f = one(reference, "config.slab")
    assert "SLUB:" in f.evidence[0] and f.saving_ns is None


def test_slab_silent_from_linux_6_8():
    assert not only(findings(DATA / "slab-gone.txt"), "config.slab")


def test_ip_autoconfig():
    f = one(findings(DATA / "ip-autoconfig.txt"), "drivers.ip-autoconfig")
    assert f.saving_ns == 1_480_000_000 and "ip=dhcp" in f.evidence[1]


def test_ip_autoconfig_silent_with_ip_off():
    assert not only(findings(DATA / "ip-off.txt"), "drivers.ip-autoconfig")


def test_slow_initcalls_with_a_known_remedy_get_a_patch(reference_debug):
    found = {f.title.split()[5]: f for f in only(reference_debug, "drivers.slow-initcall")}
    assert found["crypto_algapi_init"].patch == {"target": {"append": "cryptomgr.notests"}}
    assert found["crypto_kdf108_init"].patch == {"target": {"append": "initcall_blacklist=crypto_kdf108_init"}}
    assert found["acpi_init"].patch is None and found["acpi_init"].saving_ns == 500_000_000


def test_slow_initcalls_leave_probes_to_async_probe():
    names = {f.title.split()[5] for f in only(findings(RPI4), "drivers.slow-initcall")}
    assert names == {"init_kprobe_trace"}  # the others' time is a device probe


def test_slow_initcalls_silent_on_a_fast_boot():
    assert not only(findings(FIXTURES / "initcall-variants.txt"), "drivers.slow-initcall")


def test_absent_hardware():
    f = one(findings(RPI4), "drivers.absent-hardware")
    assert any("bcm2835-camera returned 19" in e for e in f.evidence)
    assert f.saving_ns >= 39_613_000


def test_absent_hardware_silent_without_misses():
    assert not only(findings(FIXTURES / "initcall-variants.txt"), "drivers.absent-hardware")


def test_probe_defer_chains():
    f = one(findings(RPI4), "drivers.probe-defer")
    assert any(e.startswith("regulator-sd-vcc: deferred 1 times, probed") for e in f.evidence)
    assert any("deferred_probe_initcall" in e for e in f.evidence)


def test_probe_defer_silent_without_deferrals():
    assert not only(findings(FIXTURES / "dmesg-plain.txt"), "drivers.probe-defer")


def test_async_probe_counts_outer_probes_once():
    f = one(findings(RPI4), "drivers.async-probe")
    # The Ethernet probe (212.6 ms) holds its MDIO bus and PHY probes: counted once.
    assert not any("unimac-mdio" in e for e in f.evidence)
    assert "driver_async_probe=" in f.how


def test_async_probe_silent_without_slow_probes():
    assert not only(findings(FIXTURES / "dmesg-plain.txt"), "drivers.async-probe")


def test_modules_after_app():
    f = one(findings(DATA / "modules-before-app.txt"), "drivers.modules-after-app")
    assert f.saving_ns == 310_000_000  # modules.start -> modules.end
    assert "videodev, vivid" in f.evidence[0]


def test_modules_after_app_patch_only_when_the_app_proves_it_works():
    # Without its modules an application that prints the ready line itself fails to, so the
    # optimizer sees a broken variant; one whose init prints it would look faster.
    target = {"initramfs": {"modules": ["vivid n_devs=1"], "modules_after": ["dummy"], "app_prints_ready": True}}
    f = one(findings(DATA / "modules-before-app.txt", target=target), "drivers.modules-after-app")
    assert f.patch == {"initramfs": {"modules": [], "modules_after": ["vivid n_devs=1", "dummy"]}}
    target["initramfs"]["app_prints_ready"] = False
    assert one(findings(DATA / "modules-before-app.txt", target=target), "drivers.modules-after-app").patch is None


def test_modules_after_app_silent_without_a_ready_line():
    assert not only(findings(RPI4), "drivers.modules-after-app")
