"""Cross-source assets: normalized scores (group `normalize`) and the score matrix (`matrix`)."""

import dagster as dg
import polars as pl

from pipelines.assets.sources import scores_key
from pipelines.crash_hook import crash_point
from pipelines.identity.registry import load_registry
from pipelines.resources import DUCKDB_POOL, WarehouseResource
from pipelines.sources import SOURCES
from pipelines.stages.normalize import normalize_scores, resolution_summary, unresolved_names
from pipelines.stages.quality import frame_markdown
from pipelines.transforms.matrix import build_matrix
from warehouse.scores import read_table, replace_table


def _markdown(frame: pl.DataFrame, limit: int = 30) -> dg.MetadataValue:
    return dg.MetadataValue.md(frame_markdown(frame, limit))


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
        summary = resolution_summary(con)
        unresolved = unresolved_names(con, limit=50)
        routes = con.execute(
            "SELECT model_route, count(*) AS n FROM normalized_scores GROUP BY 1 ORDER BY 1"
        ).fetchall()
    crash_point("normalized_scores")
    totals = {c: int(per_source[c].sum()) for c in per_source.columns if c != "source"}
    return dg.MaterializeResult(
        metadata={
            "rows_by_resolution": dg.MetadataValue.json(totals),
            "model_routes": dg.MetadataValue.json({r: int(n) for r, n in routes}),
            "per_source": _markdown(
                summary.select(
                    "source",
                    "rows",
                    "resolved",
                    "unresolved_model",
                    "unresolved_benchmark",
                    "excluded",
                    "rejected",
                    "resolution_rate",
                    "unresolved_share",
                ),
                limit=20,
            ),
            "top_unresolved": _markdown(unresolved, limit=50),
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
    crash_point("score_matrix")
    by_source = cells.group_by("source").len(name="cells").sort("source")
    return dg.MaterializeResult(
        metadata={
            "models": cells["model_id"].n_unique(),
            "benchmarks": cells["benchmark_id"].n_unique(),
            "cells": cells.height,
            "conflicts": conflicts.height,
            "cells_by_source": _markdown(by_source),
            "largest_conflicts": _markdown(
                conflicts.sort("difference", descending=True).select(
                    "model_id",
                    "benchmark_id",
                    "chosen_score",
                    "chosen_source",
                    "other_score",
                    "other_source",
                    "other_model_key",
                    "other_agent",
                    "difference",
                ),
                20,
            ),
        }
    )
