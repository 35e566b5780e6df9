"""Blocking asset checks: the publish gate. A failing check stops `published_snapshot`, so the
previous `latest` stays; `benchpress refresh` then exits non-zero naming check, figure and
threshold. Drift checks can be accepted explicitly (`refresh --accept-drift NAME` or
BENCHPRESS_ACCEPT_DRIFT) for intended changes; the manifest records what was accepted.

Each check judges the snapshot staged by its own run (never "the latest staged") and writes
its verdict to `check_results` (run id, content hash, passed, accepted) in one transaction
(so the checks are in the `duckdb` pool like every other step that writes the warehouse);
`published_snapshot` publishes only when every blocking check of its run passed, so a failed
staged snapshot stays unpublishable however `published_snapshot` is materialized."""

import os
from collections.abc import Callable
from typing import Any

import dagster as dg
import polars as pl

from pipelines.assets.fit import factorization, staged_for_run
from pipelines.assets.matrix import normalized_scores, score_matrix
from pipelines.identity.checks import (
    FRONTIER_SOURCES,
    max_unresolved_share,
    unresolved_share_problems,
)
from pipelines.identity.registry import load_registry
from pipelines.resources import DUCKDB_POOL, PublishGateResource, WarehouseResource
from pipelines.settings import (
    CheckThresholds,
    check_thresholds,
    guard_thresholds,
    parse_accepted,
    threshold_env,
)
from pipelines.sources import SOURCES
from pipelines.stages.clusters import ALLOW_ENV, allowed_benchmarks, cluster_problems
from pipelines.stages.ingest import nothing_fetched
from pipelines.stages.normalize import resolution_summary
from pipelines.stages.quality import (
    MIN_JUMPS_FOR_SHARE,
    GuardThresholds,
    frame_markdown,
    jumps_markdown,
)
from predictor.trust.scale_mix import describe as describe_mix
from predictor.trust.scale_mix import mixed_scale_columns
from warehouse.payloads import latest_fetch_outcomes
from warehouse.scores import read_table
from warehouse.snapshots import CheckRecord, record_check


def verdict(
    context: dg.AssetCheckExecutionContext,
    warehouse: WarehouseResource,
    passed: bool,
    description: str,
    metadata: dict[str, Any] | None = None,
    content_hash: str | None = None,
    accepted: bool = False,
) -> dg.AssetCheckResult:
    """Record this check's verdict for its run (the publish gate reads it), then return it."""
    (spec,) = context.check_specs
    record = CheckRecord(
        run_id=context.run.run_id,
        check_name=spec.name,
        asset_key=spec.asset_key.to_user_string(),
        content_hash=content_hash,
        passed=passed,
        accepted=accepted and not passed,
        description=description,
    )
    with warehouse.connect() as con:
        record_check(con, record)
    extra = {"content_hash": content_hash} if content_hash else {}
    if not (passed or record.accepted):
        # Dagster then fails the step with a generic "blocking asset check failed" trace; the
        # reason is this line of the run's log, the check's description and its metadata
        context.log.error(f"{spec.name} failed: {description}")
    return dg.AssetCheckResult(
        passed=passed or record.accepted,
        description=description,
        metadata={**(metadata or {}), **extra, "run_id": record.run_id},
    )


def matrix_problems(
    cells: pl.DataFrame,
    scale_of: dict[str, str],
    min_models: int,
    min_benchmarks: int,
    direction_of: dict[str, str] | None = None,
) -> list[str]:
    """What is wrong with a matrix, in words; empty when it is sane. A percent column mixing
    scales (two or more fraction-looking scores beside two or more percents) is a problem."""
    problems = []
    n_models, n_benchmarks = cells["model_id"].n_unique(), cells["benchmark_id"].n_unique()
    if n_models < min_models:
        problems.append(f"{n_models} models < minimum {min_models} ({threshold_env('min_models')})")
    if n_benchmarks < min_benchmarks:
        problems.append(
            f"{n_benchmarks} benchmarks < minimum {min_benchmarks} "
            f"({threshold_env('min_benchmarks')})"
        )
    if not cells["score"].is_finite().all():
        problems.append("non-finite scores")
    percent = cells.filter(
        pl.col("benchmark_id").replace_strict(scale_of, default="unknown") == "percent"
    )
    outside = percent.filter((pl.col("score") < 0) | (pl.col("score") > 100))
    if outside.height:
        first = outside.row(0, named=True)
        problems.append(
            f"{outside.height} percent scores outside 0-100, e.g. {first['model_id']} on "
            f"{first['benchmark_id']} = {first['score']}"
        )
    mixed = mixed_scale_columns(cells, scale_of, direction_of, min_each=2)
    problems.extend(describe_mix(row) for row in mixed.iter_rows(named=True))
    missing = cells.filter(pl.col("source").is_null() | pl.col("payload_url").is_null())
    if missing.height:
        problems.append(f"{missing.height} cells without provenance")
    return problems


@dg.asset_check(
    asset=score_matrix, blocking=True, pool=DUCKDB_POOL, description="Size, range and provenance."
)
def matrix_sanity(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    thresholds = check_thresholds()
    benchmarks = load_registry().benchmarks
    scale_of = dict(benchmarks.select("benchmark_id", "scale").iter_rows())
    direction_of = dict(benchmarks.select("benchmark_id", "direction").iter_rows())
    with warehouse.connect() as con:
        cells = read_table(con, "matrix_cells")
    problems = matrix_problems(
        cells, scale_of, thresholds.min_models, thresholds.min_benchmarks, direction_of
    )
    return verdict(
        context,
        warehouse,
        passed=not problems,
        metadata={
            "problems": dg.MetadataValue.json(problems),
            "models": cells["model_id"].n_unique(),
            "benchmarks": cells["benchmark_id"].n_unique(),
            "min_models": thresholds.min_models,
            "min_benchmarks": thresholds.min_benchmarks,
        },
        description="; ".join(problems) or "matrix is sane",
    )


@dg.asset_check(
    asset=score_matrix,
    blocking=True,
    pool=DUCKDB_POOL,
    description="No benchmark column splits into two clusters of cells from different sources "
    "or cited documents, far apart against their own spread (two metrics in one column, as "
    f"LongFact's hallucination rates beside a model card's score); {ALLOW_ENV} lists reviewed "
    "exceptions.",
)
def one_metric_per_column(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    allowed = allowed_benchmarks(os.environ.get(ALLOW_ENV, ""))
    scale_of = dict(load_registry().benchmarks.select("benchmark_id", "scale").iter_rows())
    with warehouse.connect() as con:
        cells = read_table(con, "matrix_cells")
        rows = read_table(con, "normalized_scores")
    problems, split = cluster_problems(cells, rows, scale_of, allowed)
    return verdict(
        context,
        warehouse,
        passed=not problems,
        metadata={
            "split_benchmarks": dg.MetadataValue.md(
                frame_markdown(split.drop("low_origins", "high_origins"))
            ),
            "problems": dg.MetadataValue.json(problems),
            "allowed_setting": ALLOW_ENV,
            "allowed": ", ".join(sorted(allowed)),
        },
        description="; ".join(problems)
        or f"every benchmark column is one cluster of origins ({ALLOW_ENV}: "
        f"{', '.join(sorted(allowed)) or 'none'})",
    )


@dg.asset_check(
    asset=factorization,
    blocking=True,
    pool=DUCKDB_POOL,
    description="The top two factors still explain most of the variance (rank-2 structure).",
)
def rank2_structure(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    floor = check_thresholds().min_top2_variance_share
    try:
        staged = staged_for_run(context, warehouse)
    except dg.Failure as exc:  # the fit did not stage: say why, as this check's verdict
        return verdict(context, warehouse, False, exc.description or str(exc))
    share = float(staged.figures["variance_share_top2"])
    passed, description = rank2_rule(share, floor)
    return verdict(
        context,
        warehouse,
        passed=passed,
        metadata={
            "variance_share_top2": share,
            "floor": dg.MetadataValue.text(f"{floor:g}"),
            "floor_setting": threshold_env("min_top2_variance_share"),
        },
        description=description,
        content_hash=staged.content_hash,
    )


def rank2_rule(share: float, floor: float) -> tuple[bool, str]:
    """Whether the top-2 variance share holds its floor, and the sentence that says so."""
    passed = share >= floor
    setting = threshold_env("min_top2_variance_share")
    return passed, (
        f"top-2 variance share {share:.3f} {'>=' if passed else '<'} floor {floor:.3f} "
        f"(set by {setting})"
    )


@dg.asset_check(
    asset=normalized_scores,
    blocking=True,
    pool=DUCKDB_POOL,
    description="At least one source was fetched (new or unchanged): when the newest fetch of "
    "every source failed, nothing is published from old data alone.",
)
def sources_fetched(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    with warehouse.connect() as con:
        outcomes = latest_fetch_outcomes(con)
    problem = nothing_fetched(outcomes, SOURCES)
    fetched = sorted(s for s in SOURCES if outcomes.get(s) in ("new", "unchanged"))
    return verdict(
        context,
        warehouse,
        passed=problem is None,
        metadata={
            "fetched": len(fetched),
            "sources": len(SOURCES),
            "newest_fetch": dg.MetadataValue.json({s: outcomes.get(s) for s in sorted(SOURCES)}),
        },
        description=problem or f"{len(fetched)} of {len(SOURCES)} sources fetched",
    )


@dg.asset_check(
    asset=normalized_scores,
    blocking=True,
    pool=DUCKDB_POOL,
    description="Frontier sources still resolve: the share of unresolved rows per source stays "
    "under BENCHPRESS_MAX_UNRESOLVED_SHARE (default 0.15).",
)
def identity_resolution(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    bound = max_unresolved_share()
    with warehouse.connect() as con:
        summary = resolution_summary(con)
    problems = unresolved_share_problems(summary, bound)
    frontier = summary.filter(pl.col("source").is_in(list(FRONTIER_SOURCES)))
    return verdict(
        context,
        warehouse,
        passed=not problems,
        metadata={
            "bound": bound,
            "unresolved_share": dg.MetadataValue.json(
                dict(frontier.select("source", "unresolved_share").iter_rows())
            ),
            "resolution_rate": dg.MetadataValue.json(
                dict(summary.select("source", "resolution_rate").iter_rows())
            ),
            "problems": dg.MetadataValue.json(problems),
        },
        description="; ".join(problems) or f"every frontier source under {bound:.0%} unresolved",
    )


# Each drift rule: (figure, threshold) -> (passed, description) from the drift figures.
DriftRule = Callable[[dict[str, Any], CheckThresholds], tuple[bool, str, dict[str, Any]]]


def loading_rule(drift: dict[str, Any], t: CheckThresholds) -> tuple[bool, str, dict[str, Any]]:
    angle = max(drift["loading_angles_deg"])
    ok = angle <= t.max_loading_angle_deg
    return (
        ok,
        (
            f"largest principal angle between benchmark-loading subspaces {angle:.1f} deg "
            f"{'<=' if ok else '>'} ceiling {t.max_loading_angle_deg:g} deg "
            f"({threshold_env('max_loading_angle_deg')}; "
            f"{drift['common_benchmarks']} common benchmarks)"
        ),
        {"angle_deg": angle, "ceiling_deg": t.max_loading_angle_deg},
    )


def holdout_rule(drift: dict[str, Any], t: CheckThresholds) -> tuple[bool, str, dict[str, Any]]:
    change = drift.get("holdout_medae_change")
    if change is None:
        return True, "no held-out error recorded for the previous snapshot", {}
    ok = change <= t.max_holdout_medae_increase
    return (
        ok,
        (
            f"held-out MedAE {drift['holdout_medae_old']:.2f} -> {drift['holdout_medae_new']:.2f} "
            f"(change {change:+.2f}) {'<=' if ok else '>'} margin {t.max_holdout_medae_increase:g} "
            f"({threshold_env('max_holdout_medae_increase')})"
        ),
        {"change": change, "margin": t.max_holdout_medae_increase},
    )


def cells_rule(
    drift: dict[str, Any], t: CheckThresholds, g: GuardThresholds | None = None
) -> tuple[bool, str, dict[str, Any]]:
    """Cells lost, a source's cells or parsed rows collapsing, published cells jumping."""
    g = g or guard_thresholds()
    removed = drift["cells_removed_share"]
    collapsed = {
        source: ratio
        for source, ratio in drift["source_cell_ratio"].items()
        if ratio < t.min_source_cell_ratio
    }
    ok = removed <= t.max_cells_removed_share and not collapsed
    parts = [
        f"{drift['cells_removed']} cells lost ({removed:.1%} of the last snapshot, "
        f"ceiling {t.max_cells_removed_share:.0%}, {threshold_env('max_cells_removed_share')})"
    ]
    parts += [
        f"source {source} keeps {ratio:.0%} of its cells (< {t.min_source_cell_ratio:.0%}, "
        f"{threshold_env('min_source_cell_ratio')})"
        for source, ratio in sorted(collapsed.items())
    ]
    figures: dict[str, Any] = {"removed_share": removed, "collapsed_sources": collapsed}

    rows = drift.get("source_rows") or {}
    shrunk = {
        source: facts
        for source, facts in sorted(rows.items())
        if facts["ratio"] is not None and facts["ratio"] < 1 - g.max_source_rows_drop
    }
    ok = ok and not shrunk
    parts += [
        f"source {source} parsed {facts['rows']} rows, {1 - facts['ratio']:.0%} fewer than the "
        f"{facts['published_rows']} of the last publish (> {g.max_source_rows_drop:.0%}, "
        f"{threshold_env('max_source_rows_drop')})"
        for source, facts in shrunk.items()
    ]
    figures["source_rows"] = rows
    figures["max_source_rows_drop"] = g.max_source_rows_drop

    moves = drift.get("cell_moves")
    if moves is not None:
        ok = _jump_parts(moves, g, parts) and ok
        figures |= {
            "cells_compared": moves["compared"],
            "cells_jumped": moves["jumps"],
            "suspicious_jumps": moves["suspicious"],
            "unverified_jumps": moves["unverified"],
            "jump_thresholds": moves["thresholds"],
            "rescored_benchmarks": moves.get("rescored_benchmarks") or [],
            "jumps_by_benchmark": moves["benchmarks"],
            "jumped_cells": dg.MetadataValue.md(jumps_markdown(moves["cells"])),
        }
    return ok, "; ".join(parts), figures


def _jump_parts(moves: dict[str, Any], g: GuardThresholds, parts: list[str]) -> bool:
    """Append what the cell jumps say to `parts`; whether they pass."""
    limits = moves["thresholds"]
    ok = True
    suspicious = [c for c in moves["cells"] if c["suspicious"]]
    if moves["suspicious"] > g.max_suspicious_moves:
        ok = False
        shown = ", ".join(
            f"{c['model_id']} on {c['benchmark_id']} {c['old']:g} -> {c['new']:g} "
            f"(z {c['z']:+.1f}, {c['new_source']})"
            for c in suspicious[:3]
        )
        parts.append(
            f"{moves['suspicious']} published cell(s) jumped (>= {limits['points']:g} points or "
            f"{limits['ratio']:.0%}) to a value the model's other scores do not support "
            f"(|z| >= {limits['z']:g}, {threshold_env('cell_move_z')}; at most "
            f"{g.max_suspicious_moves} allowed, {threshold_env('max_suspicious_moves')}): {shown}"
        )
    else:
        rescored = moves.get("rescored_benchmarks") or []
        parts.append(
            f"{moves['jumps']} of {moves['compared']} published cells jumped, "
            f"{moves['suspicious']} suspicious"
            + (f" (re-scored, judged by share: {', '.join(rescored)})" if rescored else "")
        )
    wide = {
        b: f
        for b, f in sorted(moves["benchmarks"].items())
        if f["jumps"] >= MIN_JUMPS_FOR_SHARE and f["share"] > g.max_benchmark_moved_share
    }
    if wide:
        ok = False
        parts += [
            f"benchmark {b}: {f['jumps']} of its {f['compared']} published cells jumped "
            f"({f['share']:.0%} > {g.max_benchmark_moved_share:.0%}, "
            f"{threshold_env('max_benchmark_moved_share')})"
            for b, f in wide.items()
        ]
    return ok


def shift_rule(drift: dict[str, Any], t: CheckThresholds) -> tuple[bool, str, dict[str, Any]]:
    shift = drift["prediction_shift"]["median"]
    ok = shift <= t.max_prediction_shift
    return (
        ok,
        (
            f"median prediction shift on reference probe sets {shift:.2f} points "
            f"{'<=' if ok else '>'} ceiling {t.max_prediction_shift:g} "
            f"({threshold_env('max_prediction_shift')})"
        ),
        {"median_shift": shift, "ceiling": t.max_prediction_shift},
    )


def build_drift_check(name: str, rule: DriftRule, description: str) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=factorization, name=name, blocking=True, pool=DUCKDB_POOL, description=description
    )
    def drift_check(
        context: dg.AssetCheckExecutionContext,
        warehouse: WarehouseResource,
        publish_gate: PublishGateResource,
    ) -> dg.AssetCheckResult:
        try:
            staged = staged_for_run(context, warehouse)
        except dg.Failure as exc:  # the fit did not stage: say why, as this check's verdict
            return verdict(context, warehouse, False, exc.description or str(exc))
        drift, digest = staged.drift, staged.content_hash
        if drift is not None and drift.get("same_inputs"):  # `pipelines.stages.snapshot`
            return verdict(
                context,
                warehouse,
                True,
                f"built from the same inputs as published snapshot {drift['against']}: "
                "nothing drifted (its fit reused, not recomputed)",
                {"against": drift["against"], "reused": True},
                content_hash=digest,
            )
        if drift is None:
            return verdict(
                context, warehouse, True, "no previous snapshot to compare", content_hash=digest
            )
        if "error" in drift:
            return verdict(context, warehouse, False, drift["error"], content_hash=digest)
        passed, text, figures = rule(drift, check_thresholds())
        accepted = name in parse_accepted(publish_gate.accept_drift)
        if not passed and accepted:
            text = f"ACCEPTED by explicit override: {text}"
        return verdict(
            context,
            warehouse,
            passed,
            f"{text} (vs {drift['against']})",
            {**figures, "against": drift["against"], "override": accepted},
            content_hash=digest,
            accepted=accepted,
        )

    return drift_check


drift_checks = [
    build_drift_check(
        "loading_subspace_stable",
        loading_rule,
        "Benchmark loadings did not rotate: principal angles vs the last published snapshot.",
    ),
    build_drift_check(
        "holdout_error_stable",
        holdout_rule,
        "Held-out error on the fixed internal protocol is not worse than last time by a margin.",
    ),
    build_drift_check(
        "cells_not_lost",
        cells_rule,
        "No collapse of cells or of any source's rows, and no published cell jumping to a value "
        "its model's other scores do not support (a broken or truncated payload must not "
        "publish).",
    ),
    build_drift_check(
        "predictions_stable",
        shift_rule,
        "Predictions for fixed reference probe sets did not jump.",
    ),
]
