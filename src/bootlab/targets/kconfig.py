"""What the kernel's and U-Boot's builds share: both are Kconfig and Kbuild trees, configured
and built the same way (kernel_build.py, uboot_build.py).

A configuration is a starting .config (a defconfig, a packaged kernel's config) with
fragments (files of CONFIG_ lines, merged in order by the tree's own
scripts/kconfig/merge_config.sh) and inline options (merged last), completed by `make
olddefconfig`.  Every requested value olddefconfig did not keep (an unmet dependency, a
choice lost to another) is an error before anything is compiled, naming where it was asked
for (a fragment's file and line, or the inline option).  The resulting .config names the
build in the cache (config_digest); the build's output is streamed through a progress
callback, one step per Kbuild line.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

_OPTION = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")
# Kbuild's quiet output: one line per step ("  CC      init/main.o").
_STEP = re.compile(r"^  [A-Z][A-Z0-9_]{1,11} +\S")

Progress = Callable[[int, int | None, str], None]  # (steps done, steps expected or None, line)


class BuildError(Exception):
    """A configuration Kconfig refuses, or a build that fails: the message names the cause."""


@dataclass(frozen=True)
class Request:
    """One requested option: its name, the value asked for ("n" for `is not set`) and where."""

    name: str
    value: str
    origin: str  # "file:line", or the inline option's key


def requests(fragments: list[Path], options: dict[str, object], table: str) -> list[Request]:
    """Every option the fragments and then the inline options (a target's `table`) ask for,
    the last word winning."""
    found: dict[str, Request] = {}
    for path in fragments:
        for name, value, line in read_fragment(path):
            found[name] = Request(name, value, f"{path}:{line}")
    for key, value in options.items():
        name = key if key.startswith("CONFIG_") else f"CONFIG_{key}"
        found[name] = Request(name, normalized(value), f"{table} options.{key}")
    return list(found.values())


def read_fragment(path: Path) -> Iterator[tuple[str, str, int]]:
    """(CONFIG_NAME, value, line) for each option a fragment sets or unsets."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise BuildError(f"{path}: {err.strerror}") from None
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        m = _OPTION.match(line)
        if m:
            yield m.group(1), m.group(2), n
            continue
        m = _UNSET.match(line)
        if m:
            yield m.group(1), "n", n
        elif line and not line.startswith("#"):
            raise BuildError(f"{path}:{n}: not a Kconfig line (CONFIG_NAME=value or # CONFIG_NAME is not set)")


def normalized(value) -> str:
    """A TOML or command-line value as .config writes it (true -> y, a string quoted)."""
    if isinstance(value, bool):
        return "y" if value else "n"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    return text if text in ("y", "m", "n") or re.fullmatch(r"-?\d+|0x[0-9a-fA-F]+", text) or text.startswith('"') \
        else json.dumps(text)


def read_config(path: Path) -> dict[str, str]:
    """A .config as {CONFIG_NAME: value}; options that are not set are left out."""
    values = {}
    for line in path.read_text().splitlines():
        m = _OPTION.match(line)
        if m:
            values[m.group(1)] = m.group(2)
    return values


def not_kept(wanted: list[Request], config: dict[str, str]) -> list[str]:
    """The requests the resulting configuration does not honour, one message each."""
    lost = []
    for r in wanted:
        got = config.get(r.name, "n")
        if got != r.value:
            shown = "not set" if got == "n" else got
            lost.append(f"{r.origin}: {r.name}={r.value} requested, olddefconfig left it {shown} "
                        "(an unmet dependency, or another choice won)")
    return lost


class NotKept(BuildError):
    """A configuration that does not keep what was asked: the message, and the names of the
    options it did not keep (CONFIG_X)."""

    def __init__(self, wanted: list[Request], config: dict[str, str]) -> None:
        super().__init__("the configuration does not keep what was asked:\n  " + "\n  ".join(not_kept(wanted, config)))
        self.names = {r.name for r in wanted if config.get(r.name, "n") != r.value}


def run(args: list[str], cwd: Path | None = None, env: dict | None = None, with_stderr: bool = False) -> str:
    """The command's standard output (and its standard error after it, if asked); its
    standard input is empty, so a question gets its default answer."""
    try:
        done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False,
                              env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise BuildError(f"{args[0]} is not installed (run make setup)") from None
    if done.returncode != 0:
        raise BuildError(f"{' '.join(args)} failed:\n{(done.stdout + done.stderr).strip()[-1500:]}")
    return done.stdout + done.stderr if with_stderr else done.stdout


def complete(tree: Path, out: Path, fragments: list[Path], wanted: list[Request], inline_table: str,
             make: Callable[..., list[str]], env: dict[str, str]) -> None:
    """out/.config (the starting one, already there) with the fragments and the inline
    requests merged, completed by olddefconfig; raises BuildError naming every request it
    did not keep.  `make(*targets)` is the tree's make command line."""
    merged = [str(Path(p).resolve()) for p in fragments]
    inline = [r for r in wanted if r.origin.startswith(inline_table)]
    if inline:
        path = out / "bootlab-options.config"
        path.write_text("".join(f"{r.name}={r.value}\n" if r.value != "n" else f"# {r.name} is not set\n"
                                for r in inline))
        merged.append(str(path))
    if merged:
        run([str(tree / "scripts" / "kconfig" / "merge_config.sh"), "-m", "-O", str(out), str(out / ".config"),
             *merged], cwd=out)
    run(make("olddefconfig"), env=env)
    refused = NotKept(wanted, read_config(out / ".config"))
    if refused.names:
        raise refused


def config_digest(config: Path, version: str) -> str:
    return hashlib.sha256(version.encode() + b"\0" + config.read_bytes()).hexdigest()[:16]


def stream(argv: list[str], log: Path, env: dict[str, str], progress: Progress | None,
           expected: int | None) -> tuple[int, list[str]]:
    """Run a Kbuild make, its output into `log` and each step to `progress`; returns the
    number of steps and the output's last lines; raises BuildError (with those lines) if
    make fails."""
    tail: deque[str] = deque(maxlen=4000)
    steps = 0
    with open(log, "w") as out:
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    errors="replace", env={**os.environ, **env})
        except FileNotFoundError:
            raise BuildError("make is not installed (run make setup)") from None
        try:
            for line in proc.stdout:
                out.write(line)
                tail.append(line.rstrip("\n"))
                if _STEP.match(line):
                    steps += 1
                    if progress:
                        progress(steps, expected, line.strip())
        finally:
            if proc.poll() is None:  # interrupted: no make left behind
                proc.terminate()
            proc.wait()
    if proc.returncode != 0:
        raise Failed(list(tail))
    return steps, list(tail)


class Failed(BuildError):
    """make failed: its output's last lines, for the caller to explain."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines[-10:]))
        self.lines = lines


