"""Target kinds, registered in one place: which tables a description of each kind holds,
how it is read and checked, and how it becomes something the boot sequence can boot.

A description is of the kind whose marker table it has ([board], [labgrid]); without one
it is the reference device (every table of which has defaults).  A new kind is one module
(its description, its validation, its parts) and one line in KINDS.

What a kind makes bootable offers the sequence and the run store:
    ready         the ready line's regular expression
    baud          the console's speed (None: unknown, no console cost is estimated)
    describe()    the description stored with each run (and what a campaign compares)
    command()     what was run to boot it (for the record)
    parts(path)   the boot's parts (strategy.Parts), the capture going to `path`
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from ..sourcemap import FileError, read_toml
from . import arm64_board, board, labgrid_board, reference
from .description import TargetError
from .strategy import Parts


class Bootable(Protocol):
    ready: str
    baud: int | None

    def describe(self) -> dict: ...

    def command(self) -> list[str]: ...

    def parts(self, capture_path: str) -> Parts: ...


@dataclass(frozen=True)
class Kind:
    name: str
    keys: tuple[str, ...]  # the tables (and keys) a description of this kind holds
    marker: str | None  # the table that makes a description this kind; None: the default kind
    from_dict: Callable[..., Any]  # (description, where) -> the spec, validated; TargetError
    bootable: Callable[[Any], Bootable]  # builds what must be built; TargetError
    # Where a campaign variant's bare keys go (a board's variant says prepare = ..., meaning
    # board.prepare); keys naming one of the kind's tables stay where they are.
    variant_root: tuple[str, ...] = ()
    # The table whose `append` adds kernel arguments (to its `cmdline`, or to [bootloader]'s
    # env.bootargs: patch.CMDLINE_AT), for kinds whose command line bootlab sets; variants
    # and the optimizer add arguments with it.  A description without that table (a board
    # without [bootloader]) has its command line in files bootlab does not own.
    cmdline: str | None = None
    # The ready line's regular expression and the console's speed (None: unknown) of a spec,
    # as the sequence will boot it (Bootable.ready, Bootable.baud), without building it.
    ready: Callable[[Any], str] = lambda spec: spec.boot.ready
    baud: Callable[[Any], int | None] = lambda spec: spec.target.console_baud or None


def _itself(spec):
    """A board's description is what the sequence boots (nothing to build)."""
    return spec


BOARD = {"bootable": _itself, "cmdline": "bootloader", "ready": lambda spec: spec.ready, "baud": lambda spec: spec.baud}
KINDS = (
    Kind("board", board.KEYS, "board", board.from_dict, variant_root=("board",), **BOARD),
    Kind("labgrid", labgrid_board.KEYS, "labgrid", labgrid_board.from_dict, variant_root=("labgrid",), **BOARD),
    Kind("arm64", arm64_board.KEYS, "arm64", arm64_board.from_dict, arm64_board.build, ("arm64",), "arm64"),
    Kind("reference", reference.KEYS, None, reference.from_dict, reference.build, cmdline="target"),
)


def kind_of(data: dict) -> Kind:
    markers = [k for k in KINDS if k.marker is not None and k.marker in data]
    if len(markers) > 1:
        tables = " and ".join(f"[{k.marker}]" for k in markers)
        raise TargetError(f"a description is one kind of target: it has {tables}")
    return markers[0] if markers else next(k for k in KINDS if k.marker is None)


def from_dict(data: dict, where=lambda *path: "", base: Path | None = None):
    """The spec a description describes, of whichever kind; relative file names in it are
    relative to `base`."""
    spec = kind_of(data).from_dict(data, where)
    if base is not None and hasattr(spec, "base"):
        spec.base = base
    return spec


def load(path: str):
    try:
        data, where = read_toml(path)
    except FileError as err:
        raise TargetError(str(err)) from None
    return from_dict(data, where, Path(path).resolve().parent)


def stored(description: dict):
    """The spec a stored run was booted from (its description has what describe() added:
    kernel release, sizes, digest ...)."""
    kind = kind_of(description)
    return kind.from_dict({k: v for k, v in description.items() if k in kind.keys})


def variant_patch(kind: Kind, patch: dict) -> dict:
    """A campaign variant's keys as a patch over the description (see Kind.variant_root)."""
    if not kind.variant_root:
        return patch
    own = {k: v for k, v in patch.items() if k in kind.keys}
    rest = {k: v for k, v in patch.items() if k not in kind.keys}
    for part in reversed(kind.variant_root):
        rest = {part: rest}
    return {**rest, **own} if rest[kind.variant_root[0]] else own
