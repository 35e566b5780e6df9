"""Plot data from a loaded snapshot: the matrix (observed vs fitted), the singular value
spectrum, the benchmarks in the two-factor plane and predicted vs actual held-out cells.

Plain lists of numbers (None for missing) so the page can draw them itself; NaN never reaches
JSON.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from predictor.api import BenchPress
from predictor.drift import benchmark_loadings, completed_z

DIGITS = 4  # matrix cells: enough for a heatmap and a tooltip, a third of the bytes


def number(value: Any, digits: int | None = None) -> float | None:
    """A finite float (optionally rounded) or None."""
    if value is None:
        return None
    result = float(value)
    if not math.isfinite(result):
        return None
    return round(result, digits) if digits is not None else result


def _rows(array: np.ndarray, digits: int) -> list[list[float | None]]:
    return [[number(v, digits) for v in row] for row in array]


def matrix(bench: BenchPress) -> dict[str, Any]:
    """Observed cells and the fit's in-sample completion on the fitted block (models and
    benchmarks with enough observations). The long tail outside it (thousands of open models
    with six scores each) stays reachable per model and per cell, with provenance."""
    view = bench.matrix()
    rows = [view.models.index(m) for m in bench.fit_models_]
    cols = [view.benchmarks.index(b) for b in bench.fit_benchmarks_]
    observed = view.values[np.ix_(rows, cols)]
    fitted = bench.fitted_values(keep_observed=False)[0]
    names = dict(bench.snapshot.models.select("model_id", "name").iter_rows())
    bench_names = dict(bench.snapshot.benchmarks.select("benchmark_id", "name").iter_rows())
    return {
        "models": list(bench.fit_models_),
        "model_names": [names.get(m) or m for m in bench.fit_models_],
        "benchmarks": list(bench.fit_benchmarks_),
        "benchmark_names": [bench_names.get(b) or b for b in bench.fit_benchmarks_],
        "scales": [view.scales[j] for j in cols],
        "observed": _rows(observed, DIGITS),
        "predicted": _rows(fitted, DIGITS),
        "models_outside_fit": len(view.models) - len(rows),
    }


def spectrum(manifest: dict[str, Any]) -> dict[str, Any] | None:
    """Singular values from the manifest's quality figures, with each one's variance share."""
    values = manifest.get("quality", {}).get("singular_values")
    if not isinstance(values, list) or not values:
        return None
    sv = [float(v) for v in values if isinstance(v, int | float) and math.isfinite(v)]
    energy = sum(v * v for v in sv) or 1.0
    shares = [v * v / energy for v in sv]
    return {
        "singular_values": sv,
        "variance_share": [round(s, 6) for s in shares],
        "cumulative_share": [round(sum(shares[: i + 1]), 6) for i in range(len(shares))],
        "note": "shares of the singular values listed in the manifest",
    }


def loadings(bench: BenchPress) -> dict[str, Any]:
    """Each fitted benchmark's loading on the first two factors of the completed z matrix."""
    z, benchmark_ids = completed_z(bench.snapshot)
    plane = benchmark_loadings(z, rank=2)
    meta = {row["benchmark_id"]: row for row in bench.snapshot.benchmarks.iter_rows(named=True)}
    centred = z - z.mean(axis=0, keepdims=True)
    sv = np.linalg.svd(centred, compute_uv=False)
    share = (sv**2 / max(float((sv**2).sum()), 1e-12))[:2]
    return {
        "variance_share": [round(float(s), 6) for s in share],
        "benchmarks": [
            {
                "benchmark_id": b,
                "name": meta.get(b, {}).get("name") or b,
                "scale": meta.get(b, {}).get("scale"),
                "n_cells": meta.get(b, {}).get("n_cells"),
                "x": number(plane[j, 0], 6),
                "y": number(plane[j, 1], 6),
            }
            for j, b in enumerate(benchmark_ids)
        ],
    }


def _pairs(raw: Any) -> list[tuple[float, float]] | None:
    """`[actual_list, predicted_list]` (what the pipeline's holdout figure computes) or
    `{"actual": [...], "predicted": [...]}`; anything else is ignored."""
    if isinstance(raw, dict):
        raw = [raw.get("actual"), raw.get("predicted")]
    if not isinstance(raw, list | tuple) or len(raw) != 2:
        return None
    actual, predicted = raw
    if not isinstance(actual, list | tuple) or not isinstance(predicted, list | tuple):
        return None
    if len(actual) != len(predicted):
        return None
    pairs = []
    for a, p in zip(actual, predicted, strict=True):
        if isinstance(a, bool) or isinstance(p, bool):
            return None
        if not isinstance(a, int | float) or not isinstance(p, int | float):
            return None
        if math.isfinite(a) and math.isfinite(p):
            pairs.append((float(a), float(p)))
    return pairs or None


def holdout(manifest: dict[str, Any]) -> dict[str, Any] | None:
    """Held-out (actual, predicted) pairs if the manifest records them, else None."""
    quality = manifest.get("quality", {})
    pairs = _pairs(quality.get("holdout_pairs"))
    if not pairs:
        return None
    return {
        "pairs": [[round(a, 4), round(p, 4)] for a, p in pairs],
        "medae": number(quality.get("holdout_medae")),
        "cells": len(pairs),
    }
