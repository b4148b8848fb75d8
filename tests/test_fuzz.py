"""Parsers take garbage: random bytes and mutated real logs never raise anything but a
clear NotALog, and analysis and every renderer cope with what was read."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bootlab.analysis import analyze
from bootlab.render import FORMATS, render
from bootlab.sources import FORMATS as INPUT_FORMATS
from bootlab.sources import NotALog, read

DATA = Path(__file__).parent / "data"
SAMPLES = sorted(p for p in (DATA / "fixtures").iterdir()) + sorted(
    p for p in (DATA / "corpus").iterdir() if p.is_file() and p.stat().st_size < 80_000)
SEEDS = [p.read_bytes() for p in SAMPLES]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])


def _exercise(tmp_path, data: bytes, fmt: str | None = None, which: int | None = None) -> None:
    path = tmp_path / "input.log"
    path.write_bytes(data)
    try:
        boot = read([str(path)], fmt=fmt, which=which)
    except NotALog as err:
        assert str(err).startswith(str(path))
        return
    a = analyze(boot)
    for out in FORMATS:
        render(a, out)


@SETTINGS
@given(data=st.binary(max_size=4000))
def test_random_bytes(tmp_path, data):
    _exercise(tmp_path, data)


@SETTINGS
@given(seed=st.sampled_from(SEEDS), cut=st.integers(0, 10**6), noise=st.binary(min_size=1, max_size=40),
       where=st.integers(0, 10**6))
def test_mutated_real_logs(tmp_path, seed, cut, noise, where):
    data = seed[: cut % (len(seed) + 1)]
    at = where % (len(data) + 1)
    _exercise(tmp_path, data[:at] + noise + data[at:])


@SETTINGS
@given(seed=st.sampled_from(SEEDS), fmt=st.sampled_from([f for f in INPUT_FORMATS if f != "bootchart"]))
def test_every_parser_on_every_log(tmp_path, seed, fmt):
    _exercise(tmp_path, seed, fmt)


@SETTINGS
@given(lines=st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80), max_size=30),
       stamps=st.lists(st.integers(0, 10**7), min_size=30, max_size=30))
def test_printk_shaped_text(tmp_path, lines, stamps):
    body = "".join(f"[{t // 10**6:5d}.{t % 10**6:06d}] {line}\n" for line, t in zip(lines, stamps))
    _exercise(tmp_path, body.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(seeds=st.lists(st.sampled_from(SEEDS), min_size=1, max_size=3), noise=st.binary(max_size=40),
       where=st.integers(0, 10**6), which=st.sampled_from([None, 1, 2, 3, -1, -2, -4]))
def test_logs_run_together_any_boot_asked_for(tmp_path, seeds, noise, where, which):
    """Several logs in one file (several boots, or not), any boot asked for."""
    data = b"\n".join(seeds)
    at = where % (len(data) + 1)
    _exercise(tmp_path, data[:at] + noise + data[at:], which=which)


_HUGE = st.integers(10**18, 10**40).map(str)


@SETTINGS
@given(seconds=_HUGE, shape=st.sampled_from([
    "[{s}.000000] x\n", "6,1,{s},-;x\n", "[{s}.000000 0.000000] x\n",
    "#bootlab-capture 1 {{}}\n{s}.000000000 | x\n", "[    0.1] initcall f+0x0/0x1 returned 0 after {s} usecs\n",
    "[    0.1] probe of d returned 0 after {s} usecs\n", "Startup finished in {s}min 1.000s (kernel) = 1.000s\n",
    "  {s}min 2.000s foo.service\n", "   swapper/0-1   [000] .....   {s}.000000: initcall_start: func=f+0x0/0x10\n",
]))
def test_times_too_big_for_a_boot_are_garbage_not_a_crash(tmp_path, seconds, shape):
    """A time no boot can have (past 64-bit nanoseconds) in any format: a line or event not
    read, never an overflow."""
    _exercise(tmp_path, ("[    0.000000] Linux version 6.1\n" + shape.format(s=seconds)).encode())
