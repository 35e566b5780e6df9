"""The factorization (group `fit`) and the published snapshot (group `publish`)."""

import json
import os
from datetime import UTC, datetime

import dagster as dg

from pipelines.assets.matrix import score_matrix
from pipelines.assets.sources import DUCKDB_POOL
from pipelines.crash_hook import crash_point
from pipelines.identity.registry import load_registry
from pipelines.resources import PublishGateResource, WarehouseResource
from pipelines.settings import fit_params, parse_accepted
from pipelines.stages.figures import fit_figures_and_plots, staged_drift, suspicious_summary
from pipelines.stages.fit import fit_matrix
from pipelines.stages.snapshot import snapshot_tables, stage_snapshot
from warehouse.remote import sync_store
from warehouse.scores import read_table
from warehouse.snapshots import publish
from warehouse.status import source_status

PUBLISH_URI_ENV = "BENCHPRESS_PUBLISH_URI"  # e.g. s3://bucket/benchpress/snapshots


@dg.asset(
    deps=[score_matrix],
    group_name="fit",
    pool=DUCKDB_POOL,
    kinds={"numpy", "duckdb"},
    description="Logit bias-ALS rank-2 factorization of the score matrix, staged as the "
    "snapshot it would publish (keyed by content hash), with structure, error and drift "
    "figures against the last published snapshot.",
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
    figures, plots = fit_figures_and_plots(fit, params)
    tables = snapshot_tables(normalized, cells, conflicts, registry, fit)
    suspicious, suspicious_table = suspicious_summary(tables.residuals)
    figures.update(suspicious)
    digest, path = stage_snapshot(tables, warehouse.staging_dir, params, figures)
    drift = staged_drift(path, warehouse.store_dir)
    with warehouse.connect() as con:
        con.execute(
            "INSERT OR REPLACE INTO staged_snapshots"
            " (content_hash, staged_at, path, figures, drift) VALUES (?, ?, ?, ?, ?)",
            [
                digest,
                datetime.now(UTC),
                path.name,
                json.dumps(figures, sort_keys=True),
                json.dumps(drift, sort_keys=True) if drift is not None else None,
            ],
        )
    crash_point("factorization")
    scalar = {k: v for k, v in figures.items() if isinstance(v, int | float | str)}
    return dg.MaterializeResult(
        metadata={
            "content_hash": digest,
            **scalar,
            "singular_values": dg.MetadataValue.json(figures["singular_values"]),
            "fold_in_factor90_by_known": dg.MetadataValue.json(
                figures["fold_in_factor90_by_known"]
            ),
            "fit_params": dg.MetadataValue.json(vars(params)),
            "drift": dg.MetadataValue.json(drift or {"against": None}),
            **{name: dg.MetadataValue.md(markdown) for name, markdown in plots.items()},
            "suspicious_scores": dg.MetadataValue.md(suspicious_table),
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
def published_snapshot(
    warehouse: WarehouseResource, publish_gate: PublishGateResource
) -> dg.MaterializeResult:
    with warehouse.connect() as con:
        row = con.execute(
            "SELECT content_hash, drift FROM staged_snapshots ORDER BY staged_at DESC LIMIT 1"
        ).fetchone()
    if row is None:
        raise RuntimeError("nothing staged: materialize `factorization` first")
    digest, drift = row
    with warehouse.connect() as con:
        sources = source_status(con)
    extra = {
        "source_status": sources,
        "drift": json.loads(drift) if drift else None,
        "accepted_drift": sorted(parse_accepted(publish_gate.accept_drift)),
    }
    result = publish(warehouse.staging_dir / digest, warehouse.store_dir, extra_manifest=extra)
    crash_point("published_snapshot")
    remote: dict[str, str] = {}
    uri = os.environ.get(PUBLISH_URI_ENV, "").strip()
    if uri:
        # after the local publish (the source of truth); pushes every version the remote lacks,
        # so a push that failed on an earlier run is retried by the next one
        synced = sync_store(warehouse.store_dir, uri)
        remote = {"remote_store": synced.uri, "remote_pushed": ", ".join(synced.pushed)}
    return dg.MaterializeResult(
        metadata={
            "version": result.version,
            "published": result.published,
            "content_hash": result.content_hash,
            "parent": result.parent or "",
            "path": str(result.path),
            "stale_sources": ", ".join(s for s, v in sources.items() if v["status"] != "ok"),
            **remote,
        }
    )
