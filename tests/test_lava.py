"""LAVA job logs (sources/lava.py): a real boot of the reference device written as LAVA's
dispatcher writes a job's log, and the rendered text shape of a public LKFT job."""

from __future__ import annotations

import gzip
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml

from bootlab.analysis import analyze
from bootlab.sources import read
from bootlab.sources.bootlab_capture import CONTINUES, iter_records, segments, unescape
from bootlab.timeline import NS_PER_S, Boot, Mark

REAL = Path(__file__).parent / "data" / "real"
BAUD = 115200
START = datetime(2026, 11, 29, 9, 0, 0, 250000)  # the dispatcher's UTC clock at power-on


def _record(t_ns: int, lvl: str, msg) -> str:
    """One record as LAVA's YAMLLogger writes it (lava_common/log.py: a flow mapping,
    every scalar double-quoted, one line)."""
    dt = (START + timedelta(microseconds=t_ns // 1000)).isoformat()
    return "- " + yaml.safe_dump({"dt": dt, "lvl": lvl, "msg": msg}, default_flow_style=True,
                                 default_style='"', width=10**5)[:-1]


def _as_lava(capture: bytes, earlier_attempt: bool = False) -> tuple[str, int]:
    """A bootlab capture written as LAVA logs a job: its power action's records, ser2net's
    lines, each console line (its \\r and ESCs dropped, its quotes escaped, as ShellLogger
    does) stamped when its last byte came, and what was typed as `input`.  Returns the log
    and the longest line's serial time in ns."""
    out = []
    if earlier_attempt:  # a power-on that brought nothing up, retried (bootloader-retry)
        out += [_record(-60 * NS_PER_S, "info", "end: 2.3.1.1 pdu-reboot (duration 00:00:01) [common]"),
                _record(-50 * NS_PER_S, "target", "garbage of a board that did not come up")]
    out += [_record(-NS_PER_S, "info", "start: 2.3.1.1 pdu-reboot (timeout 00:15:00) [common]"),
            _record(-NS_PER_S, "debug", "Calling: 'pduclient' '--daemon' 'pdu' '--port' '3' '--command' 'reboot'"),
            _record(-2000, "debug", "Returned 0 in 0 seconds"),
            _record(0, "info", "end: 2.3.1.1 pdu-reboot (duration 00:00:01) [common]")]
    serial = []
    previous = 0
    pending: list[tuple[int, bytes]] = []
    for _lineno, t, flag, payload in iter_records(capture, "", Boot()):
        if flag == "!":
            text = unescape(payload).decode()
            if text.startswith("sent "):
                out.append(_record(t, "input", text[len("sent '"):-1].replace("\\r", "\n")))
            elif text == "power-on":
                out += [_record(t + 1000, "target", "Trying 10.66.16.124..."),
                        _record(t + 2000, "target", "Connected to serial-box02."),
                        _record(t + 3000, "target", "Escape character is '^]'."),
                        _record(t + 4000, "target", "ser2net port 7016 device /dev/ttyUSB3 [115200 N81]")]
            continue
        continues = payload.endswith(CONTINUES) and not payload.endswith(b"\\" + CONTINUES)
        pending += segments(t, payload[:-len(CONTINUES)] if continues else payload)
        if continues:
            continue
        last_t, last = pending[-1]
        text = b"".join(raw for _, raw in pending).decode("utf-8", "replace")
        pending = []
        # its newline's arrival, and LAVA logs in order
        end = max(last_t + (len(last) + 1) * 10 * NS_PER_S // BAUD, previous)
        previous = end
        serial.append(len(text.encode()) * 10 * NS_PER_S // BAUD)
        text = text.replace("\r", "").replace('"', '\\"').replace("\x1b", "")
        out.append(_record(end, "target", text))
    out.append(_record(10**12, "info", "end: 2.3.4 auto-login-action (duration 00:00:12) [common]"))
    return "\n".join(out) + "\n", max(serial)


@pytest.fixture
def x86_uboot_boot(tmp_path):
    capture = gzip.decompress((REAL / "uboot-x86-fast-timer.capture.gz").read_bytes())
    path = tmp_path / "job.capture"
    path.write_bytes(capture)
    return capture, str(path)


def _starts(a) -> dict:
    return {s.phases[0]: s.start for s in a.phases.spans}


def test_a_real_boot_logged_by_lava_reads_as_its_capture(x86_uboot_boot, tmp_path):
    capture, capture_path = x86_uboot_boot
    text, longest = _as_lava(capture)
    job = tmp_path / "job-output.yaml"
    job.write_text(text)
    lava = analyze(read([str(job)]))
    own = analyze(read([capture_path]))
    assert lava.boot.sources[0].format == "lava"
    assert lava.boot.meta["host_zero"] == "power-on"
    assert lava.boot.meta["kernel_version"] == own.boot.meta["kernel_version"]
    assert lava.boot.meta["console_baud"] == BAUD
    assert [s.phases for s in lava.phases.spans] == [s.phases for s in own.phases.spans]
    # LAVA stamps a line after its last byte: no phase starts earlier than the capture says,
    # nor later by more than one line's serial time.
    for phase, start in _starts(lava).items():
        assert 0 <= start - _starts(own)[phase] <= longest + 1_000_000, phase
    assert 0 <= lava.phases.end.at - own.phases.end.at <= longest + 1_000_000
    # ser2net's and telnet's lines are not the board's; LAVA's own records are nobody's console
    assert lava.console.lines == own.console.lines
    assert any("the capture typed 3 times at the bootloader" in n for n in lava.phases.notes)
    assert not any("by hand" in n for n in lava.phases.notes)
    assert not [d for d in lava.boot.diagnostics if d.severity == "error"]


def test_a_retried_power_on_starts_the_boot_and_a_later_one_ends_it(x86_uboot_boot, tmp_path):
    capture, _ = x86_uboot_boot
    text, _ = _as_lava(capture, earlier_attempt=True)
    text += _record(10**12, "info", "start: 3.1 pdu-reboot (timeout 00:15:00) [common]") + "\n"
    text += _record(10**12 + 10**9, "target", "U-Boot 2023.01 of the job's second boot") + "\n"
    job = tmp_path / "job-output.yaml"
    job.write_text(text)
    a = analyze(read([str(job)]))
    power = a.boot.marks(Mark.POWER_ON)
    assert len(power) == 1 and power[0].line == 6  # the retry's, not the first attempt's
    warnings = [d.message for d in a.boot.diagnostics]
    assert any("1 console lines before LAVA's last power-on" in w for w in warnings)
    assert any("LAVA powers the board again here: the 1 console lines" in w for w in warnings)
    assert a.phases.end.mark == Mark.READY


def test_a_cut_record_is_skipped_with_its_line(x86_uboot_boot, tmp_path):
    capture, _ = x86_uboot_boot
    text, _ = _as_lava(capture)
    lines = text.splitlines()
    lines[40] = lines[40][:30]  # a download cut mid-record
    job = tmp_path / "job-output.yaml"
    job.write_text("\n".join(lines) + "\n")
    a = analyze(read([str(job)]))
    assert any(d.line == 41 and "not a record of a LAVA job log" in d.message for d in a.boot.diagnostics)
    assert a.phases.end.mark == Mark.READY


def test_yaml_escapes_of_the_console_are_read():
    """LAVA's writer escapes the YAML way what JSON cannot read (a bell, a non-ASCII byte)."""
    from bootlab.sources.lava import _record as decode
    rec = decode(_record(0, "target", "caf\u00e9 \x07 \\\"quoted\\\""))
    assert rec["msg"] == 'caf\u00e9 \x07 \\"quoted\\"'


# The rendered shape, as an LKFT job on a Supermicro X11SSH (IPMI power, iPXE) was quoted in a
# linux-next mail (job 6053089, cut down): the dispatcher's lines and the board's, to the second.
LKFT = """\
2023-01-13T04:29:33 start: 2.3.1.1 pdu-reboot (timeout 00:15:00) [common]
2023-01-13T04:29:33 Calling: 'nice' 'ipmitool' '-H' '10.66.16.51' 'chassis' 'power' 'off'
2023-01-13T04:29:33 >> Chassis Power Control: Down/Off
2023-01-13T04:29:33 Returned 0 in 0 seconds
2023-01-13T04:29:38 Calling: 'nice' 'ipmitool' '-H' '10.66.16.51' 'chassis' 'power' 'on'
2023-01-13T04:29:38 >> Chassis Power Control: Up/On
2023-01-13T04:29:38 Returned 0 in 0 seconds
2023-01-13T04:29:38 end: 2.3.1.1 pdu-reboot (duration 00:00:05) [common]
2023-01-13T04:29:38 {'case': 'pdu-reboot', 'definition': 'lava', 'duration': '5.37', 'level': '2.3.1.1'}
2023-01-13T04:29:38 start: 2.3.2 bootloader-interrupt (timeout 00:14:55) [common]
2023-01-13T04:29:38 Setting prompt string to ['Press Ctrl-B for the iPXE command line']
2023-01-13T04:29:38 Trying 10.66.16.132...
2023-01-13T04:29:38 Connected to serial-box02.lkftlab.
2023-01-13T04:29:38 Escape character is '^]'.
2023-01-13T04:29:38 lkft x86 01 7016 [115200 N81]
2023-01-13T04:30:28 iPXE initialising devices...ok
2023-01-13T04:30:28 [1miPXE 1.20.1+ (ge3ca)[0m -- Open Source Network Boot Firmware -- [36mhttp://ipxe.org[0m
2023-01-13T04:30:28 end: 2.3.2 bootloader-interrupt (duration 00:00:50) [common]
2023-01-13T04:30:28 bootloader-commands: Wait for prompt ['iPXE>'] (timeout 00:14:05)
2023-01-13T04:30:28 Sending with 1 millisecond of delay
2023-01-13T04:30:28 dhcp net0
2023-01-13T04:30:29 Press Ctrl-B for the iPXE command line...       iPXE> dhcp net0
2023-01-13T04:30:32 Configuring (net0 ac:1f:6b:1a:b3:4e)...... ok
2023-01-13T04:30:42 Sending with 1 millisecond of delay
2023-01-13T04:30:42 kernel tftp://10.66.16.124/6053089/kernel/bzImage console=ttyS0,115200n8
2023-01-13T04:30:47 iPXE> [?25hkernel tftp://10.66.16.124/6053089/kernel/bzImage console=ttyS0,115200n8
2023-01-13T04:30:51 tftp://10.66.16.124/6053089/kernel/bzImage... 24%     51%     78%     ok
2023-01-13T04:30:51 Sending with 1 millisecond of delay
2023-01-13T04:30:51 boot
2023-01-13T04:30:52 iPXE> [?25hboot
2023-01-13T04:30:52 end: 2.3.3 bootloader-commands (duration 00:00:23) [common]
2023-01-13T04:30:52 Parsing kernel messages
2023-01-13T04:30:52 [    0.000000] Linux version 6.2.0-rc3-next-20230113 (tuxmake@tuxmake) (x86_64-linux-gnu-gcc) #1 SMP
2023-01-13T04:30:52 [    0.000000] Command line: console=ttyS0,115200n8
2023-01-13T04:30:53 [    0.062285] Memory: 16329104K/16724984K available (22528K kernel code)
2023-01-13T04:30:54 [    1.913570] Run /sbin/init as init process
"""


def test_lavas_rendered_log_is_timed_to_the_second(tmp_path):
    job = tmp_path / "lkft-job.log"
    job.write_text(LKFT)
    a = analyze(read([str(job)]))
    assert a.boot.sources[0].format == "lava"
    starts = _starts(a)
    # power-on where IPMI's `power on` had returned; 50 s of the server's POST to iPXE
    assert starts["firmware"] == 0 and starts["bootloader"] == 50 * NS_PER_S
    assert a.boot.first_mark(Mark.BOOTLOADER_START).attrs["bootloader"] == "iPXE"
    kernel = starts["kernel init"]
    assert 73 * NS_PER_S < kernel <= 74 * NS_PER_S  # the banner was had by 04:30:53
    # the kernel's own steps by printk, to the microsecond, not on LAVA's whole seconds
    assert starts["rootfs/init"] - kernel == 1_913_570_000
    assert any("the capture typed 3 times at the bootloader" in n and "23.000 s" in n for n in a.phases.notes)
    assert any("stamped to the second" in d.message for d in a.boot.diagnostics)
    # the console is the board's lines only: not LAVA's, not telnet's, not what LAVA typed
    texts = [t for log in a.boot.logs for t in log.text]
    assert "dhcp net0" not in texts and not any(t.startswith(("Calling:", ">> ", "end: ", "Trying")) for t in texts)
    assert "iPXE 1.20.1+ (ge3ca) -- Open Source Network Boot Firmware -- http://ipxe.org" in texts
    assert a.boot.meta["console_baud"] == BAUD


def test_iso_stamped_lines_without_lavas_actions_are_not_lava(tmp_path):
    log = tmp_path / "other.log"
    log.write_text("2023-01-13T04:29:33 something\n2023-01-13T04:29:34 Linux version 6.1.0 (x) #1\n")
    assert read([str(log)]).sources[0].format != "lava"


def test_a_log_read_as_lava_that_is_none_is_refused(tmp_path):
    log = tmp_path / "dmesg.txt"
    log.write_text("[    0.000000] Linux version 6.1.0 (x) #1\n")
    proc = subprocess.run([sys.executable, "-m", "bootlab", "analyze", "--input-format", "lava", str(log)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "dmesg.txt:1: no line of a LAVA job log" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_lavacli_colours_change_nothing(tmp_path):
    """lavacli colours the time and each record by its level when it prints to a terminal."""
    plain, coloured = tmp_path / "plain.log", tmp_path / "coloured.log"
    plain.write_text(LKFT)
    coloured.write_text("".join(f"\x1b[0;90m{line[:19]}\x1b[0m \x1b[32m{line[20:]}\x1b[0m\n"
                                for line in LKFT.splitlines()))
    a, b = analyze(read([str(plain)])), analyze(read([str(coloured)]))
    assert _starts(a) == _starts(b) and a.phases.notes == [n.replace("coloured.log", "plain.log")
                                                           for n in b.phases.notes]


def test_escape_tails_are_dropped_and_brackets_of_text_kept():
    from bootlab.sources.lava import ESCAPE_TAIL
    assert ESCAPE_TAIL.sub("", "[1miPXE 1.20.1+[0m -- [36mhttp://ipxe.org[0m") == "iPXE 1.20.1+ -- http://ipxe.org"
    assert ESCAPE_TAIL.sub("", "iPXE> [?25hboot [2K") == "iPXE> boot "
    assert ESCAPE_TAIL.sub("", "[mmc] [A] [CPU0] [    0.000000] Linux") == "[mmc] [A] [CPU0] [    0.000000] Linux"
