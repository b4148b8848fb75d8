"""Shared helpers for the rt tests: the data folder and the `bootlab rt` verb run in-process."""

from __future__ import annotations

import argparse
import sys

import pytest

from bootlab.cli import UsageError
from bootlab.cli import rt as rt_verb


@pytest.fixture
def rt_cli(capsys):
    """Run `bootlab rt ARGS...` the way bootlab.cli.main does; returns (status, stdout, stderr).

    The verb is registered on its own parser so these tests do not depend on the other
    verbs importing cleanly."""

    def run(*argv: str) -> tuple[int, str, str]:
        parser = argparse.ArgumentParser(prog="bootlab")
        rt_verb.register(parser.add_subparsers(dest="verb"))
        args = parser.parse_args(["rt", *map(str, argv)])
        try:
            status = args.func(args)
        except UsageError as err:
            print(f"bootlab rt: {err}", file=sys.stderr)
            status = 2
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
