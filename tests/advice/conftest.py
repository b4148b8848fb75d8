"""Helpers for the advice tests: read logs, analyze them, run every rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bootlab.advice import Finding, advise
from bootlab.analysis import Options, analyze
from bootlab.sources import read

DATA = Path(__file__).parent / "data"
CORPUS = Path(__file__).parent.parent / "data" / "corpus"
FIXTURES = Path(__file__).parent.parent / "data" / "fixtures"
REFERENCE = DATA / "reference-boot.capture"
REFERENCE_DEBUG = DATA / "reference-initcall-debug.capture.gz"


def target_of(capture: Path) -> dict:
    """The recorded target description beside a reference-device capture."""
    return json.loads(capture.with_name(capture.name.split(".")[0] + ".target.json").read_text())


def findings(*paths: Path, target: dict | None = None) -> list[Finding]:
    boot = read([str(p) for p in paths])
    baud = (target or {}).get("target", {}).get("console_baud")
    return advise(boot, analyze(boot, Options(baud=baud)), target)


def only(found: list[Finding], rule: str) -> list[Finding]:
    return [f for f in found if f.rule == rule]


def one(found: list[Finding], rule: str) -> Finding:
    matching = only(found, rule)
    assert len(matching) == 1, f"{rule}: {[f.title for f in matching]}"
    return matching[0]


@pytest.fixture(scope="session")
def reference() -> list[Finding]:
    """Every finding on a real boot of the reference device (stock target), with its target."""
    return findings(REFERENCE, target=target_of(REFERENCE))


@pytest.fixture(scope="session")
def reference_debug() -> list[Finding]:
    """The same device booted with initcall_debug loglevel=8."""
    return findings(REFERENCE_DEBUG, target=target_of(REFERENCE_DEBUG))
