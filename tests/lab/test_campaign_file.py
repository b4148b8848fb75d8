"""Campaign files: what a variant becomes, and errors that name file, line and key."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bootlab.cli import main
from bootlab.lab import campaign
from bootlab.targets.board import Board


def write(tmp_path, text: str, name: str = "c.toml") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def error_of(tmp_path, text: str) -> str:
    with pytest.raises(campaign.CampaignError) as err:
        campaign.load(write(tmp_path, text))
    return str(err.value)


def test_variants_are_patches_over_the_baseline(tmp_path):
    c = campaign.load(write(tmp_path, """
        runs = 6
        [baseline]
        target.append = "quiet"
        [variant.lpj]
        description = "preset loops_per_jiffy"
        target.append = "lpj=4000000"
        [variant.fast-console]
        target = { append = "console=ttyS0,921600", console_baud = 921600 }
        [variant.lz4]
        initramfs.compression = "lz4"
    """))
    assert c.name == "c" and c.runs == 6 and [v.name for v in c.variants] == ["baseline", "lpj", "fast-console", "lz4"]
    assert c.baseline.spec.cmdline() == "console=ttyS0,115200 panic=-1 quiet"
    assert c.variant("lpj").spec.cmdline() == "console=ttyS0,115200 panic=-1 quiet lpj=4000000"
    assert c.variant("lpj").description == "preset loops_per_jiffy"
    # A named argument replaces the one already there, in place.
    assert c.variant("fast-console").spec.cmdline() == "console=ttyS0,921600 panic=-1 quiet"
    assert c.variant("fast-console").spec.target.console_baud == 921600
    assert c.variant("lz4").spec.initramfs.compression == "lz4"
    assert c.variant("lz4").spec.cmdline() == c.baseline.spec.cmdline()


def test_target_file_and_relative_files(tmp_path):
    (tmp_path / "t").mkdir()
    write(tmp_path, """
        [target]
        kernel = "cloud"
        [initramfs]
        files = { "/etc/app.conf" = "app.conf" }
    """, "t/stock.toml")
    c = campaign.load(write(tmp_path, """
        target_file = "t/stock.toml"
        [variant.rc]
        initramfs.init = "script"
    """))
    assert c.variant("rc").spec.target.kernel == "cloud"
    assert c.variant("rc").spec.base == (tmp_path / "t").resolve()


def test_board_campaign(tmp_path):
    c = campaign.load(write(tmp_path, """
        [board]
        device = "/dev/ttyUSB0"
        power_cycle = "relay cycle"
        ready = "APP READY"
        prepare = "./use default"
        [variant.quiet]
        prepare = "./use quiet"
    """))
    assert isinstance(c.baseline.spec, Board) and c.variant("quiet").spec.prepare == "./use quiet"
    assert c.variant("quiet").spec.ready == "APP READY"


@pytest.mark.parametrize("text, where", [
    ("runs = 8\nrun = 3\n", ":2: run: unknown key"),
    ("runs = 1\n", ":1: runs: at least 2"),
    ("runs = '8'\n", ":1: runs: expected int"),
    ("runs = true\n", ":1: runs: expected int"),
    ("confidence = 1.5\n", ":1: confidence:"),
    ("metric = 'fastest'\n", ":1: metric:"),
    ("runs = 4\n[variant.x]\ninitramfs.compression = 'rar'\n", ":3: initramfs.compression: compression must be one of"),
    ("[variant.x]\ndescription = 'a'\ntarget.kernal = 'cloud'\n", ":3: target.kernal: unknown key"),
    ("[variant.x]\ntarget.memory = 'lots'\n", ":2: target.memory: expected int"),
    ("[variant.x]\ntarget = { memory = 8 }\n", ":2: target.memory: memory must be"),
    ("[variant.x]\nkernel = 'cloud'\n", ":2: kernel: unknown key"),
    ("[baseline]\ninitramfs.init = 'systemd'\n[variant.x]\n", ":2: initramfs.init:"),
    ("[variant.baseline]\ntarget.cpus = 2\n", ":1: variant.baseline:"),
    ("[variant.'a:b']\ntarget.cpus = 2\n", ":1: variant.a:b:"),
    ("[variant.x]\ndescription = 3\n", ":2: variant.x.description: expected str"),
    ("variant = 3\n", ":1: variant: must be a table"),
    ("target_file = 'missing.toml'\n", ":1: target_file:"),
    ("[board]\ndevice = '/dev/ttyUSB0'\npower_cycle = 'x'\n", "board.ready: the ready line"),
    ("[board]\ndevice = '/dev/ttyUSB0'\nready = 'x'\n", ":1: board.power_cycle: give power_cycle"),
    ("[board]\ndevice = '/dev/ttyUSB0'\npower_cycle = 'x'\nready = '(('\n", ":4: board.ready: bad regular"),
    ("[board]\ndevice = '/dev/ttyUSB0'\npower_cycle = 'x'\nready = 'r'\n[variant.q]\nprepare = 1\n",
     ":6: board.prepare: expected str"),
    ("[board]\ndevice = '/dev/ttyUSB0'\npower_cycle = 'x'\nready = 'r'\n[variant.q]\ninitramfs.init = 'rc'\n",
     ":6: board.initramfs: unknown key"),
    ("target_file = 'x.toml'\n[board]\ndevice = 'd'\n", ":1: target_file: a campaign boots either"),
    ("runs = [\n", "c.toml: "),
    ("[variant.m]\ntarget.machine = 'microvm'\n", ":2: target.machine: microvm needs tsc_early_khz="),
])
def test_errors_name_key_and_line(tmp_path, text, where):
    message = error_of(tmp_path, text)
    assert where in message, message
    assert message.startswith(str(tmp_path / "c.toml"))


def test_microvm_with_the_tsc_rate_is_accepted(tmp_path):
    c = campaign.load(write(tmp_path, "[variant.m]\ntarget = { machine = 'microvm', append = 'tsc_early_khz=2596000' }\n"))
    assert c.variant("m").spec.target.machine == "microvm"


def test_cli_refuses_a_bad_file_before_booting(tmp_path, capsys):
    path = write(tmp_path, "runs = 5\n[variant.x]\ntarget.firmware = 'uboot'\n")
    assert main(["lab", "run", path, "--db", str(tmp_path / "x.db")]) == 2
    err = capsys.readouterr().err
    assert f"{path}:3: target.firmware: firmware must be one of" in err
    assert "Traceback" not in err
    assert not (tmp_path / "x-captures").exists()


def test_missing_and_unreadable_files(tmp_path, capsys):
    assert main(["lab", "run", str(tmp_path / "none.toml"), "--db", str(tmp_path / "x.db")]) == 2
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe\x00")
    assert main(["lab", "run", str(tmp_path / "bin.toml"), "--db", str(tmp_path / "x.db")]) == 2
    err = capsys.readouterr().err
    assert "none.toml" in err and "bin.toml" in err and "Traceback" not in err


@pytest.mark.parametrize("path", sorted((Path(__file__).parents[2] / "campaigns").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_campaigns_load(path):
    c = campaign.load(str(path))
    assert c.name == path.stem and len(c.variants) >= 2 and c.runs >= 5


@pytest.mark.parametrize("text", ["", "# nothing yet\n\n"])
def test_an_empty_campaign_file_is_refused(tmp_path, text):
    assert "the campaign file is empty" in error_of(tmp_path, text)


def test_lab_run_of_an_empty_campaign_file_boots_nothing(tmp_path, capsys):
    db = tmp_path / "bootlab.db"
    assert main(["lab", "run", "--db", str(db), write(tmp_path, "")]) == 2
    assert "the campaign file is empty" in capsys.readouterr().err


def test_the_waterfall_campaign_names_host_facts_resolved_where_it_boots():
    """campaigns/seed-waterfall.toml carries no other host's TSC rate or lpj: `host` in it
    becomes this host's values when a variant is built (a guest's TSC runs at its host's)."""
    from bootlab.targets import host_facts
    from bootlab.targets.reference import build

    path = Path(__file__).resolve().parents[2] / "campaigns" / "seed-waterfall.toml"
    text = path.read_text()
    assert "tsc_early_khz=host" in text and "lpj=host" in text
    assert not any(arg.startswith(("tsc_early_khz=", "lpj=")) and not arg.endswith("=host")
                   for arg in text.replace('"', " ").split())
    c = campaign.load(str(path))
    built = build(c.variant("8-pool4").spec)
    khz = host_facts.tsc_khz()
    hz = host_facts.kernel_hz(built.kernel.config)
    assert f"tsc_early_khz={khz}" in built.cmdline.split() and f"lpj={khz * 1000 // hz}" in built.cmdline.split()
    assert "tsc_early_khz=host" in c.variant("8-pool4").spec.cmdline()  # the definition keeps the fact's name
