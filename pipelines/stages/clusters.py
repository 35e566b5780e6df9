"""Benchmark columns whose cells split into separate clusters by where they came from.

One column can hold two metrics with every value in range, so no per-cell check sees it: the
BenchPress matrix's `longfact_concepts` held OpenAI's hallucination rates (0.7 to 8.9, lower is
better) beside the Seed 2.0 model card's higher-is-better score (92.8 to 99.7). Its signature:
the column's widest gap splits it into two groups of at least `MIN_EACH` cells, the gap is at
least `MIN_GAP_RATIO` times the wider group's own spread (and `MIN_GAP_POINTS` on a percent
column), and no origin has cells on both sides. An origin is a source, or for a source that
cites a document per cell (the BenchPress matrix's `citation_url`) that document: one
leaderboard that scored strong and weak models alike is one origin, so a hard benchmark's real
gap between them is no split.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

MIN_EACH = 2  # cells on each side of the gap
MIN_GAP_RATIO = 4.0  # gap / the wider side's spread (LongFact: 10.8 and 12.7; others <= 1.6)
MIN_GAP_POINTS = 20.0  # on a percent column
SPREAD_FLOOR_SHARE = 0.02  # of the column's range: two equal cells do not make the spread 0
ALLOW_ENV = "BENCHPRESS_ALLOW_SPLIT_BENCHMARKS"  # reviewed columns that are one metric

ORIGIN_KEYS = ("source", "payload_url", "payload_sha256", "row_ref")
_SCHEMA = {
    "benchmark_id": pl.String,
    "n_low": pl.Int64,
    "low_min": pl.Float64,
    "low_max": pl.Float64,
    "low_origins": pl.List(pl.String),
    "n_high": pl.Int64,
    "high_min": pl.Float64,
    "high_max": pl.Float64,
    "high_origins": pl.List(pl.String),
    "gap": pl.Float64,
    "gap_ratio": pl.Float64,
}


def cell_origins(cells: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """`cells` with `origin`: the row's source, and the document it cites where it cites one
    (`extra.citation_url` of the parsed row the cell was taken from, matched on source, payload
    and row reference)."""
    keys = [k for k in ORIGIN_KEYS if k in cells.columns and k in rows.columns]
    cited = rows.select(
        *keys, pl.col("extra").str.json_path_match("$.citation_url").alias("_citation")
    ).unique(subset=keys, keep="first")
    joined = cells.join(cited, on=keys, how="left", nulls_equal=True)
    origin = pl.when(pl.col("_citation").is_not_null())
    origin = origin.then(pl.format("{}: {}", "source", "_citation")).otherwise(pl.col("source"))
    return joined.with_columns(origin.alias("origin")).drop("_citation")


def _widest_split(scores: np.ndarray) -> int | None:
    """Index of the last cell below the widest gap of sorted `scores` (None: too few cells)."""
    if len(scores) < 2 * MIN_EACH:
        return None
    gaps = np.diff(scores)[MIN_EACH - 1 : len(scores) - MIN_EACH]
    return int(np.argmax(gaps)) + MIN_EACH - 1


def split_columns(
    cells: pl.DataFrame, scale_of: Mapping[str, str], allowed: frozenset[str] = frozenset()
) -> pl.DataFrame:
    """Benchmarks whose cells (model_id, benchmark_id, score, origin) form two clusters from
    disjoint origins; one row per benchmark with both sides' counts, ranges and origins."""
    found = []
    for (benchmark,), column in cells.sort("benchmark_id", "score", "origin").group_by(
        "benchmark_id", maintain_order=True
    ):
        if benchmark in allowed:
            continue
        scores = column["score"].to_numpy()
        k = _widest_split(scores)
        if k is None:
            continue
        low, high = scores[: k + 1], scores[k + 1 :]
        gap = float(high[0] - low[-1])
        floor = SPREAD_FLOOR_SHARE * float(scores[-1] - scores[0])
        spread = max(float(np.ptp(low)), float(np.ptp(high)), floor)
        origins = column["origin"].to_list()
        low_origins, high_origins = set(origins[: k + 1]), set(origins[k + 1 :])
        wide_enough = scale_of.get(str(benchmark)) != "percent" or gap >= MIN_GAP_POINTS
        if gap < MIN_GAP_RATIO * spread or not wide_enough or low_origins & high_origins:
            continue
        found.append(
            {
                "benchmark_id": benchmark,
                "n_low": len(low),
                "low_min": float(low[0]),
                "low_max": float(low[-1]),
                "low_origins": sorted(low_origins),
                "n_high": len(high),
                "high_min": float(high[0]),
                "high_max": float(high[-1]),
                "high_origins": sorted(high_origins),
                "gap": round(gap, 6),
                "gap_ratio": round(gap / spread, 2),
            }
        )
    return pl.DataFrame(found, schema=_SCHEMA)


def _origins(names: list[str], shown: int = 2) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return "; ".join(names[:shown]) + more


def describe(row: Mapping[str, object]) -> str:
    """One line an operator can act on."""
    return (
        f"benchmark {row['benchmark_id']} holds two separate clusters from different origins: "
        f"{row['n_low']} cells {row['low_min']:g} to {row['low_max']:g} "
        f"({_origins(row['low_origins'])}) and {row['n_high']} cells {row['high_min']:g} to "
        f"{row['high_max']:g} ({_origins(row['high_origins'])}), a gap of {row['gap']:g} = "
        f"{row['gap_ratio']:g} x the wider group's spread (flagged from {MIN_GAP_RATIO:g} x): "
        "likely two metrics in one column; give one of them its own benchmark id in its "
        f"source's parser, or list the benchmark in {ALLOW_ENV} once reviewed as one metric"
    )


def allowed_benchmarks(text: str) -> frozenset[str]:
    """`BENCHPRESS_ALLOW_SPLIT_BENCHMARKS`: comma-separated benchmark ids."""
    return frozenset(part.strip() for part in text.split(",") if part.strip())


def cluster_problems(
    cells: pl.DataFrame,
    rows: pl.DataFrame,
    scale_of: Mapping[str, str],
    allowed: frozenset[str] = frozenset(),
) -> tuple[list[str], pl.DataFrame]:
    """(one line per split column, the split columns) of a matrix's cells, their origins read
    from the parsed rows they came from (`normalized_scores`)."""
    split = split_columns(cell_origins(cells, rows), scale_of, allowed)
    return [describe(row) for row in split.iter_rows(named=True)], split
