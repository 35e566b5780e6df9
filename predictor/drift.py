"""Compare two fitted snapshots: has the rank-2 structure, the error or the answers moved?

Pure numpy on `Snapshot` objects, used by the pipeline's blocking drift checks (new fit vs last
published) and by `benchpress snapshots diff A B`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from predictor.api import BenchPress
from predictor.fit.fitted_state import restore_state
from predictor.snapshots.reader import Snapshot
from predictor.transforms import plain_warp

# Fixed probe sets standing for typical new models (weak, mid, frontier): their predictions
# must not jump between consecutive snapshots unless the data really changed.
REFERENCE_PROBES: dict[str, dict[str, float]] = {
    "small_open_model": {"gpqa_diamond": 35.0, "mmlu_pro": 50.0, "humaneval": 70.0},
    "mid_2025_model": {"gpqa_diamond": 65.0, "mmlu_pro": 75.0, "aime_2025": 50.0},
    "frontier_reasoner": {"gpqa_diamond": 85.0, "mmlu_pro": 85.0, "hle": 25.0, "aime_2025": 90.0},
}


def completed_z(snapshot: Snapshot) -> tuple[np.ndarray, list[str]]:
    """The fitted (ensemble-mean) matrix of a snapshot in a space every fit shares, and its
    benchmark ids: completed scores through the plain percent logit (floor to 100), each
    column z-scored. Not the fit's own z-space: a fit whose percent links bend has its own
    per-column warp, and comparing two such spaces would count a changed bend as rotation."""
    fit = snapshot.fit
    model = restore_state(
        fit["state"], np.full((len(fit["model_ids"]), len(fit["benchmark_ids"])), np.nan)
    )
    transform = model.transform_
    scores = transform.inverse(model.z_pred_)
    warped = plain_warp(scores, transform.is_percent_, transform.ranges()[0], transform.eps)
    spread = warped.std(axis=0)
    z = (warped - warped.mean(axis=0)) / np.where(spread > 1e-8, spread, 1.0)
    return z, list(fit["benchmark_ids"])


def benchmark_loadings(z: np.ndarray, rank: int = 2) -> np.ndarray:
    """Top-`rank` right singular vectors of the column-centred matrix (benchmarks x rank)."""
    centred = z - z.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    loadings = vt[:rank].T
    signs = np.sign(loadings[np.argmax(np.abs(loadings), axis=0), np.arange(rank)])
    return loadings * np.where(signs == 0, 1.0, signs)


def principal_angles_deg(a: np.ndarray, b: np.ndarray) -> list[float]:
    """Principal angles (degrees) between the column spaces of a and b (same row count)."""
    qa, _ = np.linalg.qr(a)
    qb, _ = np.linalg.qr(b)
    cosines = np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False), -1.0, 1.0)
    return [float(np.degrees(np.arccos(c))) for c in cosines]


def loading_angles(old: Snapshot, new: Snapshot, rank: int = 2) -> tuple[list[float], int]:
    """Angles between the benchmark-loading subspaces restricted to common benchmarks."""
    z_old, bench_old = completed_z(old)
    z_new, bench_new = completed_z(new)
    common = sorted(set(bench_old) & set(bench_new))
    if len(common) <= rank:
        return [90.0] * rank, len(common)
    # like with like: the structure of the shared benchmarks in each fit
    load_old = benchmark_loadings(z_old[:, [bench_old.index(b) for b in common]], rank)
    load_new = benchmark_loadings(z_new[:, [bench_new.index(b) for b in common]], rank)
    return principal_angles_deg(load_old, load_new), len(common)


def prediction_shift(old: Snapshot, new: Snapshot) -> dict[str, float]:
    """Median |change| of predictions for the reference probe sets on common benchmarks."""
    before, after = BenchPress(old), BenchPress(new)
    shifts: list[float] = []
    for probes in REFERENCE_PROBES.values():
        usable = {
            k: v for k, v in probes.items() if k in before.fit_columns and k in after.fit_columns
        }
        if not usable:
            continue
        p_old, p_new = before.predict(usable), after.predict(usable)
        scale = dict(new.benchmarks.select("benchmark_id", "scale").iter_rows())
        shifts += [
            abs(p_new[b].score - p_old[b].score)
            for b in p_old.keys() & p_new.keys()
            if b not in usable and scale.get(b) == "percent"
        ]
    if not shifts:
        return {"median": 0.0, "p90": 0.0, "n": 0}
    return {
        "median": float(np.median(shifts)),
        "p90": float(np.quantile(shifts, 0.9)),
        "n": len(shifts),
    }


@dataclass(frozen=True)
class CellDiff:
    added: int
    removed: int
    changed: int  # same cell, score differs by more than 1e-9
    largest_changes: list[dict[str, Any]]


def cell_diff(old: Snapshot, new: Snapshot, top: int = 10) -> CellDiff:
    key = ["model_id", "benchmark_id"]
    joined = old.cells.select(*key, "score").join(
        new.cells.select(*key, "score"), on=key, how="full", suffix="_new", coalesce=True
    )
    added = joined.filter(joined["score"].is_null()).height
    removed = joined.filter(joined["score_new"].is_null()).height
    both = joined.drop_nulls(["score", "score_new"])
    both = both.with_columns((both["score_new"] - both["score"]).abs().alias("delta"))
    changed = both.filter(both["delta"] > 1e-9).sort("delta", descending=True)
    return CellDiff(added, removed, changed.height, changed.head(top).to_dicts())


def source_counts(snapshot: Snapshot) -> dict[str, int]:
    return dict(snapshot.cells.group_by("source").len().sort("source").iter_rows())


def drift_figures(old: Snapshot, new: Snapshot) -> dict[str, Any]:
    """Everything the drift checks and `snapshots diff` report, as plain JSON-able data."""
    angles, n_common = loading_angles(old, new)
    cells = cell_diff(old, new)
    old_sources, new_sources = source_counts(old), source_counts(new)
    source_ratio = {
        source: round(new_sources.get(source, 0) / count, 4)
        for source, count in old_sources.items()
        if count
    }
    old_err = old.manifest.get("quality", {}).get("holdout_medae")
    new_err = new.manifest.get("quality", {}).get("holdout_medae")
    return {
        "against": old.manifest.get("version"),
        "loading_angles_deg": [round(a, 4) for a in angles],
        "common_benchmarks": n_common,
        "cells_added": cells.added,
        "cells_removed": cells.removed,
        "cells_changed": cells.changed,
        "cells_removed_share": round(cells.removed / max(old.cells.height, 1), 6),
        "source_cell_ratio": source_ratio,
        "holdout_medae_old": old_err,
        "holdout_medae_new": new_err,
        "holdout_medae_change": (
            round(new_err - old_err, 6) if old_err is not None and new_err is not None else None
        ),
        "prediction_shift": {k: round(v, 6) for k, v in prediction_shift(old, new).items()},
    }
