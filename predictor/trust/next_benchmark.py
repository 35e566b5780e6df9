"""What to run next: the unobserved benchmark whose score would narrow the targets' intervals
most, per unit cost.

For a new model with known scores, every unobserved benchmark c is tried as an extra probe
with its *predicted* score plugged in (the expected value of running it); the model is folded
in again (`fold_in_interval`, no refit) and the targets' interval widths are compared with the
widths before (a target that is c itself drops to width 0). Targets mix units (percent points,
Elo), so the ranking uses the relative reduction: the mean over targets of
1 - width_after / width_before (0 = no help, 1 = every target pinned), divided by c's cost.
`width_before` / `width_after` report mean widths for reading, in points over the
percent-scale targets (averaging points with Elo would mean nothing; over all targets, in their
units, when none is a percentage).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from predictor.fitted_matrix import FittedMatrix
from predictor.harnesses import get_harness, harnesses, task_columns
from predictor.trust.costs import (
    MIN_COST_REPORTS,
    NOT_RUNNABLE,
    BudgetError,
    resolve_costs,
    tool_runs,
)
from predictor.trust.profiles import resolve_targets


def _categories(bp: FittedMatrix) -> dict[str, str | None]:
    table = bp.snapshot.benchmarks
    if "category" not in table.columns:
        return {}
    return dict(table.select("benchmark_id", "category").iter_rows())


def _run_costs(bp: FittedMatrix) -> dict[str, float | None]:
    """Median USD per run from the sources, where enough runs report one (MIN_COST_REPORTS:
    a median over a handful of runs says more about which models ran it than about it)."""
    table = bp.snapshot.benchmarks
    if "run_cost_usd" not in table.columns:  # snapshots published before cost facts
        return {}
    enough = table.filter(pl.col("run_cost_reports") >= MIN_COST_REPORTS)
    return dict(enough.select("benchmark_id", "run_cost_usd").iter_rows())


def benchmark_costs(bp: FittedMatrix, costs: Mapping[str, float] | None = None) -> np.ndarray:
    """Cost per fitted benchmark of `bp`: the sources' run costs where the snapshot has them,
    else documented defaults; `costs` overrides both, its keys resolved like any benchmark
    name (see `predictor.trust.costs`)."""
    return resolve_costs(
        bp.fit_benchmarks_, costs, _categories(bp), _run_costs(bp), bp.resolve_benchmark
    )


def _check_top(top: int | None) -> None:
    """`top` rows: a positive int, or None for every candidate (polars' head(-1) would
    silently drop the last row instead)."""
    if top is None:
        return
    if isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1:
        raise ValueError(f"top must be a positive integer or None (every row), got {top!r}")


def _check_budget(
    budget: float | None, cost: np.ndarray, names: Sequence[str], pool: np.ndarray
) -> None:
    """Same rule as `select_probes`: a budget is > 0 and affords at least one candidate
    (otherwise the answer would be an empty table that looks like 'nothing helps')."""
    if budget is None:
        return
    if not budget > 0:
        raise BudgetError(f"budget must be > 0, got {budget}")
    if len(pool) and cost[pool].min() > budget + 1e-12:
        cheapest = int(pool[np.argmin(cost[pool])])
        raise BudgetError(
            f"budget {budget:g} is below the cheapest unobserved benchmark "
            f"({names[cheapest]}, cost {cost[cheapest]:g}); raise the budget"
        )


def _label(runnable: str) -> str:
    """How the tables name harness `runnable` (`lm-eval`)."""
    return get_harness(runnable, "runnable").label


def _can_run(bp: FittedMatrix, runnable: str | None, chat: bool) -> np.ndarray:
    """Per fitted benchmark: one the team can run (not `NOT_RUNNABLE`) and, with `runnable`,
    one that tool has a task for that does not run the model's code (`costs.tool_runs`, as
    `probes.runnable_benchmarks` offers them)."""
    tool = None if runnable is None else tool_runs(runnable, chat)
    return np.array(
        [b not in NOT_RUNNABLE and (tool is None or b in tool) for b in bp.fit_benchmarks_],
        dtype=bool,
    )


def what_to_run_next(
    bp: FittedMatrix,
    known_scores: Mapping[str, float | tuple[float, float]],
    targets: str | Sequence[str] | None = None,
    budget: float | None = None,
    top: int | None = 5,
    level: float = 0.9,
    costs: Mapping[str, float] | None = None,
    *,
    model: str | None = None,
    family: str | None = None,
    release_date: str | None = None,
    base: str | None = None,
    runnable: str | None = None,
    chat: bool = False,
    convert_fractions: bool = True,
) -> pl.DataFrame:
    """Unobserved benchmarks ranked by expected target-width reduction per unit cost (those a
    team can run: not `costs.NOT_RUNNABLE`; they can still be targets).

    `runnable` (`"lm_eval"`, `"inspect"`, a harness of `predictor.harnesses`): only the
    benchmarks that tool has a task for, as `select_probes(runnable=)` chooses them (`chat`:
    a task a chat endpoint runs; never one scored by running the model's code), so every row
    is something `benchpress run` can run. Targets are not limited.

    `targets`: a profile name, a list, or None (every benchmark not yet known). Candidates
    costing more than `budget` (> 0) are left out; `top` rows are kept (a positive int, or
    None for all). Columns: rank, benchmark, cost, predicted, width_before, width_after
    (mean widths in points over the percent targets; see the module docstring), reduction
    (mean relative width reduction over every target),
    reduction_per_cost, and a task column per harness, lm_eval_task and inspect_task (the
    tool task that runs the benchmark, None when none is known; `predictor.harnesses`).
    `model`, `family`,
    `release_date` and `base`: the model's side information, and `convert_fractions`, as in
    `BenchPress.predict`.
    """
    _check_top(top)
    row, stderr = bp.probe_rows(known_scores, warn_fractions=convert_fractions)
    _, features, group = bp.side_for(model, family, release_date, base)
    side = {"features": features, "group": group}
    noise = bp.fold_in_noise(row, stderr)  # known scores noisier than published ones
    if noise is not None:
        side["noise_sd"] = noise
    comp = bp.completer_
    names = bp.fit_benchmarks_
    chosen = resolve_targets(targets, names, bp.resolve_benchmark)
    known = ~np.isnan(row)
    tcols = (
        np.flatnonzero(~known) if chosen is None else np.array([bp.fit_columns[t] for t in chosen])
    )
    tcols = tcols[~known[tcols]]
    if len(tcols) == 0:
        raise ValueError("every target is already known: nothing left to predict")
    cost = benchmark_costs(bp, costs)
    can_run = _can_run(bp, runnable, chat)
    pool = np.flatnonzero(~known & can_run)  # what the team could run next
    if runnable is not None and len(pool) == 0:
        raise ValueError(
            f"no unobserved benchmark of snapshot {bp.version} has a task "
            f"{_label(runnable)} can run: every one it runs is known already"
        )
    _check_budget(budget, cost, names, pool)
    mean = bp.in_range(comp.fold_in(row, **side))
    low, high = (bp.in_range(a) for a in comp.fold_in_interval(row, level=level, **side))
    width0 = high[tcols] - low[tcols]
    percent = np.array([bp.scale_of(names[t]) == "percent" for t in tcols])
    shown = percent if percent.any() else np.ones(len(tcols), dtype=bool)  # width columns
    before = float(np.mean(width0[shown]))
    rows = []
    for c in pool:
        if budget is not None and cost[c] > budget + 1e-12:
            continue
        trial = row.copy()
        trial[c] = mean[c]
        lo, hi = (bp.in_range(a) for a in comp.fold_in_interval(trial, level=level, **side))
        width1 = np.where(tcols == c, 0.0, hi[tcols] - lo[tcols])
        after = float(np.mean(width1[shown]))
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
        **dict.fromkeys((h.task_column for h in harnesses()), pl.String),
    }
    if not rows:
        return pl.DataFrame(schema=schema)
    frame = pl.DataFrame(rows).sort(["reduction_per_cost", "benchmark"], descending=[True, False])
    frame = frame if top is None else frame.head(top)
    tasks = task_columns(frame["benchmark"].to_list())
    return frame.with_columns(
        pl.int_range(1, frame.height + 1).alias("rank"),
        *(pl.Series(name, values, dtype=pl.String) for name, values in tasks.items()),
    ).select(list(schema))
