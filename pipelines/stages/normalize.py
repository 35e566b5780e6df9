"""Resolve every current source row to canonical ids and scales (kept even when unresolved)."""

from __future__ import annotations

import duckdb
import polars as pl

from pipelines.identity.registry import Registry
from pipelines.identity.resolve import resolve
from warehouse.scores import current_source_scores, replace_table


def normalize_scores(con: duckdb.DuckDBPyConnection, registry: Registry) -> pl.DataFrame:
    """Rebuild normalized_scores; returns the per-source resolution counts."""
    normalized = resolve(current_source_scores(con), registry)
    replace_table(con, "normalized_scores", normalized)
    return (
        normalized.group_by("source", "resolution")
        .len()
        .pivot(on="resolution", index="source", values="len")
        .fill_null(0)
        .sort("source")
    )
