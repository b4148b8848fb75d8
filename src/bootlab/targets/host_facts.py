"""Facts of the host that boots, named in a target instead of stored: `tsc_early_khz=host`
and `lpj=host` on the kernel command line are resolved here, when and where it boots.

A guest's TSC runs at its host's rate (under TCG and KVM alike), so a TSC rate taken on
one machine makes the guest's clock run fast or slow on another (0.886 of real time when
a 2596 MHz rate is given on a 2300 MHz host), and every printk duration with it.  The
delay loop's lpj follows from the same rate (lpj = TSC kHz × 1000 / HZ on x86).
"""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

HOST = "host"
FACTS = ("tsc_early_khz", "lpj")
# The host kernel's own words, best first: the refined calibration, then the early one.
_TSC = [re.compile(r"tsc: Refined TSC clocksource calibration: (?P<mhz>\d+\.\d+) MHz"),
        re.compile(r"tsc: Detected (?P<mhz>\d+\.\d+) MHz processor")]


class HostFactError(Exception):
    pass


def _kernel_log() -> str:
    """This host's kernel log since it booted: dmesg, else the journal."""
    for argv in (["dmesg"], ["journalctl", "-k", "-b", "-o", "cat", "--no-pager"]):
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and "tsc:" in out.stdout:
            return out.stdout
    return ""


@functools.lru_cache(maxsize=1)
def tsc_khz() -> int:
    """This host's TSC rate in kHz, as its kernel calibrated it."""
    log = _kernel_log()
    for pattern in _TSC:
        m = pattern.search(log)
        if m:
            return round(float(m.group("mhz")) * 1000)
    raise HostFactError("tsc_early_khz=host: this host's kernel log (dmesg, journalctl -k) does not say its TSC "
                        "rate ('tsc: Detected ... MHz'); give the rate itself")


def kernel_hz(config: Path) -> int:
    """CONFIG_HZ of a kernel, from its configuration file."""
    try:
        m = re.search(r"^CONFIG_HZ=(\d+)$", config.read_text(), re.M)
    except OSError as err:
        raise HostFactError(f"lpj=host: cannot read {config}: {err.strerror}") from None
    if not m:
        raise HostFactError(f"lpj=host: {config} sets no CONFIG_HZ")
    return int(m.group(1))


def resolve(cmdline: str, config: Path) -> str:
    """The command line with each `NAME=host` replaced by this host's value."""
    out = []
    for arg in cmdline.split():
        name, _, value = arg.partition("=")
        if value == HOST and name == "tsc_early_khz":
            arg = f"{name}={tsc_khz()}"
        elif value == HOST and name == "lpj":
            arg = f"{name}={tsc_khz() * 1000 // kernel_hz(config)}"
        out.append(arg)
    return " ".join(out)
