"""Probe plans by cost: held-out error and 90% coverage versus the tokens the probes cost.

On the BenchPress paper matrix (`microsoft/benchpress-v1`) and the bundled snapshot
(`BenchPress.load()`), fitted models are split into seeded folds; each fold leaves the fit
(`BenchPress.fit` on every other fitted cell, as `benchmarks/where_users_stand.py` does), the
probe plans are chosen on that fit alone (`BenchPress.plan_probes`, lm-eval), and each of the
fold's models reveals its scores on a plan's benchmarks and has its other cells predicted
through `BenchPress.predict`:

- `today (full)`: the default lm-eval probe set `benchpress run` ran before plans had budgets
  (chosen on the whole snapshot, so it has seen the held-out models), every task in full; its
  token cost is the budget B;
- `every benchmark, full`: every benchmark an lm-eval task runs (sized by the task facts),
  in full: the most any lm-eval plan can reveal, at many times the cost;
- `plan @ B x f`: the plan for a budget of f x B. A benchmark run on a subset of n of its N
  items reveals a draw of the score n items would give (hypergeometric: k of the n right
  when the full score has round(p N) of the N), passed with its binomial standard error as
  the runner passes it (`(score, standard_error)`).

The figure is the median over models of each model's median absolute error (points) on its
cells of the benchmarks no lm-eval task runs (the same cells for every plan), and the share
of those cells inside the 90% intervals. A model counts when it has at least one probe of
every plan and `MIN_HIDDEN` such cells. The plot (`--plot`, default
docs/assets/probe_budget.svg) draws both against tokens.

    python benchmarks/probe_budget.py            # both snapshots, 5 folds (~3.5 min on 2 cores)
    python benchmarks/probe_budget.py --quick    # 3 folds, every other model
    python benchmarks/probe_budget.py --seed 1   # another split of the models and noise
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.where_users_stand import errors, long_frame  # noqa: E402
from predictor.api import BenchPress  # noqa: E402
from predictor.harnesses import get_harness  # noqa: E402
from predictor.results.noise import binomial_stderr  # noqa: E402
from predictor.trust.probe_plan import plan_probes_for, runnable_candidates  # noqa: E402
from predictor.trust.target_weights import row_weights  # noqa: E402
from predictor.values import FractionScoresWarning  # noqa: E402

HARNESS = "lm_eval"
MIN_HIDDEN = 3
FRACTIONS = (0.03, 0.1, 0.3, 1.0)  # budgets of the plans, as shares of today's set's cost
TODAY = "today (full)"
CEILING = "every benchmark, full"
# the default lm-eval set of each snapshot before plans (predictor/trust/probe_sets.py as
# it was pinned): five benchmarks, every task in full
TODAY_SETS = {
    "microsoft/benchpress-v1": ("gpqa_diamond", "aime_2025", "gpqa_main", "mmlu_pro", "c_eval"),
    "bundled": ("gpqa_diamond", "mmlu", "aime_2025", "gpqa_main", "aime_2024"),
}
DEFAULT_PLOT = REPO_ROOT / "docs" / "assets" / "probe_budget.svg"


def plan_label(fraction: float) -> str:
    return f"plan @ B x {fraction:g}"


def sizes(bp: BenchPress) -> dict[str, tuple[int, int]]:
    """benchmark -> (items, tokens per item) of its lm-eval task (the task facts)."""
    return {c.benchmark: (c.total, c.tokens_per_item) for c in runnable_candidates(bp, HARNESS)}


def runnable_ids(bp: BenchPress) -> set[str]:
    """Benchmarks an lm-eval task scores (any task of the map): never counted as targets."""
    return set(get_harness(HARNESS).tasks())


def subset_score(value: float, items: int, total: int, rng: np.random.Generator) -> float:
    """The score a seeded subset of `items` of `total` gives when the full score is `value`."""
    good = int(round(value / 100.0 * total))
    right = rng.hypergeometric(good, total - good, items)
    return 100.0 * right / items


def revealed(
    values: dict[str, float],
    items: dict[str, int],
    size: dict[str, tuple[int, int]],
    rng: np.random.Generator,
) -> dict[str, float | tuple[float, float]]:
    """A model's probe scores under a plan (benchmark -> items): exact where run in full,
    else a subset's draw with its binomial standard error."""
    out: dict[str, float | tuple[float, float]] = {}
    for benchmark, n in items.items():
        if benchmark not in values:
            continue
        total = size[benchmark][0]
        if n >= total:
            out[benchmark] = values[benchmark]
        else:
            score = subset_score(values[benchmark], n, total, rng)
            out[benchmark] = (score, binomial_stderr(score, n))
    return out


def run_snapshot(name: str, bp: BenchPress, folds: int, seed: int, step: int) -> pl.DataFrame:
    size = sizes(bp)
    today = {b: size[b][0] for b in TODAY_SETS[name]}
    budget = sum(n * size[b][1] for b, n in today.items())
    every = {b: n for b, (n, _) in size.items()}
    every_tokens = sum(n * per for n, per in size.values())
    skip = runnable_ids(bp)
    cells = bp.snapshot.cells.filter(
        pl.col("model_id").is_in(bp.fit_models_) & pl.col("benchmark_id").is_in(bp.fit_benchmarks_)
    )
    values = {
        m: dict(zip(g["benchmark_id"], g["score"], strict=True))
        for (m,), g in cells.group_by("model_id")
    }
    eligible = [
        m
        for m in bp.fit_models_
        if len(set(values[m]) - skip) >= MIN_HIDDEN and set(values[m]) & set(size)
    ][::step]
    fold_of = np.random.default_rng(seed).permutation(len(eligible)) % folds
    print(
        f"{bp.version}: {len(eligible)} models in {folds} folds; today's set "
        f"{', '.join(today)}: {budget / 1e6:.2f}M tokens (B)",
        flush=True,
    )
    rows = []
    for f in range(folds):
        held = [m for m, k in zip(eligible, fold_of, strict=True) if k == f]
        start = time.perf_counter()
        fitted = BenchPress.fit(long_frame(bp, set(bp.fit_models_) - set(held)), random_state=seed)
        fit_s = time.perf_counter() - start
        # the fold's fit knows no sources: weigh its rows by the snapshot's
        weights = row_weights(fitted.fit_models_, fitted.fit_benchmarks_, bp.snapshot.cells)
        plans = {TODAY: (today, budget), CEILING: (every, every_tokens)}
        for fraction in FRACTIONS:
            plan = plan_probes_for(fitted, HARNESS, budget * fraction, row_weights=weights)
            plans[plan_label(fraction)] = (plan.items, plan.tokens)
        print(
            f"  fold {f + 1}/{folds}: {len(held)} models held out, fit {fit_s:.0f} s, plans "
            f"{time.perf_counter() - start - fit_s:.0f} s",
            flush=True,
        )
        for index, model in enumerate(held):
            truth = {
                b: v for b, v in values[model].items() if b not in skip and b in fitted._column
            }
            rng = np.random.default_rng([seed, f, index])
            probes = {
                way: revealed(values[model], items, size, rng) for way, (items, _) in plans.items()
            }
            if len(truth) < MIN_HIDDEN or not all(probes.values()):
                continue
            for way, (_, tokens) in plans.items():
                medae, cover = errors(fitted.predict(probes[way]), truth)
                rows.append(
                    {
                        "snapshot": bp.version,
                        "fold": f,
                        "model": model,
                        "way": way,
                        "tokens": tokens,
                        "probes": len(probes[way]),
                        "subsets": sum(isinstance(v, tuple) for v in probes[way].values()),
                        "medae": medae,
                        "coverage": cover,
                        "cells": len(truth),
                    }
                )
    return pl.DataFrame(rows)


def summary(results: pl.DataFrame) -> pl.DataFrame:
    """Per snapshot and way: mean tokens, MedAE (median over models), pooled coverage."""
    return (
        results.group_by("snapshot", "way", maintain_order=True)
        .agg(
            pl.len().alias("models"),
            (pl.col("tokens").mean() / 1e6).round(2).alias("tokens_M"),
            pl.col("probes").mean().round(1).alias("probes_seen"),
            pl.col("medae").median().round(2).alias("medae"),
            ((pl.col("coverage") * pl.col("cells")).sum() / pl.col("cells").sum())
            .round(3)
            .alias("coverage_90"),
        )
        .sort("snapshot", "tokens_M")
    )


def verdicts(table: pl.DataFrame) -> list[str]:
    """The figures side by side, one line each: each plan against today's set run in full,
    and the coverage across budgets."""
    lines = []
    for (snapshot,), part in table.group_by("snapshot", maintain_order=True):
        got = dict(zip(part["way"], part["medae"], strict=True))
        today, full, tenth = got[TODAY], got[plan_label(1.0)], got[plan_label(0.1)]
        ceiling = got[CEILING]

        def against(value: float, today: float = today) -> str:
            lower = (1 - value / today) * 100
            side = "lower" if lower >= 0 else "higher"
            return f"{value:.2f} ({abs(lower):.0f}% {side} than today's {today:.2f})"

        lines.append(
            f"{snapshot} ({part['models'][0]} models): plan at B {against(full)}; at B/10 "
            f"{against(tenth)}; every lm-eval benchmark in full {against(ceiling)}"
        )
        cover = part["coverage_90"]
        lines.append(f"{snapshot}: 90% coverage {cover.min():.3f}-{cover.max():.3f} across budgets")
    return lines


def plot(table: pl.DataFrame, path: Path) -> None:
    """MedAE and coverage against tokens, one column per snapshot."""
    import matplotlib  # deferred: only for the figure

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "probe_budget"  # the same file for the same figures
    import matplotlib.pyplot as plt  # deferred: as above

    snapshots = table["snapshot"].unique(maintain_order=True).to_list()
    fig, axes = plt.subplots(2, len(snapshots), figsize=(5 * len(snapshots), 6), squeeze=False)
    for k, snapshot in enumerate(snapshots):
        part = table.filter(pl.col("snapshot") == snapshot)
        plans = part.filter(pl.col("way").str.starts_with("plan")).sort("tokens_M")
        today = part.filter(pl.col("way") == TODAY)
        ceiling = part.filter(pl.col("way") == CEILING)
        for row, column, label in (
            (0, "medae", "held-out MedAE (points)"),
            (1, "coverage_90", "90% interval coverage"),
        ):
            ax = axes[row][k]
            ax.plot(plans["tokens_M"], plans[column], "o-", label="plan by cost (subsets)")
            ax.plot(today["tokens_M"], today[column], "s", color="C3", label="today's set, full")
            ax.plot(ceiling["tokens_M"], ceiling[column], "^", color="0.4", label=CEILING)
            ax.set_xscale("log")
            ax.set_xlabel("probe tokens (millions)")
            ax.set_ylabel(label)
            if row == 0:
                ax.set_title(snapshot)
                ax.legend()
            else:
                ax.axhspan(0.87, 0.93, color="0.9")
                ax.set_ylim(0.75, 1.0)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata={"Date": None} if path.suffix == ".svg" else None)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="every other model, 3 folds")
    parser.add_argument("--plot", type=Path, default=DEFAULT_PLOT, help="the figure (svg/png)")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--csv", type=Path, help="write every model's figures here")
    args = parser.parse_args()
    warnings.simplefilter("ignore", FractionScoresWarning)
    folds, step = (3, 2) if args.quick else (args.folds, 1)
    start = time.perf_counter()
    parts = []
    for name in TODAY_SETS:
        bp = BenchPress.load() if name == "bundled" else BenchPress.from_pretrained(name)
        parts.append(run_snapshot(name, bp, folds, args.seed, step))
    results = pl.concat(parts)
    if args.csv:
        results.write_csv(args.csv)
    table = summary(results)
    print("\nmedae: median over held-out models of each one's MedAE on the cells of benchmarks")
    print("no lm-eval task runs; coverage_90: share of those cells inside the 90% interval\n")
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        print(table)
    print()
    for line in verdicts(table):
        print(line)
    if not args.no_plot:
        plot(table, args.plot)
        print(f"\nplot: {args.plot}")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
