"""The factorization (group `fit`) and the published snapshot (group `publish`)."""

import json
from datetime import UTC, datetime

import dagster as dg

from pipelines.assets.matrix import score_matrix
from pipelines.assets.sources import DUCKDB_POOL
from pipelines.identity.registry import load_registry
from pipelines.resources import WarehouseResource
from pipelines.settings import fit_params
from pipelines.stages.fit import fit_matrix
from pipelines.stages.snapshot import snapshot_tables, stage_snapshot
from warehouse.scores import read_table
from warehouse.snapshots import publish


@dg.asset(
    deps=[score_matrix],
    group_name="fit",
    pool=DUCKDB_POOL,
    kinds={"numpy", "duckdb"},
    description="Logit bias-ALS rank-2 factorization of the score matrix, staged as the "
    "snapshot it would publish (keyed by content hash).",
)
def factorization(warehouse: WarehouseResource) -> dg.MaterializeResult:
    params = fit_params()
    registry = load_registry()
    scale_of = dict(registry.benchmarks.select("benchmark_id", "scale").iter_rows())
    with warehouse.connect() as con:
        cells = read_table(con, "matrix_cells")
        conflicts = read_table(con, "matrix_conflicts")
        normalized = read_table(con, "normalized_scores")
        fit = fit_matrix(cells, scale_of, params)
        tables = snapshot_tables(normalized, cells, conflicts, registry, fit)
        digest, path = stage_snapshot(tables, warehouse.staging_dir, params, fit.figures)
        con.execute(
            "INSERT OR REPLACE INTO staged_snapshots VALUES (?, ?, ?, ?)",
            [digest, datetime.now(UTC), str(path), json.dumps(fit.figures, sort_keys=True)],
        )
    return dg.MaterializeResult(
        metadata={
            "content_hash": digest,
            **{k: v for k, v in fit.figures.items() if not isinstance(v, list)},
            "singular_values": dg.MetadataValue.json(fit.figures["singular_values"]),
            "fit_params": dg.MetadataValue.json(vars(params)),
        }
    )


@dg.asset(
    deps=[factorization],
    group_name="publish",
    pool=DUCKDB_POOL,
    kinds={"parquet"},
    description="The staged snapshot published as an immutable calendar version, only after "
    "the blocking checks on the matrix and the factorization passed.",
)
def published_snapshot(warehouse: WarehouseResource) -> dg.MaterializeResult:
    with warehouse.connect() as con:
        row = con.execute(
            "SELECT content_hash, path FROM staged_snapshots ORDER BY staged_at DESC LIMIT 1"
        ).fetchone()
    if row is None:
        raise RuntimeError("nothing staged: materialize `factorization` first")
    result = publish(warehouse.staging_dir / row[0], warehouse.store_dir)
    return dg.MaterializeResult(
        metadata={
            "version": result.version,
            "published": result.published,
            "content_hash": result.content_hash,
            "parent": result.parent or "",
            "path": str(result.path),
        }
    )
