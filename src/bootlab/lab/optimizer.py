"""The optimizer: from a baseline, find the non-intrusive changes that make the boot
significantly faster, combine them, and prove the result.

Rounds, each on top of the configuration so far (at most `rounds`, until one keeps nothing):

1. probe      one boot with initcall_debug that also prints the kernel log after ready:
              the facts candidates need (lpj, TSC rate), the advice rules' findings, and
              the slow built-in initcalls (initcall_blacklist= candidates).
2. screen     one campaign: the configuration so far and every applicable candidate alone
              on top of it.  A candidate passes when it is significantly faster (the
              campaign's Holm-adjusted test), none of its boots failed, and the application
              printed the same thing before ready as in the first baseline boots.
3. combine    greedy, largest screening saving first: a campaign per candidate, the
              configuration so far against the same plus the candidate, with fresh runs;
              kept under the same three conditions.  A candidate that sets a key an earlier
              one set (another compression, another kernel) is tried as a replacement.

   pool       then the candidates that screened faster but not significantly, all together
              (for each key the fastest choice), as one more candidate: small savings that
              8 boots cannot tell from noise one by one can be proven together.  A pool
              that is not kept is split in halves, each tried the same way (one member
              that hangs or slows the boot does not sink the others).

Rounds matter because effects are relative: next to a 2 s console and a 3 s decompression a
100 ms saving drowns in the noise; once those are gone it is 6% of the boot and shows.

4. verify     one campaign with the baseline and each cumulative configuration, fresh runs,
              interleaved: the waterfall and the final speed-up come from it alone.

5. soak       (`soak` > 0) the final configuration booted that many more times: a change
              that makes one boot in a hundred hang passes every campaign of 8 boots; the
              soak shows it, or bounds how rare it could still be.

Every kind of target goes through the same steps: the kind says through which table kernel
arguments are added (kinds.Kind.cmdline: [target], [arm64], a board's [bootloader] whose
env.bootargs U-Boot passes on), and which candidates it has (candidates.LEVERS).  A board
without [bootloader] is refused: its command line is in files bootlab does not own.

Every campaign is named after the optimization and what it compares (NAME.probe1-HASH,
NAME.screen1-HASH, NAME.step1.03-quiet-HASH, NAME.verify-HASH) and resumes from the run
store, so an interrupted optimization continues where it stopped when started again with
the same name: decisions already made are made again from the same stored runs.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from statistics import median
from typing import Callable

import tomli_w

from ..advice import advise
from ..advice.kernel_config import idle_drivers
from ..analysis import Options, analyze
from ..sources import NotALog, Patterns
from ..targets import kernel_build, kernel_trim, kinds
from ..targets.kconfig import NotKept
from ..targets.reference import Target, TargetError
from ..timeline import Phase
from . import campaign as campaigns
from .boots import read_run
from .candidates import (TRIM_CANDIDATES, Candidate, Facts, app_output, facts_from, for_target, from_advice,
                         from_initcalls, kernel_config, slow_builtin_initcalls)
from .patch import apply, changes
from .stats import failure_rate
from .store import Store
from .waterfall import Waterfall
from .waterfall import build as build_waterfall

DEFAULT_BOOT_SECONDS = 10.0  # the cost of a boot before any has been measured


class OptimizerError(Exception):
    pass


OUTPUT_CHANGED = "the application's output changed"


@dataclass
class Budget:
    """A limit on boots or on wall time; None is no limit."""

    boots: int | None = None
    seconds: float | None = None
    started: float = field(default_factory=time.monotonic)
    used: int = 0  # boots run by this optimization so far

    @classmethod
    def parse(cls, text: str | None) -> "Budget":
        """'300' or '300boots' (boots), '90s', '45m', '2h', '1h30m' (wall time)."""
        if not text:
            return cls()
        t = text.strip().lower().replace(" ", "")
        m = re.fullmatch(r"(\d+)(?:boots?)?", t)
        if m:
            return cls(boots=int(m.group(1)))
        m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)(?:m|min))?(?:(\d+)s)?", t)
        if m and any(m.groups()):
            h, mi, s = (int(x or 0) for x in m.groups())
            return cls(seconds=h * 3600 + mi * 60 + s)
        raise ValueError(f"budget {text!r}: a number of boots (300) or a duration (90s, 45m, 2h, 1h30m)")

    def allows(self, boots: int, per_boot: float, builds: float = 0.0) -> bool:
        """Whether `boots` more boots (and `builds` seconds of kernel builds) fit."""
        if self.boots is not None and self.used + boots > self.boots:
            return False
        if self.seconds is not None and time.monotonic() - self.started + boots * per_boot + builds > self.seconds:
            return False
        return True


@dataclass
class Decision:
    candidate: Candidate
    round: int
    stage: str  # "screen" or "combine"
    kept: bool
    why: str
    campaign: str = ""
    difference: float | None = None  # ns, candidate minus reference median (negative: faster)
    p: float | None = None


@dataclass
class Soak:
    """The final configuration booted again and again: how often it failed."""

    campaign: str
    boots: int
    failed: int
    reasons: list[str]
    rate_low: float  # 95% interval of the failure probability
    rate_high: float

    def summary(self) -> str:
        if not self.failed:
            return (f"soak: {self.boots} boots of the final configuration, none failed (a failure rate above "
                    f"{100 * self.rate_high:.1f}% is unlikely, 95%)")
        return (f"soak: {self.boots} boots of the final configuration, {self.failed} failed "
                f"({'; '.join(self.reasons)}): {100 * self.failed / self.boots:.1f}% "
                f"[{100 * self.rate_low:.1f}%, {100 * self.rate_high:.1f}%]")


@dataclass
class Outcome:
    name: str
    baseline: Target
    final: Target
    facts: Facts
    candidates: list[Candidate]
    not_applicable: list[tuple[Candidate, str]]
    decisions: list[Decision]
    kept: list[Candidate]
    screenings: list[campaigns.CampaignResult] = field(default_factory=list)  # one per round
    verify: campaigns.CampaignResult | None = None
    waterfall: Waterfall | None = None
    soak: Soak | None = None
    notes: list[str] = field(default_factory=list)


def _target(description: dict, base) -> Target:
    """The target a patched description describes, of whichever kind (targets/kinds.py)."""
    return kinds.from_dict(description, base=base)


PROBE_ARGS = "initcall_debug log_buf_len=4M"


def _probe_patch(t) -> dict:
    """What the probe boot adds: initcall_debug (in a buffer large enough to keep it all),
    and, where bootlab builds the init (an [initramfs] that is not only a Debian root's
    mounter), the kernel log printed after ready; elsewhere the probe has what the console
    showed."""
    description = t.to_dict()
    patch = {kinds.kind_of(description).cmdline: {"append": PROBE_ARGS}}
    if "initramfs" in description and "rootfs" not in description:
        patch["initramfs"] = {"dmesg": True}
    return patch


def built_kernel(t) -> bool:
    """Whether `t` boots a kernel bootlab builds (from its [kconfig] table)."""
    return getattr(getattr(t, "target", None), "kernel", None) == "built"


def phase_order(runs) -> list[str]:
    """The phases the runs' metrics name (phase:NAME), in boot order (a merged phase,
    `firmware + bootloader`, where its first part is)."""
    names = {m.split(":", 1)[1] for r in runs.ok for m in r.metrics if m.startswith("phase:")}
    order = [p.value for p in Phase]
    return sorted(names, key=lambda n: (next((i for i, p in enumerate(order) if n.startswith(p)), len(order)), n))


def _named(name: str, patterns) -> bool:
    """Whether --only/--skip name a candidate: by name, or a shell pattern (kernel-*)."""
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _rebuilds(variants: list[campaigns.Variant]) -> float:
    """Seconds of kernel builds the variants may need: one per configuration of a built
    kernel other than the first variant's, at what the last build from its base for its
    architecture took (an overestimate when the cache has some)."""
    configs = {json.dumps(v.spec.to_dict().get("kconfig"), sort_keys=True): v.spec for v in variants[1:]
               if built_kernel(v.spec)
               and v.spec.to_dict().get("kconfig") != variants[0].spec.to_dict().get("kconfig")}
    return sum(kernel_build.last_build_seconds(t.kconfig.base, t.kernel_config().arch) for t in configs.values())


def _same(a: Target, b: Target) -> bool:
    return a.to_dict() == b.to_dict()


class Optimizer:
    def __init__(self, store: Store, baseline: Target, name: str = "optimize", runs: int = 8,
                 verify_runs: int | None = None, budget: Budget | None = None, only: set[str] | None = None,
                 skip: set[str] = frozenset(), rounds: int = 3,
                 run_campaign: Callable[[campaigns.Campaign, str], campaigns.State] | None = None,
                 log: Callable[[str], None] = lambda _: None, soak: int = 0):
        if not campaigns.NAME.match(name):
            raise OptimizerError(f"name {name!r}: letters, digits and _ . + - only")
        description = baseline.to_dict()
        kind = kinds.kind_of(description)
        if kind.cmdline not in description:
            raise OptimizerError(f"a {kind.name} target without [{kind.cmdline}] is not one the optimizer can vary: "
                                 "its kernel command line is in files bootlab does not own; describe its U-Boot in "
                                 "[bootloader] with the command line as env.bootargs (bootlab sets it at the prompt), "
                                 "or compare variants with a campaign (bootlab lab run)")
        try:
            _target(apply(description, _probe_patch(baseline)), baseline.base)
        except TargetError as err:
            raise OptimizerError(f"the probe boot adds {PROBE_ARGS} to the command line, which this target refuses: "
                                 f"{err}") from None
        self.kind = kind
        self.store = store
        self.baseline = baseline
        self.name = name
        self.runs = runs
        self.verify_runs = verify_runs or runs
        self.budget = budget or Budget()
        self.only = only
        self.skip = set(skip)
        self.rounds = rounds
        self.soak = soak
        self.run_campaign = run_campaign or (lambda c, title: campaigns.run(c, store))
        self.log = log

    # -- running campaigns within the budget ---------------------------------------------------

    def _campaign(self, suffix: str, variants: list[campaigns.Variant], runs: int) -> campaigns.Campaign:
        """A campaign named by what it compares: the same experiment asked again (an
        interrupted optimization started again) finds its runs in the store; a different
        one (another configuration so far) gets its own name."""
        digest = hashlib.sha256(json.dumps([[v.name, v.definition()] for v in variants], sort_keys=True).encode())
        return campaigns.Campaign(f"{self.name}.{suffix}-{digest.hexdigest()[:8]}", variants, runs=runs)

    def _per_boot(self) -> float:
        walls = self.store.walls(f"{self.name}.")
        return median(walls) / 1e9 if walls else DEFAULT_BOOT_SECONDS

    def _left(self, c: campaigns.Campaign) -> int:
        return len(campaigns.state(c, self.store).remaining())

    def _run(self, c: campaigns.Campaign, title: str) -> campaigns.CampaignResult:
        before = self.store.count(c.name)
        st = self.run_campaign(c, title)
        self.budget.used += self.store.count(c.name) - before  # boots made (a given-up variant's slots are not)
        return campaigns.results(c, st)

    # -- the steps ----------------------------------------------------------------------------

    def probe(self, round_: int, current: Target) -> tuple[Facts, list[Candidate]] | None:
        """Facts and candidates from one boot of the current configuration; None when it
        does not boot."""
        # The kernel log printed after ready gives the facts even under quiet, and with
        # initcall_debug each initcall's time.
        patch = _probe_patch(current)
        try:
            probe_target = _target(apply(current.to_dict(), patch), current.base)
        except TargetError as err:
            raise OptimizerError(f"the probe boot's configuration is refused: {err}") from None
        c = self._campaign(f"probe{round_}", [campaigns.Variant(
            campaigns.BASELINE, "the configuration so far, kernel log printed after ready", probe_target, patch)], 1)
        runs = self._run(c, f"probe {round_}").result(campaigns.BASELINE).runs
        if not runs.ok:
            self.log(f"the probe boot failed ({runs.runs[-1].reason if runs.runs else 'not run'})")
            return None
        run = runs.ok[0]
        try:
            boot = read_run(self.store, run, Patterns.from_options(self.kind.ready(self.baseline)))
        except NotALog as err:
            self.log(f"facts and advice skipped: the probe's capture is unreadable ({err})")
            return Facts(), []
        analysis = analyze(boot, Options(baud=self.kind.baud(self.baseline)))
        try:
            findings = advise(boot, analysis, run.target)
        except Exception as err:  # noqa: BLE001 - the rules are written elsewhere; built-ins still work
            self.log(f"advice skipped: the rules failed ({type(err).__name__}: {err})")
            findings = []
        return facts_from(boot), from_advice(findings, self.kind.cmdline) + self._initcall_candidates(current, boot)

    def _initcall_candidates(self, current: Target, boot) -> list[Candidate]:
        """The slow built-in initcalls, as what removes them: for a kernel bootlab builds,
        the Kconfig option that builds each (a rebuild); for a packaged kernel, the stand-in
        initcall_blacklist=."""
        if not built_kernel(current):
            return from_initcalls(boot, self.kind.cmdline)
        try:
            kernel = kernel_build.build(current.kernel_config()).kernel
            tree = kernel_build.source_tree()
        except kernel_build.KernelBuildError as err:
            self.log(f"kernel configuration candidates skipped: {err}")
            return []
        config = kernel_build.read_config(kernel.config)
        slow = slow_builtin_initcalls(boot)[:TRIM_CANDIDATES]
        idle = sorted({ev.name for ev in idle_drivers(boot)})
        found = kernel_trim.origins(tree, sorted({name for name, _ in slow} | set(idle)), config)
        out = []
        unused = kernel_trim.modular(tree, [found[name] for name in idle if name in found])
        for c in kernel_config(current, config, [(found[name], dur) for name, dur in slow if name in found], unused):
            c = self._kconfig_kept(current, c)
            if c is not None:
                out.append(c)
        return out

    def _kconfig_kept(self, current: Target, c: Candidate) -> Candidate | None:
        """The candidate as Kconfig would make it: one it refuses (an option another one
        selects) is known in seconds, not after a build; of several options, those Kconfig
        keeps stay (the others are named in the log)."""
        why = kernel_build.refusal(_target(apply(current.to_dict(), c.patch), current.base).kernel_config())
        options = c.patch["kconfig"]["options"]
        lost = {name for name in options if isinstance(why, NotKept) and f"CONFIG_{name}" in why.names}
        if lost and len(lost) < len(options):
            self.log(f"{c.name}: Kconfig keeps {', '.join(sorted(lost))} (selected by others): left as they are")
            c.patch = {"kconfig": {"options": {k: v for k, v in options.items() if k not in lost}}}
            c.description += f"; {len(lost)} of them kept, which other options select"
            why = kernel_build.refusal(_target(apply(current.to_dict(), c.patch), current.base).kernel_config())
        if why is not None:
            self.log(f"{c.name}: not applicable: {str(why).splitlines()[-1].strip()}")
            return None
        return c

    def applicable(self, candidates: list[Candidate], on: Target) -> tuple[list[tuple[Candidate, Target]],
                                                                           list[tuple[Candidate, str]]]:
        """(candidate, its target on top of `on`) for those that change something valid."""
        good, bad, seen = [], [], set()
        for c in candidates:
            key = json.dumps(c.patch, sort_keys=True)
            if key in seen or _named(c.name, self.skip) or (self.only is not None and not _named(c.name, self.only)):
                continue
            seen.add(key)
            if c.refused:
                bad.append((c, f"not applicable: {c.refused}"))
                continue
            try:
                t = _target(apply(on.to_dict(), c.patch), on.base)
            except TargetError as err:
                bad.append((c, f"not applicable: {err}"))
                continue
            if _same(t, on):
                bad.append((c, "already so in the baseline"))
                continue
            good.append((c, t))
        return good, bad

    def accept(self, vr: campaigns.VariantResult, reference_output: list[str]) -> tuple[bool, str]:
        """Whether a variant may be kept: no failed boot, significantly faster, same output."""
        runs = vr.runs
        if runs.failed:
            reasons = "; ".join(sorted({r.reason or r.status for r in runs.failed}))
            return False, f"{len(runs.failed)} of {len(runs.runs)} boots failed ({reasons})"
        row = vr.comparison.row() if vr.comparison is not None else None
        if row is None or row.comparison is None:
            return False, "no numbers to compare"
        c = row.comparison
        if not row.significant(vr.comparison.confidence):
            return False, f"not significantly faster ({c.percent:+.1f}%, p={row.p:.3g})"
        if c.difference > 0:
            return False, f"significantly slower ({c.percent:+.1f}%, p={row.p:.3g})"
        if not self._same_output(vr, reference_output):
            return False, OUTPUT_CHANGED
        return True, f"faster by {-c.difference / 1e6:.0f} ms ({c.percent:+.1f}%, p={row.p:.3g})"

    def _same_output(self, vr: campaigns.VariantResult, reference_output: list[str]) -> bool:
        ready = self.kind.ready(vr.variant.spec)
        return all(app_output(self.store.capture(r.id) or b"", ready) == reference_output for r in vr.runs.ok)

    def _output_of(self, vr: campaigns.VariantResult) -> list[str]:
        ok = vr.runs.ok
        return app_output(self.store.capture(ok[0].id) or b"", self.kind.ready(vr.variant.spec)) if ok else []

    def run(self) -> Outcome:
        out = Outcome(self.name, self.baseline, self.baseline, Facts(), [], [], [], [])
        reference_output: list[str] | None = None
        for round_ in range(1, self.rounds + 1):
            kept = len(out.kept)
            reference_output = self._round(out, round_, reference_output)
            if reference_output is None or len(out.kept) == kept:
                break
        self._verify(out)
        if self.soak:
            self._soak(out)
        return out

    def _round(self, out: Outcome, round_: int, reference_output: list[str] | None) -> list[str] | None:
        """Screen what applies to the configuration so far, then combine what passed.
        Returns the application's reference output, None when nothing more can be tried."""
        probed = self.probe(round_, out.final)
        if probed is None:
            if round_ == 1:
                raise OptimizerError("the baseline does not boot: nothing to optimize from")
            return None
        facts, from_probe = probed
        if round_ == 1:
            out.facts = facts
        tried, not_applicable = self.applicable(from_probe + for_target(out.final, facts), out.final)
        out.candidates += [c for c, _ in tried if c.name not in {k.name for k in out.candidates}]
        if round_ == 1:
            out.not_applicable = not_applicable
        if not tried:
            out.notes.append(f"round {round_}: no candidate applies")
            return None
        # Candidates that make the same configuration are booted once.
        kept_names = "+".join(k.name for k in out.kept) or "the baseline"
        variants = [campaigns.Variant(campaigns.BASELINE, f"kept so far: {kept_names}", out.final, {})]
        screened: dict[str, str] = {}  # candidate -> the variant it was measured as
        for c, t in tried:
            same = next((v for v in variants[1:] if _same(v.spec, t)), None)
            if same is None:
                variants.append(campaigns.Variant(c.name, c.description, t, c.patch))
            screened[c.name] = same.name if same else c.name
        screen = self._campaign(f"screen{round_}", variants, self.runs)
        need = self._left(screen)
        builds = _rebuilds(variants)
        if not self.budget.allows(need + (len(out.kept) + 2) * self.verify_runs, self._per_boot(), builds):
            why = (f"screening {len(variants) - 1} candidates needs {need} more boots (about "
                   f"{(need * self._per_boot() + builds) / 60:.0f} min, kernel builds included) and the budget "
                   "does not allow it")
            if round_ == 1:
                raise OptimizerError(f"{why}: raise --budget, lower --runs, or choose candidates with --only/--skip")
            out.notes.append(f"round {round_} not run: {why}")
            return None
        self.log(f"round {round_}: screening {len(variants) - 1} candidates on top of {kept_names}, "
                 f"{self.runs} boots each")
        res = self._run(screen, f"screen {round_}")
        out.screenings.append(res)
        if reference_output is None:
            reference_output = self._output_of(res.result(campaigns.BASELINE))
        passed: list[tuple[float, Candidate]] = []
        for c, _t in tried:
            vr = res.result(screened[c.name])
            ok, why = self.accept(vr, reference_output)
            row = vr.comparison.row()
            diff = row.comparison.difference if row is not None and row.comparison is not None else None
            out.decisions.append(Decision(c, round_, "screen", ok, why, screen.name, diff,
                                          row.p if row is not None else None))
            if ok:
                passed.append((diff, c))
        step = 0
        for step, (_, c) in enumerate(sorted(passed, key=lambda x: x[0]), start=1):
            out.final = self._combine(out, round_, step, c, out.final, reference_output)
        members = self._pool(out, round_, tried, screened, res, reference_output)
        if len(members) >= 2:
            self._try_pool(out, round_, step, f"pool{round_}", members, reference_output)
        return reference_output

    def _pool(self, out: Outcome, round_: int, tried, screened: dict[str, str], res: campaigns.CampaignResult,
              reference_output: list[str]) -> list[Candidate]:
        """The candidates that screened faster but not significantly, fastest first: a saving
        of 3% is lost in the noise of 8 boots, five of them together are not.  Each key is
        taken from the candidate that screened fastest with it; only candidates whose boots
        all succeeded with the same output are pooled."""
        decided = {(d.candidate.name, d.stage) for d in out.decisions if d.round == round_ and d.kept}
        hopeful = []
        for c, _t in tried:
            vr = res.result(screened[c.name])
            row = vr.comparison.row() if vr.comparison is not None else None
            if (c.name, "screen") in decided or row is None or row.comparison is None or vr.runs.failed:
                continue
            if row.comparison.difference < 0 and self._same_output(vr, reference_output):
                hopeful.append((row.comparison.difference, c))
        description = out.final.to_dict()
        members, taken = [], set()
        for _, c in sorted(hopeful, key=lambda x: x[0]):
            keys = {(section, key) for section, values in c.patch.items() for key in values if key != "append"}
            if keys & taken:
                continue  # another choice for the same key screened faster
            try:
                nxt = apply(description, c.patch)
                _target(nxt, out.final.base)
            except TargetError:
                continue
            if nxt != description:
                description, taken = nxt, taken | keys
                members.append(c)
        return members

    def _try_pool(self, out: Outcome, round_: int, step: int, name: str, members: list[Candidate],
                  reference_output: list[str]) -> int:
        """Try the members together; when a member spoils the pool (it hangs the boot, slows
        it down more than the others save, or changes the output), try each half the same
        way: group testing finds the members that pay in a few campaigns.  Returns the last
        step number used."""
        if len(members) == 1:
            pooled = members[0]
        else:
            description = out.final.to_dict()
            for c in members:
                description = apply(description, c.patch)
            patch = {k: v for k, v in changes(out.final.to_dict(), description).items() if k != "name"}
            pooled = Candidate(name, "together: " + ", ".join(c.name for c in members), patch,
                               origin="pooled: " + ", ".join(c.origin for c in members))
        kept = len(out.kept)
        step += 1
        out.final = self._combine(out, round_, step, pooled, out.final, reference_output)
        d = out.decisions[-1]
        # Split only when a member spoils the pool: failed boots, a slower boot, another
        # output.  A pool that is merely not significantly faster has halves with even
        # smaller savings, which 8 boots prove even less.
        spoilt = bool(d.campaign) and (d.difference is None or d.difference >= 0 or d.why == OUTPUT_CHANGED)
        if len(out.kept) == kept and len(members) >= 2 and spoilt:
            half = (len(members) + 1) // 2
            step = self._try_pool(out, round_, step, f"{name}a", members[:half], reference_output)
            step = self._try_pool(out, round_, step, f"{name}b", members[half:], reference_output)
        return step

    def _combine(self, out: Outcome, round_: int, step: int, c: Candidate, current: Target,
                 reference_output: list[str]) -> Target:
        def decided(kept: bool, why: str) -> Target:
            out.decisions.append(Decision(c, round_, "combine", kept, why))
            return current

        try:
            nxt = _target(apply(current.to_dict(), c.patch), current.base)
        except TargetError as err:
            return decided(False, f"not applicable on top of the kept changes: {err}")
        if _same(nxt, current):
            return decided(False, "already part of the configuration")
        reserve = (len(out.kept) + 2) * self.verify_runs
        if not self.budget.allows(2 * self.runs + reserve, self._per_boot()):
            return decided(False, "not tried: the budget is spent")
        kept_names = "+".join(k.name for k in out.kept) or "baseline"
        c_step = self._campaign(f"step{round_}.{step:02d}-{c.name}", [
            campaigns.Variant(campaigns.BASELINE, f"kept so far: {kept_names}", current, {}),
            campaigns.Variant(c.name, c.description, nxt, c.patch)], self.runs)
        self.log(f"round {round_}, step {step}: {c.name} on top of {kept_names}")
        res = self._run(c_step, f"step {round_}.{step}: {c.name}")
        ok, why = self.accept(res.result(c.name), reference_output)
        row = res.result(c.name).comparison.row()
        out.decisions.append(Decision(c, round_, "combine", ok, why, c_step.name,
                                      row.comparison.difference if row and row.comparison else None,
                                      row.p if row else None))
        if not ok:
            return current
        out.kept.append(c)
        return nxt

    def _verify(self, out: Outcome) -> None:
        variants = [campaigns.Variant(campaigns.BASELINE, "the baseline", self.baseline, {})]
        current = self.baseline
        for k, c in enumerate(out.kept, start=1):
            current = _target(apply(current.to_dict(), c.patch), current.base)
            variants.append(campaigns.Variant(f"{k}-{c.name}", c.description, current, c.patch))
        if len(variants) == 1:
            out.notes.append("no change was kept: the baseline is the result")
            return
        verify = self._campaign("verify", variants, self.verify_runs)
        self.log(f"verifying: the baseline and {len(variants) - 1} cumulative configurations, "
                 f"{self.verify_runs} fresh boots each")
        out.verify = self._run(verify, "verify")
        steps = [(vr.variant.name, vr.variant.description, vr.runs.values("total")) for vr in out.verify.variants]
        final = out.verify.variants[-1]
        if final.runs.failed:
            out.notes.append(f"the final configuration failed {len(final.runs.failed)} of {len(final.runs.runs)} "
                             "boots in verification: do not use it as it is")
        if all(values for _, _, values in steps):
            phases = [{p: vr.runs.values(f"phase:{p}") for p in phase_order(vr.runs)} for vr in out.verify.variants]
            out.waterfall = build_waterfall(steps, "total", verify.confidence, phases)
        else:
            out.notes.append("a configuration had no successful boot in verification: no waterfall")

    def _soak(self, out: Outcome) -> None:
        if not self.budget.allows(self.soak, self._per_boot()):
            out.notes.append(f"soak not run: the budget does not allow {self.soak} more boots")
            return
        soak = self._campaign("soak", [campaigns.Variant(campaigns.BASELINE, "the final configuration", out.final, {})],
                              self.soak)
        self.log(f"soaking the final configuration: {self.soak} boots")
        runs = self._run(soak, "soak").result(campaigns.BASELINE).runs
        reasons = sorted({r.reason or r.status for r in runs.failed})
        low, high = failure_rate(len(runs.failed), len(runs.runs))
        out.soak = Soak(soak.name, len(runs.runs), len(runs.failed), reasons, low, high)
        if runs.failed:
            out.notes.append(f"the final configuration failed {len(runs.failed)} of {len(runs.runs)} soak boots "
                             f"({'; '.join(reasons)}): a failure too rare for the campaigns to show; find the change "
                             "that causes it (soak the cumulative configurations of waterfall.toml) before using it")


def final_target_file(t: Target, name: str) -> str:
    """The result as a target file anyone can boot."""
    return t.standalone(name).to_toml()


def waterfall_campaign(out: Outcome, runs: int) -> str:
    """The verification as a campaign file (baseline, then each cumulative configuration),
    to measure the waterfall again, anywhere, with `bootlab lab run`.  The reference
    device's baseline is a patch over the stock device; another kind's is written out
    whole, as its own tables."""
    def patch(before: dict, after: dict) -> dict:
        return {k: v for k, v in changes(before, after).items() if k != "name"}

    base = out.baseline.standalone("baseline").to_dict()
    data = {"name": f"{out.name}-waterfall", "runs": runs,
            "description": f"the waterfall of optimization {out.name}: the baseline, then each kept change added"}
    if kinds.kind_of(base).marker is None:
        data["baseline"] = {"description": "the starting configuration", **patch(Target().to_dict(), base)}
    else:
        data.update({k: v for k, v in base.items() if k != "name"})
        data["baseline"] = {"description": "the starting configuration"}
    data["variant"] = {}
    current = base
    for k, c in enumerate(out.kept, start=1):
        current = apply(current, c.patch)
        data["variant"][f"{k}-{c.name}"] = {"description": c.description, **patch(base, current)}
    return tomli_w.dumps(data)
