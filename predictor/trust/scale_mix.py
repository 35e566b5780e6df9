"""Percent columns that mix two scales: fractions (or distances) of 1 beside 0-100 percents.

A source that publishes one column in two spellings (0.89 and 89, or an edit distance 0.11 beside
its 100 x (1 - d)) gives a column no per-cell check catches: every value is inside 0-100. Its
signature is a gap: some scores lie in (0, 1], the rest start `MIN_GAP` times higher, with
nothing between, and the models on the two sides are alike. A hard benchmark's real low scores
(0.4, 0.8, 1.3, 2.0, ...) run on without such a gap; where 1B models score 0.3-1% on AIME and
the rest 20% and up, the low side is made of much weaker models (their standing on the other
benchmarks says so), so that is no mix. Zeros are not fraction-looking (a model can score 0 on
any scale).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

MIN_GAP = 20.0  # smallest percent-looking score / largest fraction-looking score
# How much weaker (median standing, 0-1) the fraction-looking side may be and still count as a
# mix: a split by model strength is a hard benchmark, not two scales.
MAX_STANDING_DROP = 0.25
_SCHEMA = {
    "benchmark_id": pl.String,
    "n_fraction": pl.UInt32,
    "fraction_max": pl.Float64,
    "n_percent": pl.UInt32,
    "percent_min": pl.Float64,
    "minority": pl.String,
}


def standing_elsewhere(
    cells: pl.DataFrame, direction_of: Mapping[str, str] | None = None
) -> pl.DataFrame:
    """Each cell with its model's mean percentile (0 worst .. 1 best) over the model's *other*
    benchmarks (`standing`; null when it has no other), so a column is judged by the rest."""
    direction_of = direction_of or {}
    lower = [b for b, d in direction_of.items() if d == "lower"]
    signed = pl.when(pl.col("benchmark_id").is_in(lower)).then(-pl.col("score"))
    pct = (pl.col("_s").rank("average").over("benchmark_id") - 0.5) / pl.len().over("benchmark_id")
    ranked = cells.with_columns(signed.otherwise(pl.col("score")).alias("_s")).with_columns(
        pct.alias("_pct")
    )
    total, count = pl.col("_pct").sum().over("model_id"), pl.len().over("model_id")
    others = pl.when(count > 1).then((total - pl.col("_pct")) / (count - 1))
    return ranked.with_columns(others.alias("standing")).drop("_s", "_pct")


def mixed_scale_columns(
    cells: pl.DataFrame,
    scale_of: Mapping[str, str],
    direction_of: Mapping[str, str] | None = None,
    min_each: int = 1,
    min_gap: float = MIN_GAP,
) -> pl.DataFrame:
    """Percent benchmarks whose scores split into (0, 1] and >= `min_gap` x that, with at least
    `min_each` scores on each side and the fraction side's models not much weaker (median
    standing within MAX_STANDING_DROP); `minority` names the smaller group (the likely slip)."""
    percent = [b for b, scale in scale_of.items() if scale == "percent"]
    score = pl.col("score")
    is_fraction = (score > 0) & (score <= 1.0)
    groups = (
        standing_elsewhere(cells, direction_of)
        .filter(pl.col("benchmark_id").is_in(percent) & (score > 0))
        .group_by("benchmark_id")
        .agg(
            is_fraction.sum().alias("n_fraction"),
            score.filter(is_fraction).max().alias("fraction_max"),
            (~is_fraction).sum().alias("n_percent"),
            score.filter(~is_fraction).min().alias("percent_min"),
            pl.col("standing").filter(is_fraction).median().alias("_low_side"),
            pl.col("standing").filter(~is_fraction).median().alias("_high_side"),
        )
    )
    mixed = groups.filter(
        (pl.col("n_fraction") >= min_each)
        & (pl.col("n_percent") >= min_each)
        & (pl.col("percent_min") >= min_gap * pl.col("fraction_max"))
        & (pl.col("_low_side") >= pl.col("_high_side") - MAX_STANDING_DROP)
    ).with_columns(
        pl.when(pl.col("n_percent") < pl.col("n_fraction"))
        .then(pl.lit("percent"))
        .otherwise(pl.lit("fraction"))
        .alias("minority")
    )
    return mixed.select(list(_SCHEMA)).cast(_SCHEMA).sort("benchmark_id")


def describe(row: Mapping[str, object]) -> str:
    """One line for a mixed column, e.g. for a failed publish check."""
    return (
        f"{row['benchmark_id']} mixes scales: {row['n_fraction']} scores in (0, "
        f"{row['fraction_max']:g}] beside {row['n_percent']} from {row['percent_min']:g} up "
        "(fractions or distances among percents)"
    )


def mixed_scale_cells(
    cells: pl.DataFrame,
    scale_of: Mapping[str, str],
    direction_of: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """The minority cells of every mixed column: model_id, benchmark_id, observed."""
    columns = mixed_scale_columns(cells, scale_of, direction_of)
    if columns.is_empty():
        return pl.DataFrame(
            schema={"model_id": pl.String, "benchmark_id": pl.String, "observed": pl.Float64}
        )
    score = pl.col("score")
    fraction = (score > 0) & (score <= 1.0)
    picked = cells.join(columns.select("benchmark_id", "minority"), on="benchmark_id").filter(
        pl.when(pl.col("minority") == "fraction").then(fraction).otherwise(score > 1.0)
    )
    return (
        picked.select("model_id", "benchmark_id", score.alias("observed"))
        .unique(["model_id", "benchmark_id"], keep="first", maintain_order=True)
        .sort("benchmark_id", "model_id")
    )
