"""Structure and error figures of a fit, computed from the cells it was given (no peeking).

- Variance shares on the largest complete submatrix (greedy: drop the sparsest row or column
  until nothing is missing), so the rank-2 claim is also checked on purely observed data.
- Held-out error on a fixed internal protocol: per-model 3-fold split with a fixed seed, the
  same completer refitted on two folds and scored on the third, percent benchmarks only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from pipelines.stages.fit import variance_shares
from predictor.transforms import ScaleTransform

HOLDOUT_SEED = 20261130
HOLDOUT_FOLDS = 3


def largest_complete_submatrix(
    observed: np.ndarray, min_rows: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of a (greedily) large fully observed submatrix."""
    rows = np.arange(observed.shape[0])
    cols = np.arange(observed.shape[1])
    block = observed.copy()
    while block.size and not block.all():
        row_missing = (~block).sum(axis=1) / max(block.shape[1], 1)
        col_missing = (~block).sum(axis=0) / max(block.shape[0], 1)
        if row_missing.max() >= col_missing.max() and block.shape[0] > min_rows:
            drop = int(np.argmax(row_missing))
            rows, block = np.delete(rows, drop), np.delete(block, drop, axis=0)
        else:
            drop = int(np.argmax(col_missing))
            cols, block = np.delete(cols, drop), np.delete(block, drop, axis=1)
    return rows, cols


def complete_submatrix_shares(values: np.ndarray, scales: Sequence[str]) -> dict[str, object]:
    rows, cols = largest_complete_submatrix(~np.isnan(values))
    if len(rows) < 3 or len(cols) < 3:
        return {"submatrix_models": int(len(rows)), "submatrix_benchmarks": int(len(cols))}
    block = values[np.ix_(rows, cols)]
    z = ScaleTransform([scales[j] for j in cols]).fit(block).transform(block)
    singular, shares = variance_shares(z)
    return {
        "submatrix_models": int(len(rows)),
        "submatrix_benchmarks": int(len(cols)),
        "submatrix_singular_values": [round(s, 6) for s in singular[:10]],
        "submatrix_variance_share_top1": round(shares[0], 6),
        "submatrix_variance_share_top2": round(shares[1], 6),
        "submatrix_variance_share_top3": round(shares[2], 6),
    }


def per_model_folds(observed: np.ndarray, n_folds: int, seed: int) -> np.ndarray:
    """Fold number of each observed cell (row-major order), about 1/n of every row per fold."""
    rng = np.random.default_rng(seed)
    folds = np.full(observed.shape, -1)
    for i in range(observed.shape[0]):
        cells = np.flatnonzero(observed[i])
        order = rng.permutation(len(cells))
        folds[i, cells[order]] = np.arange(len(cells)) % n_folds
    return folds


FitPredict = Callable[[np.ndarray, Sequence[str]], np.ndarray]


def holdout_error(
    values: np.ndarray, scales: Sequence[str], fit_predict: FitPredict
) -> dict[str, object]:
    """Median absolute error on held-out percent cells, plus (actual, predicted) pairs."""
    observed = ~np.isnan(values)
    folds = per_model_folds(observed, HOLDOUT_FOLDS, HOLDOUT_SEED)
    percent = np.array([s == "percent" for s in scales])
    actual: list[float] = []
    predicted: list[float] = []
    for k in range(HOLDOUT_FOLDS):
        test = folds == k
        train = np.where(test, np.nan, values)
        keep = ~np.isnan(train).all(axis=0)  # a column with no training cell cannot be scored
        completed = fit_predict(
            train[:, keep], [s for s, kept in zip(scales, keep, strict=True) if kept]
        )
        full = np.full(values.shape, np.nan)
        full[:, keep] = completed
        mask = test & percent[None, :] & keep[None, :]
        actual += values[mask].tolist()
        predicted += full[mask].tolist()
    errors = np.abs(np.array(actual) - np.array(predicted))
    return {
        "holdout_medae": round(float(np.median(errors)), 6) if len(errors) else None,
        "holdout_within5": round(float(np.mean(errors <= 5.0)), 6) if len(errors) else None,
        "holdout_cells": int(len(errors)),
        "holdout_pairs": (actual, predicted),
    }
