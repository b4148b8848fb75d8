"""Which format is this file?  Sniffs the content, never trusts the file name."""

from __future__ import annotations

import gzip
import os
import stat
import sys
import zlib

from . import bootchart
from .errors import NotALog
from .formats import NAMES, TABLE, Sample

# Every format a file can be read as; `--input-format` accepts these names.
FORMATS = NAMES


def maybe_gunzip(path: str, data: bytes) -> bytes:
    """A gzipped log (dmesg.gz, a rotated syslog) is read as its content."""
    if data.startswith(b"\x1f\x8b") and not bootchart.is_bootchart_tar(data):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise NotALog(path, 0, "gzip data that does not decompress (truncated or corrupt)") from None
    return data


def detect(path: str, data: bytes | None) -> str:
    """The format name for a file (data is None for a directory): the first format of the
    table whose score reaches its threshold."""
    sample = Sample(data, path)
    if data is None:
        if any(f.directory and f.sniff(sample) >= f.threshold for f in TABLE):
            return bootchart.FORMAT
        raise NotALog(path, 0, "a directory that is not a bootchart log (no header and proc_*.log)")
    if not data or data.isspace():  # (not strip(): a copy of a file of 600 MB)
        raise NotALog(path, 0, "empty file")
    for fmt in TABLE:
        if fmt.bytes_level and fmt.sniff(sample) >= fmt.threshold:
            return fmt.name
    if sample.binary:
        raise NotALog(path, 0, "binary data, not a text log")
    if not sample.lines:
        raise NotALog(path, 0, "no text lines")
    for fmt in TABLE:
        if not fmt.bytes_level and fmt.sniff(sample) >= fmt.threshold:
            if fmt.refusal:
                raise NotALog(path, 1, fmt.refusal)
            return fmt.name
    first = sample.lines[0][:60]
    raise NotALog(path, 1, f"not a boot log bootlab knows (first line: {first!r}); "
                           f"formats: {', '.join(FORMATS)}")


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
