"""Durations: configuration files count in microseconds or milliseconds, traces in
nanoseconds.  Everything here is exact (decimal), never floating point."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

NS_PER = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}

_DURATION = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(ns|us|ms|s)?\s*")


def parse_duration(text: str, default_unit: str) -> int:
    """Nanoseconds in `text` ("2.5ms", "300us", or a bare number in `default_unit`).

    Raises ValueError for anything else, or for a value that is not a whole number of
    nanoseconds.
    """
    match = _DURATION.fullmatch(text)
    if not match:
        raise ValueError(f"not a duration: {text!r} (write e.g. 4ms, 250us, 1s)")
    ns = Decimal(match.group(1)) * NS_PER[match.group(2) or default_unit]
    if ns != ns.to_integral_value():
        raise ValueError(f"{text!r} is not a whole number of nanoseconds")
    return int(ns)


def scale_to_us(value: int | float, unit: str) -> int:
    """A configuration time value in `unit` ("us" or "ms") as integer microseconds.

    Raises ValueError when the value is not a whole number of microseconds."""
    try:
        us = Decimal(repr(value)) * (NS_PER[unit] // NS_PER["us"])
    except InvalidOperation as err:
        raise ValueError(f"not a number: {value!r}") from err
    if not us.is_finite() or us != us.to_integral_value():
        raise ValueError(f"{value!r} {unit} is not a whole number of microseconds")
    return int(us)


def format_duration(ns: int, unit: str) -> str:
    """`ns` written in `unit` without trailing zeros: 4000000 in ms is "4", 4500000 "4.5"."""
    value = (Decimal(ns) / NS_PER[unit]).normalize()
    return format(value, "f")


def duration_number(ns: int, unit: str) -> int | float:
    """`ns` in `unit` as a JSON number: an int when whole."""
    value = Decimal(ns) / NS_PER[unit]
    return int(value) if value == value.to_integral_value() else float(value)
