"""Blocking asset checks: the publish gate. A failing check stops `published_snapshot`, so the
previous `latest` stays; `benchpress refresh` then exits non-zero naming check, figure and
threshold. Drift checks can be accepted explicitly (`refresh --accept-drift NAME` or
BENCHPRESS_ACCEPT_DRIFT) for intended changes; the manifest records what was accepted."""

import json
from collections.abc import Callable
from typing import Any

import dagster as dg
import polars as pl

from pipelines.assets.fit import factorization
from pipelines.assets.matrix import normalized_scores, score_matrix
from pipelines.identity.checks import (
    FRONTIER_SOURCES,
    max_unresolved_share,
    unresolved_share_problems,
)
from pipelines.identity.registry import load_registry
from pipelines.resources import PublishGateResource, WarehouseResource
from pipelines.settings import CheckThresholds, check_thresholds, parse_accepted
from pipelines.stages.normalize import resolution_summary
from warehouse.scores import read_table


def matrix_problems(
    cells: pl.DataFrame, scale_of: dict[str, str], min_models: int, min_benchmarks: int
) -> list[str]:
    """What is wrong with a matrix, in words; empty when it is sane."""
    problems = []
    n_models, n_benchmarks = cells["model_id"].n_unique(), cells["benchmark_id"].n_unique()
    if n_models < min_models:
        problems.append(f"{n_models} models < minimum {min_models}")
    if n_benchmarks < min_benchmarks:
        problems.append(f"{n_benchmarks} benchmarks < minimum {min_benchmarks}")
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
    missing = cells.filter(pl.col("source").is_null() | pl.col("payload_url").is_null())
    if missing.height:
        problems.append(f"{missing.height} cells without provenance")
    return problems


@dg.asset_check(asset=score_matrix, blocking=True, description="Size, range and provenance.")
def matrix_sanity(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    thresholds = check_thresholds()
    scale_of = dict(load_registry().benchmarks.select("benchmark_id", "scale").iter_rows())
    with warehouse.connect() as con:
        cells = read_table(con, "matrix_cells")
    problems = matrix_problems(cells, scale_of, thresholds.min_models, thresholds.min_benchmarks)
    return dg.AssetCheckResult(
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


def _latest_staged(warehouse: WarehouseResource) -> tuple[dict[str, Any], dict[str, Any] | None]:
    with warehouse.connect() as con:
        row = con.execute(
            "SELECT figures, drift FROM staged_snapshots ORDER BY staged_at DESC LIMIT 1"
        ).fetchone()
    if row is None:
        raise RuntimeError("no factorization staged")
    return json.loads(row[0]), json.loads(row[1]) if row[1] else None


@dg.asset_check(
    asset=factorization,
    blocking=True,
    description="The top two factors still explain most of the variance (rank-2 structure).",
)
def rank2_structure(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    floor = check_thresholds().min_top2_variance_share
    figures, _ = _latest_staged(warehouse)
    share = float(figures["variance_share_top2"])
    passed = share >= floor
    return dg.AssetCheckResult(
        passed=passed,
        metadata={"variance_share_top2": share, "floor": floor},
        description=f"top-2 variance share {share:.3f} {'>=' if passed else '<'} floor {floor:.3f}",
    )


@dg.asset_check(
    asset=normalized_scores,
    blocking=True,
    description="Frontier sources still resolve: the share of unresolved rows per source stays "
    "under BENCHPRESS_MAX_UNRESOLVED_SHARE (default 0.15).",
)
def identity_resolution(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    bound = max_unresolved_share()
    with warehouse.connect() as con:
        summary = resolution_summary(con)
    problems = unresolved_share_problems(summary, bound)
    frontier = summary.filter(pl.col("source").is_in(list(FRONTIER_SOURCES)))
    return dg.AssetCheckResult(
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
            f"({drift['common_benchmarks']} common benchmarks)"
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
            f"(change {change:+.2f}) {'<=' if ok else '>'} margin {t.max_holdout_medae_increase:g}"
        ),
        {"change": change, "margin": t.max_holdout_medae_increase},
    )


def cells_rule(drift: dict[str, Any], t: CheckThresholds) -> tuple[bool, str, dict[str, Any]]:
    removed = drift["cells_removed_share"]
    collapsed = {
        source: ratio
        for source, ratio in drift["source_cell_ratio"].items()
        if ratio < t.min_source_cell_ratio
    }
    ok = removed <= t.max_cells_removed_share and not collapsed
    parts = [
        f"{drift['cells_removed']} cells lost ({removed:.1%} of the last snapshot, "
        f"ceiling {t.max_cells_removed_share:.0%})"
    ]
    parts += [
        f"source {source} keeps {ratio:.0%} of its cells (< {t.min_source_cell_ratio:.0%})"
        for source, ratio in sorted(collapsed.items())
    ]
    return ok, "; ".join(parts), {"removed_share": removed, "collapsed_sources": collapsed}


def shift_rule(drift: dict[str, Any], t: CheckThresholds) -> tuple[bool, str, dict[str, Any]]:
    shift = drift["prediction_shift"]["median"]
    ok = shift <= t.max_prediction_shift
    return (
        ok,
        (
            f"median prediction shift on reference probe sets {shift:.2f} points "
            f"{'<=' if ok else '>'} ceiling {t.max_prediction_shift:g}"
        ),
        {"median_shift": shift, "ceiling": t.max_prediction_shift},
    )


def build_drift_check(name: str, rule: DriftRule, description: str) -> dg.AssetChecksDefinition:
    @dg.asset_check(asset=factorization, name=name, blocking=True, description=description)
    def drift_check(
        warehouse: WarehouseResource, publish_gate: PublishGateResource
    ) -> dg.AssetCheckResult:
        _, drift = _latest_staged(warehouse)
        if drift is None:
            return dg.AssetCheckResult(passed=True, description="no previous snapshot to compare")
        if "error" in drift:
            return dg.AssetCheckResult(passed=False, description=drift["error"])
        passed, text, figures = rule(drift, check_thresholds())
        accepted = name in parse_accepted(publish_gate.accept_drift)
        if not passed and accepted:
            text = f"ACCEPTED by explicit override: {text}"
        return dg.AssetCheckResult(
            passed=passed or accepted,
            description=f"{text} (vs {drift['against']})",
            metadata={**figures, "against": drift["against"], "override": accepted},
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
        "No collapse of cells or of any source's rows (a broken scraper must not publish).",
    ),
    build_drift_check(
        "predictions_stable",
        shift_rule,
        "Predictions for fixed reference probe sets did not jump.",
    ),
]
