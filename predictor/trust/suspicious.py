"""Suspicious scores: observed cells far from what the rest of their model's row predicts.

Each observed cell (i, j) is predicted by folding model i in from its *other* observed cells
(per-draw Gaussian posterior against a completer fitted once on the matrix, `_foldin`; the
benchmark parameters are not refitted without the cell, so this is leave-one-out fold-in).
Its residual in the completer's z-space is divided by the predictive sd, sqrt(posterior
variance of the cell's mean + noise variance of benchmark j for a typical model); cells with
|z| > threshold are flagged. A score from another harness, a unit slip or a typo shows up here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from predictor.methods.bayesian import BayesianCompleter
from predictor.trust._foldin import BatchFoldIn

DEFAULT_THRESHOLD = 3.5
_SCHEMA = {
    "model": pl.Int64,
    "benchmark": pl.Int64,
    "observed": pl.Float64,
    "predicted": pl.Float64,
    "z": pl.Float64,
}


def loo_residuals(
    values: np.ndarray,
    scales: Sequence[str] | None = None,
    completer: BayesianCompleter | None = None,
    n_draws: int | None = None,
) -> pl.DataFrame:
    """Every observed cell with its leave-one-out prediction (original units) and z-score."""
    values = np.asarray(values, dtype=float)
    if completer is None:
        if scales is None:
            raise ValueError("give scales or a fitted completer")
        completer = BayesianCompleter().fit(values, scales)
    engine = BatchFoldIn(completer, values, n_draws=n_draws)
    n, m = values.shape
    prec, shift = engine.system(range(m))
    parts = []
    for j in range(m):
        rows = np.flatnonzero(engine.observed[:, j])
        if len(rows) == 0:
            continue
        p, s = engine.column_terms(j)
        mean, var = engine.predict_z((prec - p)[:, rows], (shift - s)[:, rows], [j], True)
        sd = np.sqrt(var[:, 0] + engine.noise[j])
        z = (engine.z[rows, j] - mean[:, 0]) / sd
        pred = engine.to_units(mean, [j])[:, 0]
        parts.append(
            pl.DataFrame(
                {
                    "model": rows,
                    "benchmark": np.full(len(rows), j),
                    "observed": values[rows, j],
                    "predicted": pred,
                    "z": z,
                },
                schema=_SCHEMA,
            )
        )
    return pl.concat(parts) if parts else pl.DataFrame(schema=_SCHEMA)


def flag_suspicious(
    values: np.ndarray,
    scales: Sequence[str],
    threshold: float = DEFAULT_THRESHOLD,
    completer: BayesianCompleter | None = None,
) -> pl.DataFrame:
    """Observed cells with |leave-one-out z| > threshold, most extreme first."""
    if not threshold > 0:
        raise ValueError(f"threshold must be > 0, got {threshold}")
    res = loo_residuals(values, scales, completer)
    return res.filter(pl.col("z").abs() > threshold).sort(pl.col("z").abs(), descending=True)


_CACHE: dict[tuple[str, float], pl.DataFrame] = {}


def suspicious_scores(bp, threshold: float = DEFAULT_THRESHOLD) -> pl.DataFrame:
    """Flagged cells of a snapshot, with model and benchmark ids and the cell's source.

    Read from the snapshot when it carries a `suspicious` table, else computed against the
    snapshot's fitted completer and cached per (snapshot content, threshold) in this process.
    """
    stored = getattr(bp.snapshot, "suspicious", None)
    if isinstance(stored, pl.DataFrame):
        return stored.filter(pl.col("z").abs() > threshold)
    key = (str(bp.manifest.get("content_hash") or bp.version), float(threshold))
    if key not in _CACHE:
        values = bp._dense(bp.fit_models_, bp.fit_benchmarks_)
        flagged = flag_suspicious(values, [], threshold, completer=bp.completer_)
        models = pl.Series(bp.fit_models_)
        benches = pl.Series(bp.fit_benchmarks_)
        frame = flagged.with_columns(
            pl.col("model")
            .map_elements(lambda i: models[i], return_dtype=pl.String)
            .alias("model_id"),
            pl.col("benchmark")
            .map_elements(lambda j: benches[j], return_dtype=pl.String)
            .alias("benchmark_id"),
        ).select("model_id", "benchmark_id", "observed", "predicted", "z")
        cells = bp.snapshot.cells
        if "source" in cells.columns:
            frame = frame.join(
                cells.select("model_id", "benchmark_id", "source").unique(
                    ["model_id", "benchmark_id"], keep="first"
                ),
                on=["model_id", "benchmark_id"],
                how="left",
            )
        _CACHE[key] = frame
    return _CACHE[key]
