"""What every target description shares: its error, and reading one of its tables into a
dataclass (unknown keys and wrong types named with file and line)."""

from __future__ import annotations

from dataclasses import fields

from ..sourcemap import typed


class TargetError(Exception):
    """A target that cannot be described, built or booted as written."""


def section(cls, data: dict, name: str, where) -> object:
    if not isinstance(data, dict):
        raise TargetError(f"{where(name)}[{name}] must be a table")
    defaults = cls()
    known = [f.name for f in fields(cls) if f.metadata.get("key", True)]  # not: what other tables fill
    for key, value in data.items():
        if key not in known:
            raise TargetError(f"{where(name, key)}{name}.{key}: unknown key (known: {', '.join(known)})")
        try:
            data = {**data, key: typed(value, type(getattr(defaults, key)))}
        except TypeError as err:
            raise TargetError(f"{where(name, key)}{name}.{key}: {err}") from None
    return cls(**data)
