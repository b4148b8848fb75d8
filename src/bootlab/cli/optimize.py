"""`bootlab optimize`: find, combine and prove the changes that make the boot faster.

    bootlab optimize                                  # from the stock reference device
    bootlab optimize --target mine.toml --runs 8 --budget 2h --out result/
    bootlab optimize --only quiet,cloud-kernel --runs 5   # a short list of candidates

Writes OUT/final.toml (boot it with `bootlab boot --target OUT/final.toml`),
OUT/waterfall.toml (the verification as a campaign: `bootlab lab run OUT/waterfall.toml`
measures the waterfall again), OUT/waterfall.png, OUT/report.html, OUT/report.json and
OUT/report.txt.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..lab.optimizer import Budget, Optimizer, OptimizerError, built_kernel, final_target_file, waterfall_campaign
from ..lab.reports import optimize_data, optimize_html, optimize_text, to_json
from ..lab.waterfall import png
from ..targets import kernel_build, kinds
from ..targets.reference import Target, TargetError
from . import UsageError
from .boot import add_db_option, open_store
from .lab import run_campaign
from .output import write_output


def register(sub) -> None:
    p = sub.add_parser("optimize", help="try the advice and the known changes as campaigns, keep what is faster",
                       description="Probe the baseline, screen every applicable change against it, combine the "
                                   "significantly faster ones greedily (each re-tested with fresh runs), verify the "
                                   "result against the baseline and draw the waterfall.")
    p.add_argument("--target", metavar="FILE", help="the baseline target file: the reference device, the ARM64 board, "
                                                   "or a [board] or [labgrid] board with U-Boot in [bootloader] "
                                                   "(default: the stock reference device)")
    p.add_argument("--runs", type=int, default=8, metavar="N", help="boots per variant in each campaign (default 8)")
    p.add_argument("--verify-runs", type=int, metavar="N", help="boots per configuration in the final verification "
                                                                 "(default: --runs)")
    p.add_argument("--soak", type=int, default=0, metavar="N",
                   help="boot the final configuration N more times and report how often it fails (a hang in a "
                        "hundred boots passes every campaign; default 0)")
    p.add_argument("--rounds", type=int, default=3, metavar="N",
                   help="at most N rounds of screening and combining on top of what was kept (default 3)")
    p.add_argument("--budget", metavar="LIMIT", help="stop trying changes beyond this: boots (300) or time (90m, 2h)")
    p.add_argument("--name", default="optimize", help="names the campaigns in the store (NAME.screen ...); the same "
                                                      "name resumes an interrupted optimization (default optimize)")
    p.add_argument("--only", metavar="NAMES", help="try only these candidates (comma-separated names or shell patterns: kernel-*,kconfig-*)")
    p.add_argument("--skip", metavar="NAMES", help="never try these candidates (comma-separated names or shell patterns)")
    p.add_argument("--out", metavar="DIR", help="where the results go (default NAME-result)")
    p.add_argument("-v", "--verbose", action="store_true", help="show the console while booting")
    add_db_option(p)
    p.set_defaults(func=run)


def _names(text: str | None) -> set[str] | None:
    return {n.strip() for n in text.split(",") if n.strip()} if text else None


def run(args: argparse.Namespace) -> int:
    if args.runs < 2 or (args.verify_runs is not None and args.verify_runs < 2):
        raise UsageError("--runs and --verify-runs must be at least 2 (5 or more for a test to be able to decide)")
    if args.rounds < 1:
        raise UsageError("--rounds must be at least 1")
    if args.soak < 0:
        raise UsageError("--soak must not be negative")
    try:
        budget = Budget.parse(args.budget)
        baseline = kinds.load(args.target) if args.target else Target()
    except (ValueError, TargetError) as err:
        raise UsageError(str(err)) from None
    out_dir = args.out or f"{args.name}-result"
    store = open_store(args)

    def log(message: str) -> None:
        print(f"bootlab optimize: {message}", file=sys.stderr)

    try:
        optimizer = Optimizer(store, baseline, args.name, args.runs, args.verify_runs, budget, _names(args.only),
                              _names(args.skip) or set(), args.rounds,
                              lambda c, title: run_campaign(c, store, args.verbose, f"{args.name} {title}"), log,
                              args.soak)
        outcome = optimizer.run()
    except OptimizerError as err:
        raise UsageError(str(err)) from None
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as err:
        raise UsageError(f"cannot create {out_dir}: {err.strerror}") from None
    final_toml = final_target_file(outcome.final, f"{args.name}-final")
    image = png(outcome.waterfall) if outcome.waterfall is not None else None
    write_output(final_toml, os.path.join(out_dir, "final.toml"))
    write_output(waterfall_campaign(outcome, args.verify_runs or args.runs), os.path.join(out_dir, "waterfall.toml"))
    if image is not None:
        write_output(image, os.path.join(out_dir, "waterfall.png"))
    written = ["final.toml", "waterfall.toml (bootlab lab run)", "report.txt", "report.json", "report.html"]
    if built_kernel(outcome.final):  # its configuration against Debian's
        try:
            write_output(kernel_config_report(outcome), os.path.join(out_dir, "final-config.txt"))
            written.append("final-config.txt")
        except kernel_build.KernelBuildError as err:
            print(f"bootlab optimize: warning: the kernel configuration's report is left out: {err}", file=sys.stderr)
    report = optimize_text(outcome)
    write_output(report, os.path.join(out_dir, "report.txt"))
    write_output(to_json(optimize_data(outcome)), os.path.join(out_dir, "report.json"))
    write_output(optimize_html(outcome, image, final_toml), os.path.join(out_dir, "report.html"))
    print(report, end="")
    print(f"results in {out_dir}/: {', '.join(written)}" + (", waterfall.png" if image is not None else ""))
    return 0


def kernel_config_report(outcome) -> str:
    """The optimized kernel's configuration: the options the optimizer set, and the whole
    .config's difference from Debian's and from the baseline's (the seed's "185 options")."""
    final = kernel_build.build(outcome.final.kernel_config()).kernel
    lines = [f"# the optimized kernel's configuration: {final.config}",
             f"# options set by the optimization: {outcome.final.kconfig.options or 'none'}"]
    flavour, diff = kernel_build.against_debian(final.config, outcome.final.kconfig.base)
    lines.append(f"# against Debian's {flavour}: {diff.summary()}")
    if outcome.baseline.target.kernel == "built":
        base = kernel_build.build(outcome.baseline.kernel_config()).kernel
        ours = kernel_build.difference(kernel_build.read_config(base.config), kernel_build.read_config(final.config))
        lines += [f"# against the baseline's: {ours.summary()}"] + [f"  {line}" for line in ours.lines()]
    lines += [f"# every option that differs from Debian's {flavour}:"] + [f"  {line}" for line in diff.lines()]
    return "\n".join(lines) + "\n"
