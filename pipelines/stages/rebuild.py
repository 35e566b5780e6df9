"""Rebuild the matrix and fit as they would have been at a past moment, from warehouse history.

Every parse is kept with its payloads' fetch time, so the sources' state at any date is known;
the rebuilt snapshot is written to a directory (not published) and loads with
`BenchPress.from_pretrained(path)`.

On the shared DuckLake warehouse the tables are first read as they were at that moment, from
the lake's own snapshot (time travel): what was written later, even rows dated earlier (a
backfill, a late import), stays out. A moment before the lake's first snapshot falls back to
the fetch times alone, as on the local file.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl

from pipelines.identity.registry import load_registry
from pipelines.identity.resolve import resolve
from pipelines.stages.fit import FitParams, fit_matrix
from pipelines.stages.side_information import stated_dates
from pipelines.stages.snapshot import snapshot_tables
from pipelines.transforms.matrix import build_matrix
from warehouse.ducklake import as_of_snapshot, lake_of, snapshot_at
from warehouse.scores import current_source_scores
from warehouse.snapshots import stage


def held_then(
    con: duckdb.DuckDBPyConnection,
    scores: pl.DataFrame,
    cells: pl.DataFrame,
    as_of: datetime,
    params: FitParams,
) -> str:
    """What the warehouse held at `as_of`, and from when each source's data dates: why a fit
    was impossible then, and which later date to try."""
    sources = sorted(set(scores["source"].to_list()))
    per_model = cells.group_by("model_id").len()["len"].max() if cells.height else 0
    per_bench = cells.group_by("benchmark_id").len()["len"].max() if cells.height else 0
    first = con.execute(
        "SELECT source, min(fetched_at) FROM raw_payloads GROUP BY 1 ORDER BY 2, 1"
    ).fetchall()
    since = ", ".join(f"{source} {when.date().isoformat()}" for source, when in first)
    return (
        f"as of {as_of.date().isoformat()} the warehouse held {scores.height:,} scores from "
        f"{len(sources)} source(s) ({', '.join(sources)}): "
        f"{cells['model_id'].n_unique() if cells.height else 0:,} models x "
        f"{cells['benchmark_id'].n_unique() if cells.height else 0:,} benchmarks, "
        f"{cells.height:,} cells; the best-covered model had {per_model} scores (the fit needs "
        f"{params.min_per_model}), the best-covered benchmark {per_bench} models (needs "
        f"{params.min_per_benchmark}); first data per source: {since}: try a later --as-of"
    )


def rebuild_as_of(
    con: duckdb.DuckDBPyConnection, as_of: datetime, out_dir: Path, params: FitParams
) -> tuple[str, Path]:
    """Stage the snapshot the refresh would have made at `as_of` into `out_dir`."""
    then = snapshot_at(con, as_of) if lake_of(con) is not None else None
    if then is None:
        return _rebuild(con, as_of, out_dir, params, {})
    snapshot_id, committed_at = then
    with as_of_snapshot(con, snapshot_id):
        lake = {"id": snapshot_id, "committed_at": committed_at.isoformat()}
        return _rebuild(con, as_of, out_dir, params, {"ducklake_snapshot": lake})


def _rebuild(
    con: duckdb.DuckDBPyConnection,
    as_of: datetime,
    out_dir: Path,
    params: FitParams,
    read_from: dict[str, object],
) -> tuple[str, Path]:
    scores = current_source_scores(con, as_of)
    if scores.height == 0:
        raise ValueError(f"nothing had been fetched by {as_of.isoformat()}")
    registry = load_registry()
    normalized = resolve(scores, registry)
    cells, conflicts = build_matrix(normalized)
    scale_of = dict(registry.benchmarks.select("benchmark_id", "scale").iter_rows())
    try:
        fit = fit_matrix(cells, scale_of, params, registry, stated_dates(normalized))
    except ValueError as exc:
        raise ValueError(f"{exc}; {held_then(con, scores, cells, as_of, params)}") from None
    tables = snapshot_tables(normalized, cells, conflicts, registry, fit)
    facts = {
        "as_of": as_of.isoformat(),
        "counts": {
            "models": tables.models.height,
            "benchmarks": tables.benchmarks.height,
            "cells": tables.cells.height,
        },
        "fit_params": vars(params),
        "quality": fit.figures,
        "version": f"as-of-{as_of.date().isoformat()}",
        **read_from,  # the lake snapshot read, on the DuckLake warehouse
    }
    return stage(tables, out_dir, facts)
