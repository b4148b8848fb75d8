#!/usr/bin/env python3
"""Host side of the grabber's guest test.

tests/guest/grabber-guest-test.sh runs inside the reference device and
prints, between marker lines, what the grabber did in each case and a
framestat summary of every file it left. This script reads that console log
and says, case by case, whether the grabber behaved: frames complete, of the
asked size, showing vivid's colour bars (not blank), exactly one ready line,
clear errors and a non-zero status for bad input, no partial frame under a
final name.

    python3 apps/grabber/tests/guest_log_check.py console.log

exits 0 when every case passes. Standard library only.
"""

import argparse
import re
import sys
from dataclasses import dataclass, field

DEFAULT_READY_MARKER = "BOOTLAB READY"
CUSTOM_READY_MARKER = "CUSTOM READY MARK"  # what the ready-marker case asks for
MUX_KINDS = ("select", "poll", "epoll")

# vivid's default pattern, 75% colour bars, left to right: which of R, G, B
# each bar has switched on.
COLOUR_BARS = [
    ("white", (1, 1, 1)), ("yellow", (1, 1, 0)), ("cyan", (0, 1, 1)), ("green", (0, 1, 0)),
    ("magenta", (1, 0, 1)), ("red", (1, 0, 0)), ("blue", (0, 0, 1)), ("black", (0, 0, 0)),
]
CHANNEL_ON = 128  # 75% bars are about 191
CHANNEL_OFF = 64

READY_LINE = re.compile(
    r"^(?P<marker>.+) first-frame device=(?P<device>\S+) seq=\d+ "
    r"t_boot=\d+\.\d{6} t_mono=\d+\.\d{6}( t_frame=\d+\.\d{6})?$")
PRINTK_STAMP = re.compile(r"^\[\s*\d+\.\d{6}\] ")


@dataclass
class Case:
    name: str
    status: int | None = None
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    kmsg: list[str] = field(default_factory=list)
    frames: list[dict[str, str]] = field(default_factory=list)
    ended: bool = False


@dataclass
class GuestRun:
    settings: dict[str, str] | None = None
    cases: dict[str, Case] = field(default_factory=dict)
    finished: bool = False


def parse_frame(line: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in line.split()[1:] if "=" in item)


def parse_log(text: str) -> GuestRun:
    run = GuestRun()
    case = None
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if line.startswith("@@ grabber-test begin"):
            run.settings = dict(item.split("=", 1) for item in line.split()[3:])
        elif line.startswith("@@ grabber-test end"):
            run.finished = True
        elif line.startswith("@@ case "):
            words = line.split()
            name, what = words[2], words[3]
            if what == "begin":
                case = run.cases.setdefault(name, Case(name))
            elif what.startswith("rc=") and case is not None:
                case.status = int(what[3:])
            elif what == "end" and case is not None:
                case.ended = True
                case = None
        elif case is not None:
            for prefix, target in (("out: ", case.out), ("err: ", case.err),
                                   ("kmsg: ", case.kmsg)):
                if line.startswith(prefix):
                    target.append(line[len(prefix):])
            if line.startswith("FRAME "):
                case.frames.append(parse_frame(line))
    return run


def colour_bar_problems(bands: str) -> list[str]:
    colours = bands.split(",")
    if len(colours) != len(COLOUR_BARS):
        return [f"{len(colours)} bands, expected {len(COLOUR_BARS)}"]
    problems = []
    for hex_colour, (bar, expected) in zip(colours, COLOUR_BARS):
        channels = [int(hex_colour[i:i + 2], 16) for i in (0, 2, 4)]
        seen = tuple(1 if c >= CHANNEL_ON else 0 if c <= CHANNEL_OFF else None for c in channels)
        if seen != expected:
            problems.append(f"{bar} bar is #{hex_colour}")
    return problems


def frame_problems(frame: dict[str, str], size: str) -> list[str]:
    """An intact PPM of the asked size showing vivid's colour bars."""
    name = frame.get("name", "?")
    if "error" in frame:
        return [f"{name}: unreadable ({frame['error']})"]
    if frame.get("ppm") != size or frame.get("maxval") != "255":
        return [f"{name}: ppm={frame.get('ppm')} maxval={frame.get('maxval')}, expected {size}"]
    width, height = (int(n) for n in size.split("x"))
    expected_bytes = int(frame["header"]) + width * height * 3
    if frame.get("complete") != "1" or int(frame["bytes"]) != expected_bytes:
        return [f"{name}: {frame['bytes']} bytes, expected {expected_bytes}"]
    problems = []
    filled_buckets = sum(1 for n in frame["luma_hist"].split(",") if int(n) > 0)
    if int(frame["colours"]) < len(COLOUR_BARS) or filled_buckets < 3:
        problems.append(f"{name}: looks blank (colours={frame['colours']}, "
                        f"luma_hist={frame['luma_hist']})")
    problems += [f"{name}: {p}" for p in colour_bar_problems(frame["bands"])]
    return problems


def saved_frames_problems(case: Case, size: str, minimum: int) -> list[str]:
    """Every file left is a whole frame under its final name."""
    problems = [f"temporary file left: {f['name']}" for f in case.frames
                if f.get("name", "").startswith(".")]
    final = [f for f in case.frames if not f.get("name", "").startswith(".")]
    if len(final) < minimum:
        problems.append(f"{len(final)} frame(s) saved, expected at least {minimum}")
    for frame in final:
        problems += frame_problems(frame, size)
    return problems


def ready_line_problems(case: Case, marker: str, device: str | None = None) -> list[str]:
    lines = [m for m in map(READY_LINE.match, case.out) if m]
    if len(lines) != 1:
        return [f"{len(lines)} ready lines on stdout, expected exactly 1"]
    problems = []
    if lines[0]["marker"] != marker:
        problems.append(f"ready line starts with {lines[0]['marker']!r}, expected {marker!r}")
    if device is not None and lines[0]["device"] != device:
        problems.append(f"ready line names {lines[0]['device']}, expected {device}")
    return problems


def expect_capture(case, settings, marker, devices, mux):
    frames = int(settings["frames"])
    problems = [] if case.status == 0 else [f"exit status {case.status}, expected 0"]
    problems += ready_line_problems(case, marker)
    if not any(line.startswith(f"grabber: done mux={mux} ") for line in case.out):
        problems.append(f"no 'grabber: done mux={mux}' summary")
    expected = {f"{d.rsplit('/', 1)[-1]}-{i:06d}.ppm" for d in devices for i in range(frames)}
    names = {f.get("name") for f in case.frames}
    if names != expected:
        problems.append(f"frames {sorted(names)}, expected {sorted(expected)}")
    return problems + saved_frames_problems(case, settings["size"], len(expected))


def expect_raw(case, settings, marker, device):
    width, height = (int(n) for n in settings["size"].split("x"))
    problems = [] if case.status == 0 else [f"exit status {case.status}, expected 0"]
    problems += ready_line_problems(case, marker)
    stem = device.rsplit("/", 1)[-1]
    expected = {f"{stem}-{i:06d}-{width}x{height}-YUYV.raw" for i in range(2)}
    names = {f.get("name") for f in case.frames}
    if names != expected:
        problems.append(f"files {sorted(names)}, expected {sorted(expected)}")
    for frame in case.frames:
        if int(frame.get("bytes", -1)) != width * height * 2:  # YUYV, no padding in vivid
            problems.append(f"{frame.get('name')}: {frame.get('bytes')} bytes, "
                            f"expected {width * height * 2}")
    return problems


def expect_error(case, message, size=None, minimum_frames=0):
    problems = [] if case.status not in (0, None) else [
        f"exit status {case.status}, expected non-zero"]
    if not any(message in line for line in case.err):
        problems.append(f"stderr does not say {message!r}: {case.err}")
    if size is None:
        if case.frames:
            problems.append(f"files left: {[f.get('name') for f in case.frames]}")
    else:
        problems += saved_frames_problems(case, size, minimum_frames)
    return problems


def expect_stopped(case, settings, marker):
    problems = [] if case.status == 0 else [f"exit status {case.status}, expected 0"]
    problems += ready_line_problems(case, marker)
    if not any(line.startswith("grabber: done ") for line in case.out):
        problems.append("no 'grabber: done' summary after the stop signal")
    return problems + saved_frames_problems(case, settings["size"], 1)


def expect_removed(case, settings, mux):
    # select folds errors into "readable"; poll and epoll report them.
    seen = "readable" if mux == "select" else "an error and a hang-up"
    return expect_error(case, "device removed during capture", settings["size"], 1) + (
        [] if any(f"{mux} reported {seen}" in line for line in case.err)
        else [f"stderr does not say '{mux} reported {seen}': {case.err}"])


def expect_kmsg(case, marker):
    stamped = [line for line in case.kmsg
               if PRINTK_STAMP.match(line) and READY_LINE.match(PRINTK_STAMP.sub("", line))]
    if not any(marker in line for line in stamped):
        return [f"no printk-stamped '{marker} first-frame' line in the kernel log"]
    return []


def check_run(run: GuestRun, marker: str = DEFAULT_READY_MARKER) -> dict[str, list[str]]:
    """Problems per case; an empty list means the case passed."""
    if run.settings is None:
        return {"grabber-test": ["no '@@ grabber-test begin' line: the guest test never ran"]}
    settings = run.settings
    devices = settings["devices"].split(",")
    if len(devices) < 4:
        return {"grabber-test": [f"{len(devices)} capture devices, the test needs 4"]}
    first = devices[0]
    expectations = {
        **{f"mux-{mux}": lambda c, m=mux: expect_capture(c, settings, marker, [first], m)
           for mux in MUX_KINDS},
        "multi-device": lambda c: expect_capture(c, settings, marker, devices, "epoll"),
        "raw": lambda c: expect_raw(c, settings, marker, first),
        "ready-marker": lambda c: ready_line_problems(c, CUSTOM_READY_MARKER, first),
        "missing-device": lambda c: expect_error(c, "cannot open /dev/video99"),
        "unsupported-format": lambda c: expect_error(c, "cannot be converted to PPM"),
        "format-not-offered": lambda c: expect_error(c, "does not offer pixel format ABCD"),
        "disk-full": lambda c: expect_error(c, "No space left on device", settings["size"], 1),
        "sigterm": lambda c: expect_stopped(c, settings, marker),
        "sigint": lambda c: expect_stopped(c, settings, marker),
        "kmsg": lambda c: expect_kmsg(c, marker),
        **{f"disconnected-{mux}": lambda c, m=mux: expect_removed(c, settings, m)
           for mux in MUX_KINDS},
        "unbound": lambda c: expect_removed(c, settings, "epoll"),
    }
    results = {}
    for name, expect in expectations.items():
        case = run.cases.get(name)
        if case is None:
            results[name] = ["case missing from the log"]
        elif not case.ended:
            results[name] = ["case did not finish"]
        else:
            results[name] = expect(case)
    if not run.finished:
        results["grabber-test"] = ["no '@@ grabber-test end' line: the guest test did not finish"]
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", help="console log of a guest that ran grabber-guest-test.sh")
    parser.add_argument("--ready-marker", default=DEFAULT_READY_MARKER)
    args = parser.parse_args(argv)
    with open(args.log, encoding="utf-8", errors="replace") as log:
        results = check_run(parse_log(log.read()), args.ready_marker)
    for name, problems in results.items():
        print(f"{'ok  ' if not problems else 'FAIL'} {name}")
        for problem in problems:
            print(f"       {problem}")
    failed = sum(1 for problems in results.values() if problems)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
