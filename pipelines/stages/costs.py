"""What running a benchmark costs, from the facts leaderboards publish next to their scores.

Aider reports the USD cost of each whole run (`total_cost`), SWE-bench the USD cost of each
submission (`cost`), ARC Prize the USD cost per task (`costPerTask`; ARC-AGI-3 a total `cost`).
The parsers keep these in each row's `extra` JSON (the sources with `run_costs` set). Per
benchmark the median over the runs that report a positive cost is published in the snapshot's
benchmark table (`run_cost_usd`, with `run_cost_reports` runs behind it); the predictor turns it
into the probe-selection cost (`predictor.trust.costs`). Zero means "free or unknown" in these
sources and is left out.
"""

from __future__ import annotations

import polars as pl

from pipelines.sources import RUN_COST_SOURCES

# Tasks in one full run of the ARC Prize evaluation sets (ARC Prize's published set sizes):
# per-task costs times these give a run's cost.
ARC_TASKS_PER_RUN: dict[str, int] = {
    "arc_agi_1": 100,  # semi-private evaluation set
    "arc_agi_1_public": 400,  # public evaluation set
    "arc_agi_2": 120,  # semi-private evaluation set
    "arc_agi_2_private": 120,
    "arc_agi_2_public": 120,
}

RUN_COST_SCHEMA = {
    "benchmark_id": pl.String,
    "run_cost_usd": pl.Float64,
    "run_cost_reports": pl.Int32,
}


def _number(key: str) -> pl.Expr:
    value = pl.col("extra").str.json_path_match(f"$.{key}").cast(pl.Float64, strict=False)
    return pl.when(value.is_finite() & (value > 0)).then(value)


def run_cost_facts(normalized: pl.DataFrame) -> pl.DataFrame:
    """Median USD per full run of each benchmark whose source reports run costs."""
    rows = normalized.filter(
        (pl.col("resolution") == "resolved")
        & pl.col("benchmark_id").is_not_null()
        & pl.col("extra").is_not_null()
        & pl.col("source").is_in(list(RUN_COST_SOURCES))
    )
    if rows.is_empty():
        return pl.DataFrame(schema=RUN_COST_SCHEMA)
    tasks = pl.col("benchmark_id").replace_strict(ARC_TASKS_PER_RUN, default=None)
    # a run's cost, else (ARC Prize) its cost per task times the set's tasks
    per_run = pl.coalesce(_number("cost"), _number("cost_per_task") * tasks)
    return (
        rows.select("benchmark_id", per_run.alias("usd"))
        .drop_nulls("usd")
        .group_by("benchmark_id")
        .agg(
            pl.col("usd").median().alias("run_cost_usd"),
            pl.len().cast(pl.Int32).alias("run_cost_reports"),
        )
        .sort("benchmark_id")
        .cast(RUN_COST_SCHEMA)
    )
