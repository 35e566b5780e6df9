"""Resolve every current source row to canonical ids and scales (kept even when unresolved)."""

from __future__ import annotations

import duckdb
import polars as pl

from pipelines.identity.registry import Registry
from pipelines.identity.resolve import RESOLUTIONS, resolve, summarise
from warehouse.scores import current_source_scores, read_table, replace_table


def normalize_scores(con: duckdb.DuckDBPyConnection, registry: Registry) -> pl.DataFrame:
    """Rebuild normalized_scores; returns the per-source row counts by resolution."""
    normalized = resolve(current_source_scores(con), registry)
    replace_table(con, "normalized_scores", normalized)
    counts = (
        normalized.group_by("source", "resolution")
        .len()
        .pivot(on="resolution", index="source", values="len")
        .fill_null(0)
    )
    missing = [r for r in RESOLUTIONS if r not in counts.columns]
    counts = counts.with_columns(pl.lit(0, pl.UInt32).alias(r) for r in missing)
    return counts.select("source", *RESOLUTIONS).sort("source")


def resolution_summary(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per source: rows by resolution, resolution rate, unresolved share (for metadata/checks)."""
    return summarise(read_table(con, "normalized_scores"))


def unresolved_names(con: duckdb.DuckDBPyConnection, limit: int = 50) -> pl.DataFrame:
    """The most frequent names that stayed unresolved, with the reason (asset metadata)."""
    return con.execute(
        "SELECT source, resolution, coalesce(model_key, '') AS model_key,"
        " coalesce(benchmark_key, '') AS benchmark_key, any_value(note) AS reason, count(*) AS n"
        " FROM normalized_scores WHERE resolution IN ('unresolved_model', 'unresolved_benchmark')"
        " GROUP BY ALL ORDER BY n DESC, source, model_key, benchmark_key LIMIT ?",
        [limit],
    ).pl()
