"""journalctl's export format: a real one (the systemd device's journal, `journalctl -o export
-b` in the guest, carried over the console in base64) read as the JSON output of the same
entries is, and the binary fields and damage the format allows, written from its definition."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from bootlab.analysis import analyze
from bootlab.cli import main
from bootlab.sources import read
from bootlab.sources.detect import detect
from bootlab.sources.journal_export import entries
from bootlab.timeline import Kind

REAL = Path(__file__).parent / "data" / "real" / "systemd-journal.export.gz"


def _real(tmp_path: Path) -> Path:
    path = tmp_path / "journal.export"
    path.write_bytes(gzip.decompress(REAL.read_bytes()))
    return path


def _binary(key: str, value: bytes) -> bytes:
    return key.encode() + b"\n" + len(value).to_bytes(8, "little") + value + b"\n"


def _entry(mono_us: int, message: bytes, boot_id: str = "b" * 32, binary: bool = False) -> bytes:
    fields = [f"__CURSOR=s=1;i={mono_us}".encode() + b"\n", f"__MONOTONIC_TIMESTAMP={mono_us}\n".encode(),
              f"_BOOT_ID={boot_id}\n".encode(), b"SYSLOG_IDENTIFIER=app\n", b"_PID=42\n"]
    fields.append(_binary("MESSAGE", message) if binary else b"MESSAGE=" + message + b"\n")
    return b"".join(fields) + b"\n"


def test_a_real_export_reads_as_the_json_of_the_same_entries(tmp_path):
    path = _real(tmp_path)
    assert detect(str(path), path.read_bytes()) == "journal-export"
    exported = read([str(path)])
    assert exported.sources[0].format == "journal-export" and exported.sources[0].lines == 511
    assert not exported.diagnostics
    as_json = tmp_path / "journal.json"
    as_json.write_text("".join(json.dumps(e) + "\n" for _, e in entries(path.read_bytes())))
    from_json = read([str(as_json)])

    def events(boot):
        return sorted((ev.kind, ev.name, ev.t, ev.dur) for ev in boot.events)

    assert events(exported) == events(from_json)
    assert exported.meta["kernel_version"] == "6.1.0-56-amd64"
    a = analyze(exported)
    units = {ev.name for ev in exported.of_kind(Kind.UNIT)}
    assert "bootlab-app.service" in units and a.phases.spans[0].name == "kernel init"


def test_binary_fields_are_read_by_their_length(tmp_path):
    # A ten-byte message: its length's first byte is a newline; the message has one too.
    data = _entry(1_000_000, b"first line") + _entry(2_000_000, b"two\nlines!", binary=True) + \
        _entry(3_000_000, b"BOOTLAB READY")
    read_back = list(entries(data))
    assert [fields["MESSAGE"] for _, fields in read_back] == ["first line", "two\nlines!", "BOOTLAB READY"]
    # The lines each entry starts on, counting every newline byte (the length 10 is one)
    assert [line for line, _ in read_back] == [1, 8, 18]
    path = tmp_path / "journal.export"
    path.write_bytes(data)
    a = analyze(read([str(path)]))
    assert a.phases.end.at == 3_000_000_000


def test_a_damaged_entry_is_a_warning_and_the_next_ones_are_read(tmp_path):
    damaged = b"__CURSOR=s=1;i=9\n__MONOTONIC_TIMESTAMP=1500000\nnot a field\nMESSAGE=lost\n\n"
    truncated = _binary("MESSAGE", b"cut short")[:-4]
    data = _entry(1_000_000, b"one") + damaged + _entry(2_000_000, b"BOOTLAB READY") + b"MESSAGE\n" + truncated[8:]
    path = tmp_path / "journal.export"
    path.write_bytes(data)
    boot = read([str(path)])
    warning = next(d for d in boot.diagnostics if "not journal entries" in d.message)
    assert warning.line == 8 and "2 of 4 entries" in warning.message
    assert analyze(boot).phases.end.at == 2_000_000_000


def test_the_last_boot_of_several_is_read_unless_another_is_asked(tmp_path, capsys):
    data = _entry(1_000_000, b"BOOTLAB READY", boot_id="a" * 32) + _entry(5_000_000, b"BOOTLAB READY", boot_id="c" * 32)
    path = tmp_path / "journal.export"
    path.write_bytes(data)
    assert analyze(read([str(path)])).phases.end.at == 5_000_000_000
    assert analyze(read([str(path)], which=1)).phases.end.at == 1_000_000_000
    assert main(["analyze", str(path)]) == 0
    assert "journal-export" in capsys.readouterr().out
