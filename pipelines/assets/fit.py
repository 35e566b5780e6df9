"""The factorization (group `fit`) and the published snapshot (group `publish`)."""

import os

import dagster as dg

from pipelines.assets.matrix import score_matrix
from pipelines.crash_hook import crash_point
from pipelines.identity.registry import load_registry
from pipelines.resources import DUCKDB_POOL, PublishGateResource, WarehouseResource
from pipelines.settings import (
    DRIFT_CHECKS,
    PUBLISH_URI_ENV,
    fit_params,
    guard_thresholds,
    parse_accepted,
)
from pipelines.stages.figures import (
    add_guard_figures,
    fit_figures_and_plots,
    scalar_metadata,
    staged_drift,
    suspicious_summary,
)
from pipelines.stages.fit import FitParams, fit_matrix
from pipelines.stages.quality import frame_markdown
from pipelines.stages.side_information import (
    ReleaseDates,
    choose_release_dates,
    release_date_metadata,
    stated_dates,
)
from pipelines.stages.snapshot import (
    accepted_checks,
    gate_problems,
    planned_identity,
    same_inputs_drift,
    snapshot_tables,
    stage_snapshot,
)
from pipelines.stages.unchanged import matrix_inputs_key
from predictor.snapshots.reader import (
    SnapshotError,
    list_versions,
    read_manifest,
    snapshot_identity,
)
from warehouse.remote import sync_store
from warehouse.scores import read_table
from warehouse.snapshots import (
    CheckRecord,
    StagedRun,
    check_records,
    current_parse_rows,
    latest_built_from,
    latest_staging,
    publish,
    published_parses,
    record_publish,
    record_staging,
    restage,
    staged_by,
)
from warehouse.status import source_status

PARENT_RUN_TAG = "dagster/parent_run_id"  # set by Dagster on a re-execution


def accept_route(records: dict[str, CheckRecord]) -> str:
    """What an operator can do about the failed checks: only drift checks can be accepted."""
    drift = [
        name
        for name in DRIFT_CHECKS
        if (record := records.get(name)) is not None and not (record.passed or record.accepted)
    ]
    if not drift:
        return (
            "these checks cannot be accepted (only drift checks can): fix the data, the alias "
            "tables or the thresholds"
        )
    names = ",".join(drift)
    return (
        f"for an intended change run `benchpress refresh --accept-drift {names}` (or the "
        f"refresh job with BENCHPRESS_ACCEPT_DRIFT={names})"
    )


def run_lineage(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> list[str]:
    """This run's id, then the runs it re-executes (nearest first)."""
    run = context.run
    lineage = [run.run_id]
    parent = run.tags.get(PARENT_RUN_TAG)
    while parent and parent not in lineage:
        lineage.append(parent)
        parent_run = context.instance.get_run_by_id(parent)
        parent = parent_run.tags.get(PARENT_RUN_TAG) if parent_run is not None else None
    return lineage


def staged_for_run(
    context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext,
    warehouse: WarehouseResource,
) -> StagedRun:
    """The snapshot this run (or the run it re-executes) staged; never another run's."""
    lineage = run_lineage(context)
    with warehouse.connect() as con:
        staged = staged_by(con, lineage)
    if staged is None:
        raise dg.Failure(
            description=f"nothing staged by run {lineage[0]}: materialize `factorization` "
            "in the same run (a snapshot staged by another run is never used)"
        )
    return staged


@dg.asset(
    deps=[score_matrix],
    group_name="fit",
    pool=DUCKDB_POOL,
    kinds={"numpy", "duckdb"},
    description="Bayesian low-rank factorization of the score matrix (robust Bayesian matrix "
    "factorisation, predictor.methods.bayesian), staged as the snapshot it would publish "
    "(keyed by content hash and recorded with the run that staged it), with structure, error "
    "and drift figures against the last published snapshot, including cells that jumped and "
    "sources that lost rows. When the matrix's inputs (data files, fit parameters, method) "
    "are those of the last published snapshot, that snapshot is staged again instead of "
    "refitting (the fit is deterministic); the metadata says `reused_snapshot`.",
)
def factorization(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    params = fit_params()
    registry = load_registry()
    scale_of = dict(registry.benchmarks.select("benchmark_id", "scale").iter_rows())
    with warehouse.connect() as con:
        cells = read_table(con, "matrix_cells")
        conflicts = read_table(con, "matrix_conflicts")
        normalized = read_table(con, "normalized_scores")
        parses_now, parses_then = current_parse_rows(con), published_parses(con)
    if list_versions(warehouse.store_dir):  # something published: maybe from these inputs
        identity = planned_identity(
            normalized, cells, conflicts, registry, params, warehouse.staging_dir
        )
        reused = latest_built_from(warehouse.store_dir, identity) if identity else None
        if reused is not None:
            return reuse_published(context, warehouse, reused, identity or "", params)
    stated = stated_dates(normalized)
    fit = fit_matrix(cells, scale_of, params, registry, stated)
    figures, plots = fit_figures_and_plots(fit, params)
    tables = snapshot_tables(normalized, cells, conflicts, registry, fit)
    suspicious, suspicious_table = suspicious_summary(tables.residuals)
    figures.update(suspicious)
    digest, path = stage_snapshot(tables, warehouse.staging_dir, params, figures)
    drift = staged_drift(path, warehouse.store_dir)
    add_guard_figures(
        drift,
        warehouse.store_dir,
        tables,
        fit,
        scale_of,
        parses_now,
        parses_then,
        guard_thresholds(),
    )
    with warehouse.connect() as con:
        record_staging(con, context.run.run_id, digest, path.name, figures, drift)
    crash_point("factorization")
    model_ids = tables.models["model_id"].to_list()
    dates = choose_release_dates(model_ids, registry.catalogue, cells, stated)
    scalar = scalar_metadata(figures)
    return dg.MaterializeResult(
        metadata={
            "content_hash": digest,
            "run_id": context.run.run_id,
            "reused_snapshot": "",
            "input_identity": snapshot_identity(path),
            **scalar,
            **release_date_figures(context, dates, fit.model_ids),
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


def release_date_figures(
    context: dg.AssetExecutionContext, dates: ReleaseDates, fitted: list[str]
) -> dict[str, object]:
    """Metadata on the models' release dates: where they come from, the models whose sources
    disagree by more than a month (listed), and the impossible stated dates rejected (counted,
    listed, and a warning in the run's log)."""
    figures = release_date_metadata(dates, fitted)
    if dates.rejected.height:
        context.log.warning(
            f"{dates.rejected.height} stated release dates rejected as impossible (before "
            "2015, after their payload was fetched, or not a date): "
            + "; ".join(
                f"{source} {model_id} {date!r}: {reason}"
                for model_id, source, date, reason in dates.rejected.head(10).iter_rows()
            )
        )
    return {
        "release_date_sources": dg.MetadataValue.json(figures.pop("release_date_sources")),
        **figures,
        "release_date_conflict_list": dg.MetadataValue.md(
            frame_markdown(dates.conflicts.sort("days", "model_id", descending=[True, False]), 30)
        ),
        "release_dates_rejected_list": dg.MetadataValue.md(frame_markdown(dates.rejected, 30)),
    }


def reuse_published(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    version: str,
    identity: str,
    params: FitParams,
) -> dg.MaterializeResult:
    """Stage published `version` again for this run (its inputs are this matrix's): no refit,
    no drift figures; the checks judge its recorded figures and `publish` finds it unchanged."""
    digest, path = restage(warehouse.store_dir / version, warehouse.staging_dir)
    figures = read_manifest(path).get("quality") or {}
    drift = same_inputs_drift(version)
    with warehouse.connect() as con:
        record_staging(con, context.run.run_id, digest, path.name, figures, drift)
    crash_point("factorization")
    context.log.info(f"nothing new: reused snapshot {version}, built from the same inputs")
    scalar = scalar_metadata(figures)
    return dg.MaterializeResult(
        metadata={
            "content_hash": digest,
            "run_id": context.run.run_id,
            "reused_snapshot": version,
            "input_identity": identity,
            "reused": dg.MetadataValue.md(
                f"Not refitted: the matrix's inputs (data files, fit parameters, method) are "
                f"those of published snapshot `{version}`, so the deterministic fit would give "
                "it again. Its content and recorded figures are staged for this run's checks."
            ),
            **scalar,
            "fit_params": dg.MetadataValue.json(vars(params)),
            "drift": dg.MetadataValue.json(drift),
        }
    )


@dg.asset(
    deps=[factorization],
    group_name="publish",
    pool=DUCKDB_POOL,
    kinds={"parquet"},
    description="The snapshot staged by this same run, published as an immutable calendar "
    "version only when every blocking check of that run passed for it (or a failed drift "
    "check was explicitly accepted); materialized on its own it publishes nothing.",
)
def published_snapshot(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    publish_gate: PublishGateResource,
) -> dg.MaterializeResult:
    lineage = run_lineage(context)
    with warehouse.connect() as con:
        staged = staged_by(con, lineage)
        latest = latest_staging(con)
        records = check_records(con, lineage)
        latest_records = check_records(con, [latest.run_id]) if latest is not None else {}
        sources = source_status(con)
    if staged is None:
        raise dg.Failure(
            description=_nothing_staged(lineage[0], latest, latest_records),
            metadata={"run_id": lineage[0], "latest_staged_by": latest.run_id if latest else ""},
        )
    problems = gate_problems(staged, records)
    if problems:
        raise dg.Failure(
            description=f"staged snapshot {staged.content_hash[:12]} (run {staged.run_id}) is "
            f"not published: {'; '.join(problems)}; {accept_route(records)}",
            metadata={
                "content_hash": staged.content_hash,
                "staged_by": staged.run_id,
                "problems": dg.MetadataValue.json(problems),
            },
        )
    accepted = set(parse_accepted(publish_gate.accept_drift)) | set(accepted_checks(records))
    extra = {
        "source_status": sources,
        "drift": staged.drift,
        "accepted_drift": sorted(accepted),
        "staged_by_run": staged.run_id,
    }
    reused = str(staged.drift["against"]) if (staged.drift or {}).get("same_inputs") else ""
    result = publish(
        warehouse.staging_dir / staged.content_hash, warehouse.store_dir, extra_manifest=extra
    )
    with warehouse.connect() as con:
        record_publish(con, context.run.run_id, result, current_parse_rows(con))
        inputs_key = matrix_inputs_key(con)  # a rerun with the same key reuses this version
    crash_point("published_snapshot")
    remote: dict[str, str] = {}
    uri = os.environ.get(PUBLISH_URI_ENV, "").strip()
    if uri:
        # after the local publish (the source of truth); pushes every version the remote lacks,
        # so a push that failed on an earlier run is retried by the next one. A failed push
        # fails the step but says the local publish happened (its version in the metadata).
        try:
            synced = sync_store(warehouse.store_dir, uri)
        except SnapshotError as exc:
            state = "published" if result.published else "unchanged, latest is"
            raise dg.Failure(
                description=f"snapshot {state} {result.version} locally, not pushed: {exc}",
                metadata={"version": result.version, "published": result.published},
            ) from exc
        remote = {"remote_store": synced.uri, "remote_pushed": ", ".join(synced.pushed)}
    return dg.MaterializeResult(
        metadata={
            "version": result.version,
            "published": result.published,
            "reproduced": result.reproduced,
            "reused_snapshot": reused if not result.published else "",
            "matrix_inputs": inputs_key,
            "content_hash": result.content_hash,
            "parent": result.parent or "",
            "path": str(result.path),
            "staged_by_run": staged.run_id,
            "accepted_drift": ", ".join(sorted(accepted)),
            "stale_sources": ", ".join(s for s, v in sources.items() if v["status"] != "ok"),
            **remote,
        }
    )


def _nothing_staged(run_id: str, latest: StagedRun | None, records: dict) -> str:
    text = (
        f"nothing staged by run {run_id}: published_snapshot publishes only the snapshot that "
        "`factorization` staged in the same run, once that run's blocking checks passed "
        "(materialize the whole `refresh` job, or run `benchpress refresh`)"
    )
    if latest is None:
        return text + "; nothing is staged at all"
    problems = gate_problems(latest, records)
    verdict = (
        f"it failed its blocking checks: {'; '.join(problems)}; {accept_route(records)}"
        if problems
        else "it passed its checks in that run"
    )
    return (
        f"{text}. The latest staged snapshot, {latest.content_hash[:12]}, was staged by run "
        f"{latest.run_id}, and {verdict}"
    )
