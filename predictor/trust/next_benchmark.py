"""What to run next: the unobserved benchmark whose score would narrow the targets' intervals
most, per unit cost.

For a new model with known scores, every unobserved benchmark c is tried as an extra probe
with its *predicted* score plugged in (the expected value of running it); the model is folded
in again (`fold_in_interval`, no refit) and the targets' interval widths are compared with the
widths before (a target that is c itself drops to width 0). Targets mix units (percent points,
Elo), so the ranking uses the relative reduction: the mean over targets of
1 - width_after / width_before (0 = no help, 1 = every target pinned), divided by c's cost.
`width_before` / `width_after` report the mean widths in original units for reading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from predictor.trust.costs import MIN_COST_REPORTS, resolve_costs
from predictor.trust.profiles import resolve_targets


def _categories(bp) -> dict[str, str | None]:
    table = bp.snapshot.benchmarks
    if "category" not in table.columns:
        return {}
    return dict(table.select("benchmark_id", "category").iter_rows())


def _run_costs(bp) -> dict[str, float | None]:
    """Median USD per run from the sources, where enough runs report one (MIN_COST_REPORTS:
    a median over a handful of runs says more about which models ran it than about it)."""
    table = bp.snapshot.benchmarks
    if "run_cost_usd" not in table.columns:  # snapshots published before cost facts
        return {}
    enough = table.filter(pl.col("run_cost_reports") >= MIN_COST_REPORTS)
    return dict(enough.select("benchmark_id", "run_cost_usd").iter_rows())


def benchmark_costs(bp, costs: Mapping[str, float] | None = None) -> np.ndarray:
    """Cost per fitted benchmark of `bp`: the sources' run costs where the snapshot has them,
    else documented defaults; `costs` overrides both (see `predictor.trust.costs`)."""
    return resolve_costs(bp.fit_benchmarks_, costs, _categories(bp), _run_costs(bp))


def what_to_run_next(
    bp,
    known_scores: Mapping[str, float],
    targets: str | Sequence[str] | None = None,
    budget: float | None = None,
    top: int = 5,
    level: float = 0.9,
    costs: Mapping[str, float] | None = None,
) -> pl.DataFrame:
    """Unobserved benchmarks ranked by expected target-width reduction per unit cost.

    `targets`: a profile name, a list, or None (every benchmark not yet known). Candidates
    costing more than `budget` are left out. Columns: rank, benchmark, cost, predicted,
    width_before, width_after (mean widths, original units), reduction (mean relative
    width reduction), reduction_per_cost.
    """
    row = bp._probe_row(known_scores)
    comp = bp.completer_
    names = bp.fit_benchmarks_
    chosen = resolve_targets(targets, names, bp.resolve_benchmark)
    known = ~np.isnan(row)
    tcols = np.flatnonzero(~known) if chosen is None else np.array([bp._column[t] for t in chosen])
    tcols = tcols[~known[tcols]]
    if len(tcols) == 0:
        raise ValueError("every target is already known: nothing left to predict")
    cost = benchmark_costs(bp, costs)
    mean = comp.fold_in(row)
    low, high = comp.fold_in_interval(row, level=level)
    width0 = high[tcols] - low[tcols]
    before = float(np.mean(width0))
    rows = []
    for c in np.flatnonzero(~known):
        if budget is not None and cost[c] > budget + 1e-12:
            continue
        trial = row.copy()
        trial[c] = mean[c]
        lo, hi = comp.fold_in_interval(trial, level=level)
        width1 = np.where(tcols == c, 0.0, hi[tcols] - lo[tcols])
        after = float(np.mean(width1))
        rel = float(np.mean(1.0 - width1 / np.maximum(width0, 1e-12)))
        rows.append(
            {
                "benchmark": names[c],
                "cost": float(cost[c]),
                "predicted": float(mean[c]),
                "width_before": before,
                "width_after": after,
                "reduction": rel,
                "reduction_per_cost": rel / float(cost[c]),
            }
        )
    schema = {
        "rank": pl.Int64,
        "benchmark": pl.String,
        "cost": pl.Float64,
        "predicted": pl.Float64,
        "width_before": pl.Float64,
        "width_after": pl.Float64,
        "reduction": pl.Float64,
        "reduction_per_cost": pl.Float64,
    }
    if not rows:
        return pl.DataFrame(schema=schema)
    frame = (
        pl.DataFrame(rows)
        .sort(["reduction_per_cost", "benchmark"], descending=[True, False])
        .head(top)
    )
    return frame.with_columns(pl.int_range(1, frame.height + 1).alias("rank")).select(list(schema))
