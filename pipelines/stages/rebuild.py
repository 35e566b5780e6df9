"""Rebuild the matrix and fit as they would have been at a past moment, from warehouse history.

Every parse is kept with its payloads' fetch time, so the sources' state at any date is known;
the rebuilt snapshot is written to a directory (not published) and loads with
`BenchPress.from_pretrained(path)`.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb

from pipelines.identity.registry import load_registry
from pipelines.identity.resolve import resolve
from pipelines.stages.fit import FitParams, fit_matrix
from pipelines.stages.snapshot import snapshot_tables
from pipelines.transforms.matrix import build_matrix
from warehouse.scores import current_source_scores
from warehouse.snapshots import stage


def rebuild_as_of(
    con: duckdb.DuckDBPyConnection, as_of: datetime, out_dir: Path, params: FitParams
) -> tuple[str, Path]:
    scores = current_source_scores(con, as_of)
    if scores.height == 0:
        raise ValueError(f"nothing had been fetched by {as_of.isoformat()}")
    registry = load_registry()
    normalized = resolve(scores, registry)
    cells, conflicts = build_matrix(normalized)
    scale_of = dict(registry.benchmarks.select("benchmark_id", "scale").iter_rows())
    fit = fit_matrix(cells, scale_of, params)
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
    }
    return stage(tables, out_dir, facts)
