"""`bootlab capture`: timestamp every console byte from power-on (a drop-in for grabserial),
through the same boot sequence as every target (targets/strategy.py).

    bootlab capture -d /dev/ttyUSB0 -b 115200 -o boot.capture --power-cycle "relay 1 cycle"
    bootlab capture -d /dev/ttyUSB0 -t -m "Starting kernel" --grabserial -o boot.log
    bootlab capture --exec "qemu-system-x86_64 ... -nographic" -o boot.capture
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import time
from datetime import datetime, timezone

from ..capture import priority, session
from ..capture.power import device_source
from ..capture.process import ProcessSource
from ..capture.pty_source import PtySource
from ..capture.source import byte_time_ns
from ..capture.tcp import TcpSource
from ..capture.writer import GrabserialWriter, NativeWriter
from ..targets import strategy
from ..targets.protocols import NoPower
from ..targets.shell_power import ShellPower
from ..targets.strategy import Parts
from . import UsageError



def register(sub) -> None:
    p = sub.add_parser("capture", help="timestamp every console byte (grabserial compatible)",
                       description="Capture a console from power-on: each line is stamped with the host's monotonic "
                                   "clock at the arrival of its first byte; every byte is kept.")
    src = p.add_argument_group("console")
    src.add_argument("-d", "--device", help="serial device (a /dev/pts/N path is read as a pty)")
    src.add_argument("--pty", metavar="PATH", help="read a pseudo-terminal")
    src.add_argument("--tcp", metavar="HOST:PORT", help="read a raw TCP console (ser2net)")
    src.add_argument("--exec", dest="exec_cmd", metavar="CMD", help="run CMD and capture its output; launching it is power-on")
    src.add_argument("--labgrid-env", metavar="FILE", help="a labgrid environment: its power and console drivers")
    src.add_argument("--labgrid-role", default="main", help="target role in the labgrid environment (default main)")
    ser = p.add_argument_group("serial port")
    ser.add_argument("-b", "--baudrate", type=int, default=115200)
    ser.add_argument("-w", "--width", type=int, default=8, choices=(5, 6, 7, 8), help="bits per character")
    ser.add_argument("-p", "--parity", default="none", choices=("none", "even", "odd", "mark", "space"))
    ser.add_argument("-s", "--stopbits", type=float, default=1, choices=(1, 1.5, 2))
    ser.add_argument("-x", "--xonxoff", action="store_true", help="software flow control")
    ser.add_argument("-r", "--rtscts", action="store_true", help="hardware flow control")
    ser.add_argument("--line-baud", type=int, metavar="N",
                     help="a pty's or TCP console's bytes come over a serial line at N baud (bridged from a real "
                          "port): stamp its lines by that speed, as a serial port's (-d) are by -b")
    out = p.add_argument_group("output (grabserial's options mean what they mean there)")
    out.add_argument("-o", "--output", metavar="FILE", help="write the capture to FILE (native format unless --grabserial)")
    out.add_argument("--grabserial", action="store_true", help="write FILE in grabserial's -t/-T format")
    out.add_argument("-t", "--time", action="store_true", help="show each line's time since the start")
    out.add_argument("-T", "--systime", action="store_true", help="show each line's wall-clock time")
    out.add_argument("-F", "--timeformat", default="%H:%M:%S.%f", help="strftime format for -T")
    out.add_argument("-m", "--match", metavar="REGEX", help="restart the shown times at the line matching REGEX")
    out.add_argument("-i", "--inlinepat", "--instantpat", dest="inline", metavar="REGEX",
                     help="report the time REGEX is first seen, even mid-line")
    out.add_argument("-q", "--quitpat", metavar="REGEX", help="stop when REGEX is seen")
    out.add_argument("-e", "--endtime", type=float, metavar="SECS", help="stop after SECS seconds")
    out.add_argument("--silence", type=float, metavar="SECS", help="stop after SECS seconds without output")
    out.add_argument("-Q", "--quiet", action="store_true", help="nothing on standard output")
    out.add_argument("--crtonewline", action="store_true", help="treat a carriage return as a newline")
    out.add_argument("-l", "--launchtime", action="store_true", help="(kept for grabserial users; times always count "
                                                                      "from launch or power-on)")
    pw = p.add_argument_group("power (t = 0 is when power is applied)")
    pw.add_argument("--power-cycle", metavar="CMD", help="command that cycles power; zero is when it returns")
    pw.add_argument("--power-off", metavar="CMD", help="command that switches power off (run first)")
    pw.add_argument("--power-on", metavar="CMD", help="command that switches power on; zero is when it returns")
    p.add_argument("--reconnect", action="store_true", help="wait for a vanished device to come back, marking the gap")
    p.add_argument("--rt-priority", type=int, metavar="N",
                   help=f"read at SCHED_FIFO priority N (needs CAP_SYS_NICE); 0: an ordinary process. Default: "
                        f"{priority.DEFAULT_PRIORITY} when the process may, else ordinary")
    p.set_defaults(func=run)


def _regex(text: str | None, what: str) -> re.Pattern | None:
    if text is None:
        return None
    try:
        return re.compile(text.encode())
    except re.error as err:
        raise UsageError(f"bad {what} pattern {text!r}: {err}") from None


def make_source(args: argparse.Namespace):
    source = _console(args)
    if args.line_baud is not None:
        if not isinstance(source, (PtySource, TcpSource)):
            raise UsageError("--line-baud is for a pty or a TCP console (a serial port's speed is -b)")
        if args.line_baud <= 0:
            raise UsageError(f"--line-baud {args.line_baud}: a line's speed is a positive number of bits per second")
        source.byte_ns = byte_time_ns(args.line_baud, args.width, args.parity, args.stopbits)
    return source


def _console(args: argparse.Namespace):
    chosen = [x for x in (args.device, args.pty, args.tcp, args.exec_cmd, args.labgrid_env) if x]
    if len(chosen) != 1:
        raise UsageError("give exactly one console: -d DEVICE, --pty PATH, --tcp HOST:PORT, --exec CMD or --labgrid-env FILE")
    if args.exec_cmd:
        return ProcessSource(shlex.split(args.exec_cmd))
    if args.pty:
        return PtySource(args.pty)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not (port.isascii() and port.isdigit()):
            raise UsageError(f"--tcp wants HOST:PORT, not {args.tcp!r}")
        return TcpSource(host, int(port))
    if args.labgrid_env:
        from ..capture.labgrid_console import LabgridSource
        return LabgridSource(args.labgrid_env, args.labgrid_role)
    if args.baudrate <= 0:  # a serial port has a speed; pyserial would take 0 and read nothing
        raise UsageError(f"-b/--baudrate {args.baudrate}: a serial port's speed is a positive number of bits per "
                         "second")
    return device_source(args.device, args.baudrate, parity=args.parity, bytesize=args.width,
                         stopbits=args.stopbits, xonxoff=args.xonxoff, rtscts=args.rtscts)


def make_power(args: argparse.Namespace, source):
    """What applies power (time zero): a power command, the launched process, labgrid's power
    driver, or nothing (zero is when the capture starts)."""
    if args.power_cycle and (args.power_on or args.power_off):
        raise UsageError("--power-cycle replaces --power-off/--power-on")
    if args.power_cycle or args.power_on:
        return ShellPower(args.power_cycle or args.power_on, args.power_off or "", bool(args.power_cycle))
    if args.power_off:
        raise UsageError("--power-off goes with --power-on")
    if args.exec_cmd or args.labgrid_env:
        return source
    return NoPower()


def reader_priority(requested: int | None) -> int | None:
    """The reader's SCHED_FIFO priority: as asked (refused: an error), or by default when
    permitted (see capture/priority.py)."""
    if requested is None:
        return priority.DEFAULT_PRIORITY
    if requested == 0:
        return None
    try:
        priority.raise_thread(requested)  # asked for: a refusal is the user's to know
    except priority.PriorityRefused as err:
        raise UsageError(f"--rt-priority {requested}: {err}") from None
    return requested


def run(args: argparse.Namespace) -> int:
    source = make_source(args)
    power = make_power(args, source)
    stop = session.Stop(quit=_regex(args.quitpat, "quit"), inline=_regex(args.inline, "inline"),
                        deadline=args.endtime, silence=args.silence)
    _regex(args.match, "match")
    meta = {"started": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
            "zero": "power-on" if getattr(power, "powered", True) else "capture start"}
    if args.device and not args.device.startswith("/dev/pts/"):
        meta["baud"] = args.baudrate
    if args.output:
        try:
            open(args.output, "wb").close()  # an output that cannot be written is known before power-on
        except OSError as err:
            raise UsageError(f"cannot write {args.output}: {err.strerror}") from None
    writers: list = []

    def writers_for(header: dict) -> list:
        if args.output:
            writers.append(GrabserialWriter(open(args.output, "wb"), args.systime, args.match, args.crtonewline,
                                            args.timeformat) if args.grabserial else NativeWriter(args.output, header))
        if not args.quiet:
            writers.append(GrabserialWriter(sys.stdout.buffer, args.systime, args.match, args.crtonewline,
                                            args.timeformat) if args.time or args.systime else _RawStdout())
        return writers

    parts = Parts(console=source, power=power, stop=stop, meta=meta, reader_priority=reader_priority(args.rt_priority))
    seq = strategy.run(parts, writers_for, reconnect=args.reconnect)
    result = seq.result
    for w in writers:
        if result is not None and result.inline_ns is not None:
            w.inline(result.inline_ns, args.inline)
        if result is not None:
            w.event(time.monotonic_ns() - seq.t0, f"end {result.reason} {result.detail}".strip())
        w.close()
    if seq.failed is not None:
        raise UsageError(seq.failed.detail if seq.failed.step == "console" else str(seq.failed))
    print(f"bootlab capture: {result.reason}{': ' + result.detail if result.detail else ''}; "
          f"{result.bytes} bytes, {result.lines} lines", file=sys.stderr)
    return 0


class _RawStdout:
    """Without -t/-T standard output shows the console as it is, like grabserial."""

    def chunk(self, t: int, data: bytes) -> None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()

    def event(self, t: int, text: str) -> None:
        pass

    def inline(self, t: int, pattern: str) -> None:
        sys.stdout.write(f'\nThe inlinepat: "{pattern}" was matched at {t / 1e9:4.6f}\n')

    def close(self) -> None:
        sys.stdout.flush()
