"""Plot data from a loaded snapshot: the matrix (observed vs fitted), the singular value
spectrum, the benchmarks in the two-factor plane and predicted vs actual held-out cells.

Plain lists of numbers (None for missing) so the page can draw them itself; NaN never reaches
JSON.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

from predictor.api import BenchPress
from predictor.drift import benchmark_loadings, completed_z
from predictor.methods.registry import METHODS

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
    """Rows of rounded floats, None where not finite (vectorised: the matrix has ~500k cells)."""
    rounded = np.round(np.asarray(array, dtype=float), digits)
    cells = rounded.astype(object)
    cells[~np.isfinite(rounded)] = None
    return cells.tolist()


# One answer per loaded snapshot: the matrix is the page's largest payload and never changes.
_MATRICES: weakref.WeakKeyDictionary[BenchPress, dict[str, Any]] = weakref.WeakKeyDictionary()


def matrix(bench: BenchPress) -> dict[str, Any]:
    """Observed cells and the fit's in-sample completion on the fitted block (models and
    benchmarks with enough observations). The long tail outside it (thousands of open models
    with six scores each) stays reachable per model and per cell, with provenance."""
    if (cached := _MATRICES.get(bench)) is None:
        cached = _MATRICES[bench] = _matrix(bench)
    return cached


def _matrix(bench: BenchPress) -> dict[str, Any]:
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


RESIDUALS_NOTE = (
    "each observed percent cell of the fit against its leave-one-out prediction from the rest "
    "of its model's row (the same check that flags suspicious scores)"
)


def holdout(
    manifest: dict[str, Any], residuals: Any = None, percent: Any = ()
) -> dict[str, Any] | None:
    """Held-out (actual, predicted) pairs: the manifest's if it records them, else the
    snapshot's leave-one-out residuals on percent benchmarks (`percent`: their ids), else None.

    The pipeline's predicted-vs-observed plot comes from a 5-fold refit whose pairs are not
    kept in the snapshot; residuals.parquet is the held-out prediction of every fitted cell
    that is kept, so the page plots that (and says so)."""
    quality = manifest.get("quality", {})
    pairs = _pairs(quality.get("holdout_pairs"))
    note: str | None = None
    medae = number(quality.get("holdout_medae"))
    if not pairs and residuals is not None and residuals.height:
        wanted = set(percent)
        rows = residuals.select("benchmark_id", "observed", "predicted").iter_rows()
        kept = [[a, p] for b, a, p in rows if b in wanted]
        pairs = _pairs([[a for a, _ in kept], [p for _, p in kept]])
        if pairs:
            note = RESIDUALS_NOTE
            if medae is not None:
                note += f"; the 5-fold held-out MedAE in the manifest is {medae:.2f} points"
            medae = number(float(np.median([abs(a - p) for a, p in pairs])), 4)
    if not pairs:
        return None
    answer: dict[str, Any] = {
        "pairs": [[round(a, 4), round(p, 4)] for a, p in pairs],
        "medae": medae,
        "cells": len(pairs),
    }
    if note:  # where the pairs come from when it is not the manifest
        answer["note"] = note
    return answer


def suspicious(bench: BenchPress) -> list[dict[str, Any]]:
    """Cells `bench.suspicious_scores()` flags, for the heatmap to outline."""
    flagged = bench.suspicious_scores()
    return [
        {
            "model": r["model_id"],
            "benchmark": r["benchmark_id"],
            "observed": number(r["observed"], DIGITS),
            "predicted": number(r["predicted"], DIGITS),
            "z": number(r["z"], DIGITS),  # two would round twice on the page (-36.55 shown -36.5)
            "reason": r["reason"],
        }
        for r in flagged.iter_rows(named=True)
    ]


def method_label(method: str | None) -> str:
    """The registered method's `label`; an unknown name as recorded, or "unrecorded"."""
    cls = METHODS.get(method or "")
    return cls.label if cls is not None else method or "unrecorded"


# (key, label) in the order the page lists them; keys of the manifest's `fit_params` and
# fit.json's `params` (the Bayesian method's chains/burn-in/samples, the ALS recipe's
# lambda/iterations/seeds): a method shows only the ones it has.
PARAM_LABELS = (
    ("rank", "rank"),
    ("n_chains", "chains"),
    ("n_burn", "burn-in sweeps per chain"),
    ("n_samples", "samples per chain"),
    ("n_keep", "draws kept"),
    ("nu", "Student-t degrees of freedom"),
    ("link", "percent link"),
    ("alpha", "λ (ridge)"),
    ("n_iter", "iterations"),
    ("n_seeds", "seeds"),
    ("min_per_model", "min. scores per model"),
    ("min_per_benchmark", "min. scores per benchmark"),
    ("random_state", "random seed"),
)


def _param_text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:g}" if math.isfinite(value) else None
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _link_text(prior: Any, mode: Any) -> str | None:
    """How the fit's percent link was set: bent per benchmark (shrunk to the plain logit by
    n / (n + prior)) or the plain logit; None for fits that do not record it."""
    if isinstance(prior, bool) or not isinstance(prior, int | float) or not math.isfinite(prior):
        return None
    if prior <= 0:
        return "plain logit"
    how = mode if isinstance(mode, str) and mode.strip() else "learned"
    return f"{how.strip()} per benchmark, shrunk to the plain logit by n / (n + {prior:g})"


def fit_summary(manifest: dict[str, Any], fit: dict[str, Any] | None) -> dict[str, Any]:
    """The fit's method and the parameters it actually has, as label/value text (never a
    missing value): from the manifest's `fit_params` and the fit state's `params`."""
    fit = fit if isinstance(fit, dict) else {}
    if isinstance(fit.get("state"), dict):  # fit.json: {"model_ids", ..., "state": {...}}
        fit = fit["state"]
    method = fit.get("method") if isinstance(fit.get("method"), str) else None
    merged: dict[str, Any] = {}
    for source in (fit.get("params"), manifest.get("fit_params")):
        if isinstance(source, dict):
            merged.update(source)
    merged["link"] = _link_text(merged.get("link_prior"), merged.get("link_mode"))
    params = []
    for key, label in PARAM_LABELS:
        text = _param_text(merged.get(key))
        if text is not None:
            params.append({"key": key, "label": label, "value": text})
    return {
        "method": method,
        "method_label": method_label(method),
        "params": params,
    }
