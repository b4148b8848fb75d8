"""Which format is this file?  Sniffs the content, never trusts the file name."""

from __future__ import annotations

import gzip
import os
import stat
import sys
import zlib

from . import bootchart, bootlab_capture, ftrace, grabserial, journal_json, printk, systemd_analyze, uboot
from .lines import clean, decode, looks_binary

# Every format a file can be read as; `--input-format` accepts these names.
FORMATS = (
    bootlab_capture.FORMAT,
    grabserial.FORMAT,
    "console",
    *printk.FORMATS,
    journal_json.FORMAT,
    ftrace.FORMAT,
    uboot.FORMAT,
    *systemd_analyze.FORMATS,
    bootchart.FORMAT,
)


class NotALog(Exception):
    """The input cannot be read as any boot log."""

    def __init__(self, file: str, line: int, message: str):
        super().__init__(f"{file}:{line}: {message}" if line else f"{file}: {message}")
        self.file = file
        self.line = line


def maybe_gunzip(path: str, data: bytes) -> bytes:
    """A gzipped log (dmesg.gz, a rotated syslog) is read as its content."""
    if data.startswith(b"\x1f\x8b") and not bootchart.is_bootchart_tar(data):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise NotALog(path, 0, "gzip data that does not decompress (truncated or corrupt)") from None
    return data


def sample_lines(data: bytes, limit: int = 400) -> list[str]:
    lines = [clean(line) for line in decode(data[:262144]).split("\n")]
    return [line for line in lines if line.strip()][:limit]


def detect(path: str, data: bytes | None) -> str:
    """The format name for a file (data is None for a directory)."""
    if data is None:
        if bootchart.is_bootchart_dir(path):
            return bootchart.FORMAT
        raise NotALog(path, 0, "a directory that is not a bootchart log (no header and proc_*.log)")
    if not data.strip():
        raise NotALog(path, 0, "empty file")
    if bootlab_capture.sniff(data):
        return bootlab_capture.FORMAT
    if bootchart.is_bootchart_tar(data):
        return bootchart.FORMAT
    if looks_binary(data):
        raise NotALog(path, 0, "binary data, not a text log")
    lines = sample_lines(data)
    if not lines:
        raise NotALog(path, 0, "no text lines")
    if grabserial.sniff(lines) >= 0.5:
        return grabserial.FORMAT
    if journal_json.sniff(lines):
        return journal_json.FORMAT
    sd = systemd_analyze.sniff(lines)
    if sd["systemd-plot-json"] > 0.9:
        return "systemd-plot-json"
    if sd["systemd-time"] > 0.9:
        return "systemd-time"
    if sd["systemd-critical-chain"] > 0.9:
        return "systemd-critical-chain"
    if ftrace.sniff(lines) >= 0.5:
        return ftrace.FORMAT
    pk = printk.sniff(lines)
    if pk["journal"] > 0.5:
        return "journal"
    if pk["kmsg"] > 0.5:
        return "kmsg"
    if pk["dmesg-iso"] > 0.7:
        return "dmesg-iso"
    if pk["coarse"] > 0.5:
        raise NotALog(path, 1, "dmesg -T, -e or --time-format=reltime/delta stamps: a wall clock to the second "
                               "(or only the time since the message before); save the log with plain `dmesg` "
                               "or `dmesg --time-format=iso`")
    if pk["syslog"] > 0.3 and pk["syslog"] >= pk["dmesg"]:
        return "syslog"
    if sd["systemd-blame"] > 0.6:
        return "systemd-blame"
    if uboot.sniff("\n".join(lines)) and pk["dmesg"] < 0.2:
        return uboot.FORMAT
    if pk["dmesg"] > 0.7 and printk.DMESG.match(lines[0]):
        return "dmesg"
    if pk["dmesg"] > 0 or _has_boot_words(lines):
        return "console"
    first = lines[0][:60]
    raise NotALog(path, 1, f"not a boot log bootlab knows (first line: {first!r}); "
                           f"formats: {', '.join(FORMATS)}")


def _has_boot_words(lines: list[str]) -> bool:
    words = ("U-Boot", "Starting kernel", "SeaBIOS", "Linux version", "Booting Linux", "NOTICE:  BL",
             "[  OK  ]", "Welcome to", "login:", "bootlab-mark:", "BOOTLAB READY")
    return any(w in line for line in lines for w in words)


STDIN = "-"  # `dmesg | bootlab analyze -`, `ssh board journalctl -k | bootlab analyze -`


def display_name(path: str) -> str:
    """How reports name a file: relative to the working directory when it lies under it (an
    absolute path there only lengthens every line of evidence), else as given."""
    if os.path.isabs(path):
        try:
            relative = os.path.relpath(path)
        except (OSError, ValueError):  # no working directory any more
            return path
        if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
            return relative
    return path


def read_input(path: str) -> tuple[bytes | None, str]:
    """(data, display name); data is None for a directory (then the name is the path)."""
    if path == STDIN:
        return sys.stdin.buffer.read(), "<stdin>"
    if os.path.isdir(path):
        return None, path
    try:
        if stat.S_ISCHR(os.stat(path).st_mode):
            return _read_device(path), path
        with open(path, "rb") as fh:
            return fh.read(), display_name(path)
    except OSError as err:
        raise NotALog(display_name(path), 0, err.strerror or str(err)) from None


def _read_device(path: str) -> bytes:
    """The kernel's log as /dev/kmsg holds it now (bootlab run on the device itself).  The
    device gives one record per read and never ends, so it is read without waiting; a
    record overwritten while reading (EPIPE) is skipped, as dmesg does."""
    if os.path.basename(os.path.realpath(path)) != "kmsg":
        raise NotALog(path, 0, "a character device that is not /dev/kmsg (a serial port? "
                               "record it with `bootlab capture --serial`)")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    records = []
    try:
        while True:
            try:
                record = os.read(fd, 1 << 16)
            except BrokenPipeError:
                continue
            except BlockingIOError:
                break
            if not record:
                break
            records.append(record)
    finally:
        os.close(fd)
    return b"".join(records)
