"""The `bootlab` command: one module per verb, each thin (parse, call the library, print).

A verb module exposes `register(subparsers)`, which adds its parser and sets
`func=run`; `run(args)` returns the exit status.  Exit status 2 means unreadable input
or bad usage, 1 a failed check, 0 success.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading

from .. import __version__

VERBS = (
    "analyze",
    "diff",
    "capture",
    "target",
    "boot",
    "runs",
    "show",
    "export",
    "demo",
    "rt",
    "lab",
    "compare",
    "optimize",
    "advise",
    "kernel",
    "uboot",
)

# Verbs that only read the run store: they never make one (a missing store is an error).
READS_STORE = ("runs", "show", "export", "compare", "advise", "diff")


class UsageError(Exception):
    """Bad input the user can fix: printed without a traceback, exit status 2."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, just that verb's (a verb's libraries load only when it runs:
    `bootlab analyze` need not import the statistics and plotting stacks)."""
    parser = argparse.ArgumentParser(
        prog="bootlab",
        description="Measure, explain, improve and predict embedded Linux boot time.",
    )
    parser.add_argument("--version", action="version", version=f"bootlab {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    for name in VERBS if only is None else (only,):
        importlib.import_module(f".{name}", __name__).register(sub)
    return parser


def _terminated(_signum, _frame) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    verb = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(verb if verb in VERBS else None)
    args = parser.parse_args(argv)
    # `kill`, `timeout` and CI job limits send SIGTERM: end as on Ctrl-C, so that a capture
    # is complete, QEMU is powered off and an unfinished boot is stored as interrupted.
    # (A background job started by a script has SIGINT ignored; SIGTERM still reaches it.)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        return int(args.func(args) or 0)
    except UsageError as err:
        print(f"bootlab {args.verb}: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"bootlab {args.verb}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
