"""Renderers: one module per output format, each drawing an Analysis."""

from __future__ import annotations

import importlib

FORMATS = ("text", "json", "html", "svg", "perfetto")


def render(analysis, fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}")
    return importlib.import_module(f".{fmt}", __name__).render(analysis)
