"""Suspicious scores: observed cells far from what the rest of their model's row predicts.

Each observed cell (i, j) is predicted by folding model i in from its *other* observed cells
(per-draw Gaussian posterior against a completer fitted once on the matrix, `_foldin`; the
benchmark parameters are not refitted without the cell, so this is leave-one-out fold-in).
Its residual in the completer's z-space is divided by the predictive sd, sqrt(posterior
variance of the cell's mean + noise variance of benchmark j for a typical model); cells with
|z| > threshold are flagged. A score from another harness, a unit slip or a typo shows up here.
`suspicious_scores` also flags the odd cells of a percent column that mixes scales
(`scale_mix`): a column in two spellings can fit itself well enough to hide from the residuals.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from predictor.fitted_matrix import FittedMatrix
from predictor.methods.base import Completer
from predictor.methods.registry import default_completer
from predictor.trust.scale_mix import mixed_scale_cells

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
    completer: Completer | None = None,
    n_draws: int | None = None,
) -> pl.DataFrame:
    """Every observed cell with its leave-one-out prediction (original units) and z-score."""
    values = np.asarray(values, dtype=float)
    if completer is None:
        if scales is None:
            raise ValueError("give scales or a fitted completer")
        completer = default_completer().fit(values, scales)
    engine = completer.batch_fold_in(values, n_draws=n_draws)
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
    completer: Completer | None = None,
) -> pl.DataFrame:
    """Observed cells with |leave-one-out z| > threshold, most extreme first."""
    _check_threshold(threshold)  # before the leave-one-out pass, not after
    res = loo_residuals(values, scales, completer)
    return above_threshold(res, threshold, ("model", "benchmark"))


def residual_table(
    values: np.ndarray,
    model_ids: Sequence[str],
    benchmark_ids: Sequence[str],
    completer: Completer,
    cells: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Every fitted cell's leave-one-out check with ids (and its source when `cells` has one).

    This is what a snapshot stores as `residuals.parquet`; suspicious cells are its rows with
    |z| above a threshold. Sorted by model and benchmark so the same fit gives the same bytes.
    """
    res = loo_residuals(values, completer=completer)
    frame = res.select(
        pl.col("model").replace_strict(range(len(model_ids)), list(model_ids)).alias("model_id"),
        pl.col("benchmark")
        .replace_strict(range(len(benchmark_ids)), list(benchmark_ids))
        .alias("benchmark_id"),
        "observed",
        "predicted",
        "z",
    )
    if cells is not None and "source" in cells.columns:
        sources = cells.select("model_id", "benchmark_id", "source").unique(
            ["model_id", "benchmark_id"], keep="first", maintain_order=True
        )
        frame = frame.join(sources, on=["model_id", "benchmark_id"], how="left")
    return frame.sort("model_id", "benchmark_id")


def _check_threshold(threshold: float) -> None:
    if not threshold > 0:
        raise ValueError(f"threshold must be > 0, got {threshold}")


def above_threshold(
    residuals: pl.DataFrame,
    threshold: float,
    keys: tuple[str, str] = ("model_id", "benchmark_id"),
) -> pl.DataFrame:
    """Rows with |z| > threshold, most extreme first (ties by the model, benchmark `keys`)."""
    _check_threshold(threshold)
    return residuals.filter(pl.col("z").abs() > threshold).sort(
        pl.col("z").abs(), *keys, descending=[True, False, False]
    )


_CACHE: dict[str, pl.DataFrame] = {}


def suspicious_scores(bp: FittedMatrix, threshold: float = DEFAULT_THRESHOLD) -> pl.DataFrame:
    """Flagged cells of a snapshot, with model and benchmark ids, the cell's source and why.

    `reason` is "mixed scale" for the odd cells of a percent column holding two scales (listed
    first) and "residual" for cells with |leave-one-out z| > threshold (most extreme first).
    Residuals are read from the snapshot's stored `residuals.parquet` (written at publish time);
    snapshots published before it existed are checked against their fitted completer on first
    use and cached per snapshot content in this process.
    """
    stored = bp.snapshot.residuals
    if stored is None:
        key = str(bp.manifest.get("content_hash") or bp.version)
        if key not in _CACHE:
            values = bp.observed_values(bp.fit_models_, bp.fit_benchmarks_)
            _CACHE[key] = residual_table(
                values, bp.fit_models_, bp.fit_benchmarks_, bp.completer_, bp.snapshot.cells
            )
        stored = _CACHE[key]
    flagged = above_threshold(stored, threshold).with_columns(reason=pl.lit("residual"))
    return _with_mixed_scale(bp, stored, flagged)


def _with_mixed_scale(
    bp: FittedMatrix, residuals: pl.DataFrame, flagged: pl.DataFrame
) -> pl.DataFrame:
    benchmarks = bp.snapshot.benchmarks
    scale_of = dict(benchmarks.select("benchmark_id", "scale").iter_rows())
    direction_of = dict(benchmarks.select("benchmark_id", "direction").iter_rows())
    odd = mixed_scale_cells(bp.snapshot.cells, scale_of, direction_of)
    if odd.is_empty():
        return flagged
    keys = ["model_id", "benchmark_id"]
    odd = (
        odd.join(residuals.drop("observed"), on=keys, how="left")
        .with_columns(reason=pl.lit("mixed scale"))
        .select(flagged.columns)
    )
    return pl.concat([odd, flagged.join(odd, on=keys, how="anti")], how="vertical_relaxed")
