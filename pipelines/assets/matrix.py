"""Cross-source assets: normalized scores (group `normalize`) and the score matrix (`matrix`)."""

import dagster as dg
import polars as pl

from pipelines.assets.sources import DUCKDB_POOL, scores_key
from pipelines.identity.registry import load_registry
from pipelines.resources import WarehouseResource
from pipelines.sources import SOURCES
from pipelines.stages.normalize import normalize_scores
from pipelines.transforms.matrix import build_matrix
from warehouse.scores import read_table, replace_table


def _markdown(frame: pl.DataFrame, limit: int = 30) -> dg.MetadataValue:
    head = frame.head(limit)
    lines = ["| " + " | ".join(head.columns) + " |", "|" + "---|" * len(head.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in head.iter_rows()]
    if frame.height > limit:
        lines.append(f"\n... {frame.height - limit} more rows")
    return dg.MetadataValue.md("\n".join(lines))


@dg.asset(
    deps=[scores_key(source) for source in SOURCES.values()],
    group_name="normalize",
    pool=DUCKDB_POOL,
    kinds={"duckdb", "polars"},
    description="Every current source row resolved to canonical model/benchmark ids and scales; "
    "unresolved names are kept and counted.",
)
def normalized_scores(warehouse: WarehouseResource) -> dg.MaterializeResult:
    with warehouse.connect() as con:
        per_source = normalize_scores(con, load_registry())
        unresolved = con.execute(
            "SELECT source, resolution, model_key, benchmark_key, count(*) AS n"
            " FROM normalized_scores WHERE resolution <> 'resolved'"
            " GROUP BY ALL ORDER BY n DESC, source, model_key, benchmark_key LIMIT 50"
        ).pl()
    totals = {c: int(per_source[c].sum()) for c in per_source.columns if c != "source"}
    return dg.MaterializeResult(
        metadata={
            "rows_by_resolution": dg.MetadataValue.json(totals),
            "per_source": _markdown(per_source),
            "top_unresolved": _markdown(unresolved),
        }
    )


@dg.asset(
    deps=[normalized_scores],
    group_name="matrix",
    pool=DUCKDB_POOL,
    kinds={"duckdb", "polars"},
    description="One score per (model, benchmark) after the dedup and conflict policy, "
    "with provenance; disagreements over 3 points go to matrix_conflicts.",
)
def score_matrix(warehouse: WarehouseResource) -> dg.MaterializeResult:
    with warehouse.connect() as con:
        cells, conflicts = build_matrix(read_table(con, "normalized_scores"))
        replace_table(con, "matrix_cells", cells)
        replace_table(con, "matrix_conflicts", conflicts)
    by_source = cells.group_by("source").len().sort("source")
    return dg.MaterializeResult(
        metadata={
            "models": cells["model_id"].n_unique(),
            "benchmarks": cells["benchmark_id"].n_unique(),
            "cells": cells.height,
            "conflicts": conflicts.height,
            "cells_by_source": _markdown(by_source),
            "largest_conflicts": _markdown(conflicts.sort("difference", descending=True), 20),
        }
    )
