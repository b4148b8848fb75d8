"""Campaigns: a baseline and variants of one target, each booted N times, interleaved.

    name = "seed-compression"       # default: the file's name without .toml
    description = "Table I: initramfs compression"
    runs = 8                        # boots per variant (at least 2; 5+ for a test to be possible)
    metric = "total"                # what decides significance: total, phase:NAME, at:MARK, step:NAME
    confidence = 0.95
    give_up_after = 2               # a variant whose first N boots all failed is not booted again
    target_file = "stock.toml"      # the reference device from this target file (relative to the
                                    # campaign file); default: the stock reference device

    [baseline]                      # a patch over the target (tables of a target file)
    description = "gzip"

    [variant.lz4]                   # one table per variant: a patch over the baseline
    description = "LZ4"
    initramfs.compression = "lz4"

    [board]                         # instead of the reference device: a board (targets/board.py),
    device = "/dev/ttyUSB0"         # or [labgrid] (targets/labgrid_board.py); its variants patch
    ...                             # the board's keys (usually `prepare`) and [bootloader]'s

Runs are interleaved, baseline first (B V1 V2 B V1 V2 ...), so that drift of the host
(load, thermal state, other users) spreads over all variants instead of biasing one.
Slot k of the schedule is run `sequence = k`.  What is left to do is derived from the run
store each time, so a campaign interrupted in any way resumes where it stopped: a run is
stored in one transaction when its boot ends, a boot killed half-way leaves no row (its
partial capture file is never read), and a boot stopped with Ctrl-C is stored as
`interrupted`, which does not count and is run again.
"""

from __future__ import annotations

import fcntl
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from ..sourcemap import FileError, read_toml, typed
from ..targets import kinds
from ..targets.description import TargetError
from ..targets.reference import Target
from .boots import boot_and_store
from .compare import RunSet, SetComparison, compare_sets, counts, holm
from .patch import apply, changes
from .store import Run, Store

BASELINE = "baseline"
NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")  # no ':' (campaign:variant) and no '/' inside a name
METRIC = re.compile(r"^(total|(phase|at|step|console):.+)$")
SETTINGS = {"name": str, "description": str, "runs": int, "metric": str, "confidence": float,
            "give_up_after": int, "target_file": str}
# A board's description is given in the campaign file itself ([board], [labgrid], [bootloader]).
BOARD_TABLES = tuple(dict.fromkeys(k for kind in kinds.KINDS if kind.marker is not None for k in kind.keys))
TABLES = ("baseline", "variant") + BOARD_TABLES


class CampaignError(Exception):
    """A campaign that cannot run as written; the message names file, line and key."""


@dataclass
class Variant:
    name: str
    description: str
    spec: object  # what is booted: a description of one of the target kinds (targets/kinds.py)
    patch: dict  # what it changes, over the baseline

    def definition(self) -> dict:
        return {k: v for k, v in self.spec.to_dict().items() if k != "name"}


@dataclass
class Campaign:
    name: str
    variants: list[Variant]  # the baseline first
    runs: int = 8
    metric: str = "total"
    confidence: float = 0.95
    give_up_after: int = 2
    description: str = ""
    source: str = ""  # the campaign file, if any

    @property
    def baseline(self) -> Variant:
        return self.variants[0]

    def variant(self, name: str) -> Variant:
        return next(v for v in self.variants if v.name == name)

    def schedule(self) -> list[tuple[int, str]]:
        """(sequence, variant) for every boot, interleaved: round by round, baseline first."""
        n = len(self.variants)
        return [(r * n + i, v.name) for r in range(self.runs) for i, v in enumerate(self.variants)]


# -- the campaign file ----------------------------------------------------------------------


def load(path: str) -> Campaign:
    try:
        data, where = read_toml(path)
    except FileError as err:
        raise CampaignError(str(err)) from None
    if not data:  # nothing to compare: it would boot the stock target eight times
        raise CampaignError(f"{path}: the campaign file is empty: give the changes to compare as [variant.NAME] "
                            "tables (and [baseline], runs = N)")
    return from_dict(data, where, Path(path).parent, Path(path).stem, path)


def _check_settings(data: dict, where) -> dict:
    out = {}
    for key, value in data.items():
        if key in TABLES:
            continue
        if key not in SETTINGS:
            known = ", ".join(list(SETTINGS) + [f"[{t}]" for t in TABLES])
            raise CampaignError(f"{where(key)}{key}: unknown key (known: {known})")
        try:
            out[key] = typed(value, SETTINGS[key])
        except TypeError as err:
            raise CampaignError(f"{where(key)}{key}: {err}") from None
    checks = [
        ("name", lambda v: bool(NAME.match(v)), "letters, digits and _ . + - only (':' separates campaign:variant)"),
        ("runs", lambda v: v >= 2, "at least 2 runs per variant (5 or more for a significance test to be possible)"),
        ("confidence", lambda v: 0.5 <= v < 1, "confidence must be at least 0.5 and below 1 (e.g. 0.95)"),
        ("give_up_after", lambda v: v >= 1, "give_up_after must be at least 1"),
        ("metric", lambda v: bool(METRIC.match(v)), "total, or phase:NAME, at:MARK, step:NAME, console:bytes"),
    ]
    for key, ok, message in checks:
        if key in out and not ok(out[key]):
            raise CampaignError(f"{where(key)}{key}: {message}")
    return out


def _table(data: dict, key: tuple, where) -> dict:
    value = data
    for part in key:
        value = value.get(part, {})
    if not isinstance(value, dict):
        raise CampaignError(f"{where(*key)}{'.'.join(key)}: must be a table")
    return value


def _has(description: dict, path: tuple) -> bool:
    for part in path:
        if not isinstance(description, dict) or part not in description:
            return False
        description = description[part]
    return True


def _layered(where, layers: list[tuple[dict, Callable[[tuple], tuple]]], home: tuple):
    """A `where` for a merged description: the line of the topmost layer that sets a key
    (a variant over the baseline over the target), else the variant's own table."""

    def at(*path) -> str:
        for patch, to_file in layers:
            if _has(patch, path):
                return where(*to_file(path))
        return where(*home)

    return at


def _split_description(table: dict, where, key: tuple) -> tuple[str, dict]:
    patch = dict(table)
    description = patch.pop("description", "")
    if not isinstance(description, str):
        raise CampaignError(f"{where(*key, 'description')}{'.'.join(key)}.description: expected str")
    return description, patch


def from_dict(data: dict, where, base_dir: Path, default_name: str, source: str = "") -> Campaign:
    settings = _check_settings(data, where)
    name = settings.get("name", default_name)
    if not NAME.match(name):
        raise CampaignError(f"{where('name')}name: {name!r} cannot name a campaign: give name = \"...\" "
                            "(letters, digits and _ . + -)")
    variants_table = _table(data, ("variant",), where)
    baseline_description_text, baseline_patch = _split_description(_table(data, ("baseline",), where), where,
                                                                    ("baseline",))
    files_base = base_dir.resolve()
    if "target_file" in settings:  # the target to vary, of any kind
        given = [t for t in BOARD_TABLES if t in data]
        if given:
            raise CampaignError(f"{where('target_file')}target_file: a campaign boots either the target of "
                                f"target_file or the [{given[0]}] it describes, not both")
        file = base_dir / settings["target_file"]
        try:
            base = kinds.load(str(file)).to_dict()
        except TargetError as err:
            raise CampaignError(f"{where('target_file')}target_file: {err}") from None
        files_base = file.resolve().parent
        base_layer = ({}, lambda path: path)  # the target file validated itself
    else:  # a board described in the campaign file, or the stock reference device
        base = {k: _table(data, (k,), where) for k in BOARD_TABLES if k in data} or Target().to_dict()
        base_layer = (base, lambda path: path)
    try:
        kind = kinds.kind_of(base)
    except TargetError as err:
        raise CampaignError(f"{where()}{err}") from None

    def to_file(key: tuple):
        """A path in the merged description -> the path of the key in the campaign file's
        table `key` (a board variant's bare keys are the board's keys)."""
        root = kind.variant_root
        return lambda path: key + (path[len(root):] if root and path[:len(root)] == root else path)

    baseline_patch = kinds.variant_patch(kind, baseline_patch)
    baseline_layer = (baseline_patch, to_file(("baseline",)))

    def spec_of(description: dict, layers, home: tuple):
        try:
            return kinds.from_dict(description, _layered(where, layers, home), files_base)
        except TargetError as err:
            raise CampaignError(str(err)) from None

    baseline_description = apply(base, baseline_patch)
    variants = [Variant(BASELINE, baseline_description_text, spec_of(baseline_description, [baseline_layer, base_layer],
                                                                     (kind.marker or "baseline",)), {})]
    for vname, table in variants_table.items():
        key = ("variant", vname)
        if not isinstance(table, dict):
            raise CampaignError(f"{where(*key)}variant.{vname}: must be a table ([variant.{vname}])")
        if vname == BASELINE or not NAME.match(vname):
            raise CampaignError(f"{where(*key)}variant.{vname}: a variant is named with letters, digits and "
                                f"_ . + - and is not called {BASELINE!r}")
        description, patch = _split_description(table, where, key)
        patch = kinds.variant_patch(kind, patch)
        spec = spec_of(apply(baseline_description, patch), [(patch, to_file(key)), baseline_layer, base_layer], key)
        variants.append(Variant(vname, description, spec, patch))
    return Campaign(name=name, variants=variants, runs=settings.get("runs", 8), metric=settings.get("metric", "total"),
                    confidence=settings.get("confidence", 0.95), give_up_after=settings.get("give_up_after", 2),
                    description=settings.get("description", ""), source=source)


# -- what the store says ----------------------------------------------------------------------


@dataclass
class State:
    """A campaign's progress as the run store records it."""

    campaign: Campaign
    done: dict[int, Run] = field(default_factory=dict)  # sequence -> the run that counts
    ignored: int = 0  # stored runs outside the schedule (a campaign run with more runs before)

    def runs_of(self, variant: str) -> list[Run]:
        return [r for _, r in sorted(self.done.items()) if r.variant == variant]

    def gave_up(self, variant: str) -> bool:
        runs = self.runs_of(variant)
        return (not any(r.status == "ok" for r in runs)
                and sum(r.status != "ok" for r in runs) >= self.campaign.give_up_after)

    def remaining(self) -> list[tuple[int, str]]:
        return [(seq, v) for seq, v in self.campaign.schedule() if seq not in self.done and not self.gave_up(v)]

    def add(self, run: Run) -> None:
        if counts(run):
            self.done[run.sequence] = run

    @property
    def complete(self) -> bool:
        return not self.remaining()


def state(c: Campaign, store: Store) -> State:
    """Read the campaign's runs back; refuse when they were made from another definition."""
    names = [v.name for v in c.variants]
    if len(set(names)) != len(names) or names[0] != BASELINE:
        raise CampaignError(f"campaign {c.name!r}: variant names must be unique, the baseline first ({names})")
    st = State(c)
    slots = dict(c.schedule())
    for run in store.runs(campaign=c.name):
        if not counts(run):
            continue
        expected = slots.get(run.sequence)
        if expected is None:
            st.ignored += 1
            continue
        variant = next((v for v in c.variants if v.name == expected), None)
        if run.variant != expected or not _same_definition(run.target, variant.definition()):
            what = "other variants" if run.variant != expected else f"another definition of {expected!r}"
            raise CampaignError(
                f"campaign {c.name!r} in {store.path} was run with {what} (run {run.id}, sequence {run.sequence}); "
                "its runs would not be comparable: give the campaign another name (name = ...) or use another --db")
        st.done.setdefault(run.sequence, run)
    return st


def _same_definition(stored: dict, definition: dict) -> bool:
    return all(stored.get(k) == v for k, v in definition.items())


# -- booting ----------------------------------------------------------------------------------


class Booter(Protocol):
    def boot(self, store: Store, *, campaign: str, variant: str, sequence: int) -> int:
        """Boot once, store the run, return its id."""


class VariantBooter:
    """A variant's target, made bootable (built) on first use; one that cannot be built is
    stored as a failed run (no boot), like one that does not boot."""

    def __init__(self, spec, echo=None):
        self.spec = spec
        self.echo = echo
        self.machine = None
        self.error: str | None = None

    def boot(self, store: Store, *, campaign: str, variant: str, sequence: int) -> int:
        if self.machine is None and self.error is None:
            try:
                self.machine = kinds.kind_of(self.spec.to_dict()).bootable(self.spec)
            except TargetError as err:
                self.error = str(err)
        if self.error is not None:
            return store.add(status="failed", reason=f"build failed: {self.error}", target=self.spec.to_dict(),
                             command=[], capture=None, analysis=None, metrics={}, wall_ns=None, ready_line_ns=None,
                             campaign=campaign, variant=variant, sequence=sequence)
        try:
            return boot_and_store(self.machine, store, campaign=campaign, variant=variant, sequence=sequence,
                                  echo=self.echo).run_id
        except TargetError as err:  # QEMU cannot start, KVM refused: no boot of any variant can run
            raise CampaignError(f"campaign {campaign!r}: {err}") from None


def booter_for(c: Campaign, v: Variant, echo=None) -> Booter:
    return VariantBooter(v.spec, echo)


class Progress(Protocol):
    def start(self, c: Campaign, st: State) -> None: ...

    def step(self, sequence: int, variant: str, run: Run) -> None: ...

    def gave_up(self, variant: str, runs: list[Run]) -> None: ...


class CampaignBusy(CampaignError):
    pass


class _Lock:
    """One runner per campaign and store: two would book the same slots."""

    def __init__(self, store: Store, name: str):
        self.store, self.name = store, name
        self.path = f"{os.path.abspath(store.path)}.{name}.lock"
        self.fd: int | None = None

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise CampaignBusy(f"campaign {self.name!r} is already running on {self.store.path} "
                               f"(lock {self.path})") from None
        return self

    def __exit__(self, *_) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def run(c: Campaign, store: Store, progress: Progress | None = None,
        booter: Callable[[Campaign, Variant], Booter] = booter_for) -> State:
    """Boot what the store says is left, in schedule order; returns the final state.

    Ctrl-C during a boot stores that boot as interrupted (not counted) and stops here
    with KeyboardInterrupt; running again resumes."""
    with _Lock(store, c.name):
        st = state(c, store)
        if progress is not None:
            progress.start(c, st)
        booters: dict[str, Booter] = {}
        given_up: set[str] = set()
        for sequence, name in st.remaining():
            if st.gave_up(name):
                if name not in given_up and progress is not None:
                    progress.gave_up(name, st.runs_of(name))
                given_up.add(name)
                continue
            if name not in booters:
                booters[name] = booter(c, c.variant(name))
            run_id = booters[name].boot(store, campaign=c.name, variant=name, sequence=sequence)
            stored = store.get(run_id)
            st.add(stored)
            if progress is not None:
                progress.step(sequence, name, stored)
            if not counts(stored):
                raise KeyboardInterrupt
    return st


# -- results ----------------------------------------------------------------------------------


@dataclass
class VariantResult:
    variant: Variant
    runs: RunSet
    comparison: SetComparison | None  # against the baseline; None for the baseline itself
    gave_up: bool

    @property
    def sizes(self) -> dict[str, int]:
        """Image sizes of the booted target (reference device), from the stored runs."""
        for r in self.runs.runs:
            found = {k: r.target[k] for k in ("image_size", "initrd_compressed", "initrd_size") if k in r.target}
            if found:
                return found
        return {}


@dataclass
class CampaignResult:
    campaign: Campaign
    state: State
    variants: list[VariantResult]
    warnings: list[str]

    def result(self, name: str) -> VariantResult:
        return next(v for v in self.variants if v.variant.name == name)


def results(c: Campaign, st: State) -> CampaignResult:
    """Every variant against the baseline.  The primary metric's p-values are adjusted
    over the variants (Holm), so that trying many variants does not by itself produce a
    'significant' one; the per-phase tests are not adjusted (they explain, they don't decide)."""
    base = RunSet(BASELINE, st.runs_of(BASELINE))
    out = [VariantResult(c.baseline, base, None, st.gave_up(BASELINE))]
    for v in c.variants[1:]:
        runs = RunSet(v.name, st.runs_of(v.name))
        out.append(VariantResult(v, runs, compare_sets(base, runs, c.metric, c.confidence), st.gave_up(v.name)))
    tested = [vr.comparison.row() for vr in out[1:]
              if vr.comparison is not None and vr.comparison.row() is not None and vr.comparison.row().comparison]
    for row, p in zip(tested, holm([row.comparison.p_value for row in tested])):
        row.p_adjusted = p
    warnings = []
    for vr in out:
        failed = vr.runs.failed
        if vr.gave_up:
            warnings.append(f"{vr.variant.name}: gave up after {len(failed)} failed boots and no successful one "
                            f"({failed[-1].reason})")
        elif failed:
            reasons = sorted({r.reason or r.status for r in failed})
            warnings.append(f"{vr.variant.name}: {len(failed)} of {len(vr.runs.runs)} runs failed and are left out "
                            f"of the statistics ({'; '.join(reasons)})")
    for vr in out:
        lossy = [r for r in vr.runs.ok if r.metrics.get("console:lost_bytes")]
        if lossy:
            lost = int(sum(r.metrics["console:lost_bytes"] for r in lossy))
            # Without the kernel log to compare with, a capture's loss is counted by the
            # damaged lines' shape: what is lost inside a line's text is not in the count.
            at_least = "at least " if any(r.metrics.get("console:lost_bytes_by_shape") for r in lossy) else ""
            warnings.append(f"{vr.variant.name}: the console lost {at_least}{lost} bytes in {len(lossy)} of {len(vr.runs.ok)} "
                            f"runs (runs {', '.join(str(r.id) for r in lossy)}; `bootlab show RUN` names the lines)")
    for vr in out:
        builds = {r.target.get("digest") for r in vr.runs.runs if r.target.get("digest")}
        if len(builds) > 1:
            warnings.append(f"{vr.variant.name}: booted from {len(builds)} different builds of the same definition "
                            "(bootlab's init or the host's packages changed during the campaign)")
    left = len(st.remaining())
    if left:
        warnings.append(f"incomplete: {left} of {len(c.schedule())} boots still to run (run the campaign again "
                        "to resume)")
    return CampaignResult(c, st, out, warnings)


def from_store(store: Store, name: str) -> Campaign:
    """A campaign rebuilt from its stored runs (for status and reports without the file):
    variants in schedule order, each from the definition its runs were booted with."""
    runs = sorted((r for r in store.runs(campaign=name) if counts(r) and r.sequence is not None),
                  key=lambda r: r.sequence)
    if not runs:
        raise CampaignError(f"no campaign {name!r} in {store.path} (and no such campaign file)")
    variants: list[Variant] = []
    for r in runs:
        if any(v.name == r.variant for v in variants):
            continue
        try:
            spec = kinds.stored(r.target)
        except TargetError as err:
            raise CampaignError(f"campaign {name!r}, run {r.id}: stored target unreadable: {err}") from None
        variant = Variant(r.variant or BASELINE, "", spec, {})
        if variants:
            variant.patch = changes(variants[0].definition(), variant.definition())
        variants.append(variant)
    if variants[0].name != BASELINE:
        raise CampaignError(f"campaign {name!r} in {store.path} has no baseline runs at its start")
    rounds = runs[-1].sequence // len(variants) + 1
    return Campaign(name, variants, runs=max(rounds, 2))
