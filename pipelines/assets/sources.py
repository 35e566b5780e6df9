"""Per-source assets: raw payloads (group `ingest`) and parsed source scores (group `parse`).

One pair per leaderboard so a broken source shows up on its own asset and never blocks the
others: a fetch failure is recorded (fetch_log, asset metadata, a WARN check) and the source's
last good payloads keep feeding the matrix.

These steps are not in the "duckdb" pool: they open the warehouse only for a short read and
one write transaction each (DuckDB's file lock, waited on, keeps writers one at a time), not
while the network or the parser works, so with BENCHPRESS_REFRESH_WORKERS > 1 the sources
fetch and parse in parallel processes (`pipelines.jobs`).
"""

import dagster as dg

from pipelines.crash_hook import crash_point
from pipelines.fetch.budget import FetchBudget, run_started_at
from pipelines.fetch.transports import FetchError
from pipelines.resources import DUCKDB_POOL as DUCKDB_POOL  # its home: pipelines.resources
from pipelines.resources import FetcherResource, WarehouseResource
from pipelines.settings import fetch_deadlines
from pipelines.sources.base import Source
from pipelines.stages.ingest import ingest_source
from pipelines.stages.parse import parse_source
from warehouse.payloads import last_good_fetch


def payloads_key(source: Source) -> dg.AssetKey:
    return dg.AssetKey(f"{source.id}_payloads")


def scores_key(source: Source) -> dg.AssetKey:
    return dg.AssetKey(f"{source.id}_source_scores")


def build_source_assets(source: Source) -> list[dg.AssetsDefinition]:
    @dg.asset(
        key=payloads_key(source),
        group_name="ingest",
        kinds={"duckdb"},
        description=f"Raw payloads of {source.title}, archived byte for byte. "
        f"URLs: {', '.join(source.urls)}",
        metadata={"source": source.id, "licence": source.licence},
        check_specs=[
            dg.AssetCheckSpec(
                "fetch_succeeded",
                asset=payloads_key(source),
                description="The last fetch of this source succeeded (WARN: its data goes stale).",
            )
        ],
    )
    def payloads(
        context: dg.AssetExecutionContext,
        warehouse: WarehouseResource,
        fetcher: FetcherResource,
    ) -> dg.MaterializeResult:
        budget = FetchBudget.start(fetch_deadlines(), run_started_at(context))
        try:
            summary = ingest_source(
                warehouse.connect, fetcher.fetcher(), source, budget, fetcher.concurrency
            )
        except FetchError as exc:
            context.log.error(str(exc))
            return dg.MaterializeResult(
                metadata={"outcome": "failed", "error": str(exc), "url": exc.url},
                check_results=[
                    dg.AssetCheckResult(
                        check_name="fetch_succeeded",
                        passed=False,
                        severity=dg.AssetCheckSeverity.WARN,
                        metadata={"error": str(exc)},
                    )
                ],
            )
        crash_point(payloads_key(source).to_user_string())
        return dg.MaterializeResult(
            metadata={
                "outcome": summary.outcome,
                "transport": summary.transport,
                "payloads": len(summary.payload_ids),
                "new_payloads": summary.new_payloads,
                "not_modified": summary.not_modified,
                "bytes_fetched": summary.bytes_fetched,
                "urls": dg.MetadataValue.json(summary.urls),
            },
            check_results=[dg.AssetCheckResult(check_name="fetch_succeeded", passed=True)],
        )

    @dg.asset(
        key=scores_key(source),
        deps=[payloads_key(source)],
        group_name="parse",
        kinds={"duckdb", "polars"},
        description=f"{source.title} parsed into the common long schema (source-native names).",
        metadata={"source": source.id},
        check_specs=[
            dg.AssetCheckSpec(
                "parse_succeeded",
                asset=scores_key(source),
                description="The newest payloads parsed (WARN: the last good parse stays current).",
            )
        ],
    )
    def source_scores(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource
    ) -> dg.MaterializeResult:
        with warehouse.connect() as con:
            fetched = last_good_fetch(con, source.id)
        if not fetched:
            context.log.warning(f"{source.id}: no payload fetched yet; nothing to parse")
            return dg.MaterializeResult(
                metadata={"outcome": "no data"},
                check_results=[
                    dg.AssetCheckResult(
                        check_name="parse_succeeded",
                        passed=False,
                        severity=dg.AssetCheckSeverity.WARN,
                        description="nothing fetched yet",
                    )
                ],
            )
        try:
            summary = parse_source(warehouse.connect, source)
        except Exception as exc:  # noqa: BLE001 - a parser bug must not block other sources
            context.log.error(str(exc))
            return dg.MaterializeResult(
                metadata={"outcome": "failed", "error": str(exc)},
                check_results=[
                    dg.AssetCheckResult(
                        check_name="parse_succeeded",
                        passed=False,
                        severity=dg.AssetCheckSeverity.WARN,
                        description=str(exc)[:500],
                    )
                ],
            )
        crash_point(scores_key(source).to_user_string())
        return dg.MaterializeResult(
            metadata={
                "parse_id": summary.parse_id,
                "reused_previous_parse": summary.reused,
                "rows": summary.rows,
                "models": summary.models,
                "benchmarks": summary.benchmarks,
                "rejected_rows": summary.rejected_rows,
            },
            check_results=[dg.AssetCheckResult(check_name="parse_succeeded", passed=True)],
        )

    return [payloads, source_scores]
