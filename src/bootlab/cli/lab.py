"""`bootlab lab run|status|report CAMPAIGN`: A/B campaigns on the reference device or a board.

    bootlab lab run campaigns/seed-quiet.toml            # boots what is left, then reports
    bootlab lab status campaigns/seed-quiet.toml         # what is done, what is left, ETA
    bootlab lab report seed-quiet -f html -o quiet.html  # from the store (file or campaign name)
"""

from __future__ import annotations

import argparse
import os
import sys
from statistics import median

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ..lab import campaign as campaigns
from ..lab.reports import campaign_data, campaign_html, campaign_text, to_json
from ..lab.store import Run, Store
from ..render.fmt import seconds, span
from . import UsageError
from .boot import _Echo, add_db_option, open_store
from .output import write_output


def register(sub) -> None:
    p = sub.add_parser("lab", help="run A/B campaigns: a baseline and variants, interleaved, with statistics",
                       description="Boot a campaign's baseline and variants N times each, interleaved, record "
                                   "every run, and compare each variant with the baseline. An interrupted "
                                   "campaign resumes where it stopped (the run store says what is done).")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    r = actions.add_parser("run", help="boot what is left of a campaign, then report")
    r.add_argument("campaign", metavar="CAMPAIGN.toml")
    r.add_argument("-v", "--verbose", action="store_true", help="show the console while booting")
    _report_options(r)
    r.set_defaults(func=run_cmd)
    s = actions.add_parser("status", help="how far a campaign is: boots done and left per variant, ETA")
    s.add_argument("campaign", metavar="CAMPAIGN", help="campaign file, or a campaign's name in the store")
    add_db_option(s)
    s.set_defaults(func=status_cmd)
    rep = actions.add_parser("report", help="a campaign's statistics from the store (no boot)")
    rep.add_argument("campaign", metavar="CAMPAIGN", help="campaign file, or a campaign's name in the store")
    _report_options(rep)
    rep.set_defaults(func=report_cmd)


def _report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-f", "--format", choices=("text", "json", "html"), default="text")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE (default: standard output)")
    p.add_argument("--brief", action="store_true", help="text: the summary table only, no per-phase tables")
    add_db_option(p)


def load_campaign(ref: str, store: Store | None = None) -> campaigns.Campaign:
    """A campaign file, or (for status and reports) a campaign's name in the store."""
    try:
        if os.path.exists(ref) or ref.endswith(".toml") or store is None:
            return campaigns.load(ref)
        return campaigns.from_store(store, ref)
    except campaigns.CampaignError as err:
        raise UsageError(str(err)) from None


class RichProgress:
    """A progress bar with ETA over a campaign's boots (plain lines when not on a terminal)."""

    def __init__(self, title: str = ""):
        self.console = Console(stderr=True)
        self.title = title
        self.bar: Progress | None = None
        self.task = None

    def start(self, c: campaigns.Campaign, st: campaigns.State) -> None:
        total, done = len(c.schedule()), len(st.done)
        self.title = title = self.title or c.name
        if done:
            print(f"{title}: resuming, {done} of {total} boots already in the store", file=sys.stderr)
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[last]}"), TimeRemainingColumn(), console=self.console,
                            disable=not self.console.is_terminal)
        self.bar.start()
        self.task = self.bar.add_task(title, total=total, completed=done, last="")

    def step(self, sequence: int, variant: str, run: Run) -> None:
        last = f"{variant}: {seconds(int(run.metrics['total']))} s" if run.status == "ok" and "total" in run.metrics \
            else f"{variant}: {run.status} ({run.reason})"
        self.bar.update(self.task, advance=1, last=last)
        if not self.console.is_terminal:
            done = int(self.bar.tasks[0].completed)
            print(f"{self.title} {done}/{int(self.bar.tasks[0].total)}: run {run.id} {last}", file=sys.stderr)

    def gave_up(self, variant: str, runs: list[Run]) -> None:
        self.console.print(f"[yellow]warning:[/] {variant}: {len(runs)} failed boots and none reached ready: "
                           f"not booted again ({runs[-1].reason})")

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def run_campaign(c: campaigns.Campaign, store: Store, verbose: bool = False, title: str = "") -> campaigns.State:
    progress = RichProgress(title)
    echo = _Echo() if verbose else None
    try:
        return campaigns.run(c, store, progress, lambda camp, v: campaigns.booter_for(camp, v, echo))
    except campaigns.CampaignError as err:
        raise UsageError(str(err)) from None
    finally:
        progress.stop()


def write_report(res: campaigns.CampaignResult, args: argparse.Namespace) -> None:
    if args.format == "json":
        write_output(to_json(campaign_data(res)), args.output)
    elif args.format == "html":
        write_output(campaign_html(res), args.output)
    else:
        write_output(campaign_text(res, details=not args.brief), args.output)


def run_cmd(args: argparse.Namespace) -> int:
    c = load_campaign(args.campaign)
    store = open_store(args)
    st = run_campaign(c, store, args.verbose)
    write_report(campaigns.results(c, st), args)
    return 0


def _stored(args: argparse.Namespace) -> tuple[campaigns.Campaign, campaigns.State]:
    store = open_store(args)
    c = load_campaign(args.campaign, store)
    try:
        return c, campaigns.state(c, store)
    except campaigns.CampaignError as err:
        raise UsageError(str(err)) from None


def report_cmd(args: argparse.Namespace) -> int:
    c, st = _stored(args)
    write_report(campaigns.results(c, st), args)
    return 0


def status_cmd(args: argparse.Namespace) -> int:
    c, st = _stored(args)
    left = st.remaining()
    print(f"campaign {c.name}: {len(st.done)} of {len(c.schedule())} boots done, {len(left)} left")
    for v in c.variants:
        runs = st.runs_of(v.name)
        ok = sum(r.status == "ok" for r in runs)
        todo = sum(1 for _, name in left if name == v.name)
        note = "  gave up (no boot reached ready)" if st.gave_up(v.name) else ""
        print(f"  {v.name:<24} {ok:>3} ok  {len(runs) - ok:>3} failed  {todo:>3} left{note}")
    walls = [r.wall_ns for r in st.done.values() if r.wall_ns]
    if left and walls:
        print(f"about {span(int(median(walls) * len(left)))} of booting left (median boot {span(int(median(walls)))})")
    return 0
