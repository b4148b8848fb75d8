"""Where each key of a configuration file stands: (table, index, key) paths to line numbers.

tomllib and json give line numbers for syntax errors only; a message about a bad value
must still point at its line.  These scanners read a file that has already been parsed
successfully, so they only need to follow its structure, not to validate it.  A path is a
tuple such as ("plugin",), ("server", 1) or ("task", 0, "wcet").
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path as FilePath
from typing import Callable

Path = tuple[str | int, ...]


@dataclass
class SourceMap:
    lines: dict[Path, int] = field(default_factory=dict)
    duplicates: list[tuple[Path, int]] = field(default_factory=list)

    def record(self, path: Path, line: int) -> None:
        if path in self.lines:
            self.duplicates.append((path, line))
        else:
            self.lines[path] = line

    def line_of(self, path: Path) -> int | None:
        """The line of `path`, else the first line inside it ([[server]] has no line of its
        own, its tables do), else the line of its nearest located parent."""
        if path in self.lines:
            return self.lines[path]
        inside = [line for known, line in self.lines.items() if known[:len(path)] == path]
        if inside and path:
            return min(inside)
        for end in range(len(path) - 1, 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None


_TOML_PART = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_TOML_DOTTED = rf"{_TOML_PART}(?:\s*\.\s*{_TOML_PART})*"
_TOML_ARRAY_HEADER = re.compile(rf"\s*\[\[\s*({_TOML_DOTTED})\s*\]\]")
_TOML_TABLE_HEADER = re.compile(rf"\s*\[\s*({_TOML_DOTTED})\s*\]")
_TOML_KEY = re.compile(rf"\s*({_TOML_DOTTED})\s*=")


def _dotted(name: str) -> Path:
    """'variant."no-quiet".target' -> ("variant", "no-quiet", "target")."""
    return tuple(part.strip("\"'") for part in re.findall(_TOML_PART, name))


def toml_source_map(text: str) -> SourceMap:
    """Lines of keys, tables and [[array]] tables; dotted names ([a.b], a.b = 1) are split
    into their parts, keys inside an inline table share the line of the table's key."""
    found = SourceMap()
    counts: dict[Path, int] = {}
    table: Path = ()
    for number, line in enumerate(text.splitlines(), start=1):
        if match := _TOML_ARRAY_HEADER.match(line):
            name = _dotted(match.group(1))
            index = counts.get(name, 0)
            counts[name] = index + 1
            table = name + (index,)
            found.record(table, number)
        elif match := _TOML_TABLE_HEADER.match(line):
            table = _dotted(match.group(1))
            found.record(table, number)
        elif match := _TOML_KEY.match(line):
            found.record(table + _dotted(match.group(1)), number)
    return found


class FileError(Exception):
    """A configuration file that cannot be read or parsed; the message starts with its path."""


def read_toml(path: str) -> tuple[dict, Callable[..., str]]:
    """A TOML file's data, and where(*key) -> "path:line: " for messages about its values."""
    try:
        text = FilePath(path).read_text()
    except OSError as err:
        raise FileError(f"{path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise FileError(f"{path}: not a text file") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise FileError(f"{path}: {err}") from None
    lines = toml_source_map(text)

    def where(*key) -> str:
        line = lines.line_of(tuple(key))
        return f"{path}:{line}: " if line else f"{path}: "

    return data, where


_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]:,\n]')


def json_source_map(text: str) -> SourceMap:
    """Lines of every object key and of every array element that is an object, array
    or string; repeated keys in one object are listed as duplicates."""
    found = SourceMap()
    # One frame per open container: [is_object, key or index, expecting a key].
    stack: list[list] = []
    line = 1

    def here(last: str | int) -> Path:
        return tuple(frame[1] for frame in stack[:-1]) + (last,)

    def value_starts() -> None:
        if stack and not stack[-1][0]:
            found.record(here(stack[-1][1]), line)

    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
        elif token in "{[":
            value_starts()
            stack.append([token == "{", None if token == "{" else 0, token == "{"])
        elif token in "}]":
            if stack:
                stack.pop()
        elif token == ":":
            if stack:
                stack[-1][2] = False
        elif token == ",":
            if stack and stack[-1][0]:
                stack[-1][2] = True
            elif stack:
                stack[-1][1] += 1
        elif stack and stack[-1][0] and stack[-1][2]:
            stack[-1][1] = json.loads(token)
            found.record(here(stack[-1][1]), line)
        else:
            value_starts()
    return found


def typed(value, expected: type):
    """A configuration value as `expected` (an integer is a float too; a boolean is not an
    integer), or TypeError naming what was found."""
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise TypeError(f"expected {expected.__name__}, got {value!r}")
    return value
