"""Completion of a models x benchmarks score matrix, with intervals.

`complete_matrix` is the entry point. Its default method is the robust Bayesian factorisation
in `predictor.methods.bayesian` (`BayesianCompleter`). `LowRankCompleter` below is BenchPress's
reference recipe, "logit bias ALS": in the z-scored logit space each score is
mu + a_i + b_j + u_i . v_j, fitted by ridge-regularised alternating least squares and
averaged over several random initialisations (`method="als"`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from predictor.methods.bayesian import BayesianCompleter
from predictor.methods.common import check_level, check_values
from predictor.transforms import ScaleTransform, column_ranges, validate_scales

METHODS = ("bayes", "als")


@dataclass(frozen=True)
class _Ensemble:
    """Per-seed ALS parameters; every array has the seed as its leading axis."""

    mu: np.ndarray  # (S,)
    model_bias: np.ndarray  # (S, n)
    benchmark_bias: np.ndarray  # (S, m)
    model_factors: np.ndarray  # (S, n, r)
    benchmark_factors: np.ndarray  # (S, m, r)

    def predict_z(self) -> np.ndarray:
        """Ensemble-mean prediction in z-space, shape (n, m)."""
        z = (
            self.mu[:, None, None]
            + self.model_bias[:, :, None]
            + self.benchmark_bias[:, None, :]
            + self.model_factors @ self.benchmark_factors.transpose(0, 2, 1)
        )
        return z.mean(axis=0)


def _ridge_rows(
    weights: np.ndarray, target: np.ndarray, factors: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Solve every row's ridge problem target_i ~ bias_i + factors . u_i at once.

    weights (n, m) is the observed mask, target (S, n, m) the residual to explain (zero where
    unobserved) and factors (S, m, r) the fixed side. Returns bias (S, n) and u (S, n, r).
    """
    n_seeds, m, rank = factors.shape
    design = np.concatenate([np.ones((n_seeds, m, 1)), factors], axis=2)  # (S, m, k)
    k = rank + 1
    outer = (design[:, :, :, None] * design[:, :, None, :]).reshape(n_seeds, m, k * k)
    gram = (weights @ outer).reshape(n_seeds, -1, k, k) + alpha * np.eye(k)
    rhs = (weights * target) @ design  # (S, n, k)
    solution = np.linalg.solve(gram, rhs[..., None])[..., 0]
    return solution[..., 0], solution[..., 1:]


def _fit_ensemble(
    z: np.ndarray,
    observed: np.ndarray,
    rank: int,
    alpha: float,
    n_iter: int,
    n_seeds: int,
    rng: np.random.Generator,
) -> _Ensemble:
    """Bias-decomposed rank-r ALS on z-scored data, all seeds advanced together.

    Rows or columns without observations keep zero bias and factors, so their predictions
    fall back to the other side's effects.
    """
    n, m = z.shape
    w = observed.astype(float)
    z0 = np.where(observed, z, 0.0)
    n_obs = max(int(observed.sum()), 1)
    mu = np.full(n_seeds, z0.sum() / n_obs)
    a = np.zeros((n_seeds, n))
    b = np.zeros((n_seeds, m))
    u = rng.normal(0.0, 0.01, size=(n_seeds, n, rank))
    v = rng.normal(0.0, 0.01, size=(n_seeds, m, rank))
    for _ in range(n_iter):
        a, u = _ridge_rows(w, z0 - mu[:, None, None] - b[:, None, :], v, alpha)
        resid_t = (z0 - mu[:, None, None] - a[:, :, None]).transpose(0, 2, 1)
        b, v = _ridge_rows(w.T, resid_t, u, alpha)
        fit = a[:, :, None] + b[:, None, :] + u @ v.transpose(0, 2, 1)
        mu = ((z0 - fit) * w).sum(axis=(1, 2)) / n_obs
    return _Ensemble(mu, a, b, u, v)


def _per_row_folds(observed: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Assign each observed cell to a fold so every row is split about evenly (paper style)."""
    rows, _ = np.nonzero(observed)
    order = np.lexsort((rng.random(len(rows)), rows))
    sorted_rows = rows[order]
    first = np.searchsorted(sorted_rows, sorted_rows, side="left")
    folds = np.empty(len(rows), dtype=int)
    folds[order] = (np.arange(len(rows)) - first) % n_folds
    return folds


def _column_quantiles(
    abs_resid: np.ndarray, columns: np.ndarray, n_columns: int, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per-column finite-sample-corrected quantile of |residual|, plus the counts (vectorised)."""
    counts = np.bincount(columns, minlength=n_columns)
    if len(abs_resid) == 0:
        return np.zeros(n_columns), counts
    order = np.lexsort((abs_resid, columns))
    sorted_vals = abs_resid[order]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    safe_n = np.maximum(counts, 1)
    prob = np.minimum(level * (1.0 + 1.0 / safe_n), 1.0)
    pos = prob * (safe_n - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, safe_n - 1)
    frac = pos - lo
    has = counts > 0
    idx_lo = np.where(has, starts + lo, 0)
    idx_hi = np.where(has, starts + hi, 0)
    q = sorted_vals[idx_lo] * (1.0 - frac) + sorted_vals[idx_hi] * frac
    return np.where(has, q, 0.0), counts


_check_values = check_values
_check_level = check_level


class LowRankCompleter:
    """Bias + rank-r ALS ensemble in z-scored logit space (BenchPress reference recipe).

    Intervals come from an internal K-fold cross-validation over the observed cells given to
    `fit`: the L-quantile of |out-of-fold z residual| per benchmark, shrunk toward the global
    quantile by a pseudo-count of `interval_prior` residuals. `cv_folds=0` skips this.
    """

    def __init__(
        self,
        rank: int = 2,
        alpha: float = 0.1,
        n_iter: int = 40,
        n_seeds: int = 10,
        random_state: int = 0,
        cv_folds: int = 3,
        interval_prior: float = 10.0,
        eps: float = 0.005,
    ) -> None:
        self.rank = rank
        self.alpha = alpha
        self.n_iter = n_iter
        self.n_seeds = n_seeds
        self.random_state = random_state
        self.cv_folds = cv_folds
        self.interval_prior = interval_prior
        self.eps = eps

    # ------------------------------------------------------------------ fitting
    def fit(self, values: np.ndarray, scales: Sequence[str]) -> LowRankCompleter:
        """Fit on a float matrix with NaN for missing cells; `scales` gives each column's kind."""
        self._check_params()
        values = _check_values(values)
        self.transform_ = ScaleTransform(scales, eps=self.eps).fit(values)
        z = self.transform_.transform(values)
        observed = ~np.isnan(values)
        main_seq, cv_seq = np.random.SeedSequence(self.random_state).spawn(2)

        ens = self._fit_z(z, observed, np.random.default_rng(main_seq))
        self.mu_ = ens.mu
        self.model_bias_ = ens.model_bias
        self.benchmark_bias_ = ens.benchmark_bias
        self.model_factors_ = ens.model_factors
        self.benchmark_factors_ = ens.benchmark_factors
        self.z_pred_ = ens.predict_z()
        self.values_ = values
        self.observed_ = observed
        self.cv_abs_residuals_, self.cv_columns_ = self._cv_residuals(
            z, observed, np.random.default_rng(cv_seq)
        )
        return self

    def _check_params(self) -> None:
        if self.rank < 1 or self.n_iter < 1 or self.n_seeds < 1:
            raise ValueError("rank, n_iter and n_seeds must all be >= 1")
        if self.alpha <= 0:
            raise ValueError(f"alpha must be > 0, got {self.alpha}")
        if self.cv_folds == 1 or self.cv_folds < 0:
            raise ValueError(f"cv_folds must be 0 (no intervals) or >= 2, got {self.cv_folds}")

    def _fit_z(self, z: np.ndarray, observed: np.ndarray, rng: np.random.Generator) -> _Ensemble:
        return _fit_ensemble(z, observed, self.rank, self.alpha, self.n_iter, self.n_seeds, rng=rng)

    def _cv_residuals(
        self, z: np.ndarray, observed: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Out-of-fold |z residuals| and their column indexes, from the given cells only."""
        if self.cv_folds == 0:
            return np.empty(0), np.empty(0, dtype=int)
        rows, cols = np.nonzero(observed)
        folds = _per_row_folds(observed, self.cv_folds, rng)
        abs_resid = np.empty(len(rows))
        for k in range(self.cv_folds):
            test = folds == k
            train = observed.copy()
            train[rows[test], cols[test]] = False
            z_hat = self._fit_z(z, train, rng).predict_z()
            abs_resid[test] = np.abs(z[rows[test], cols[test]] - z_hat[rows[test], cols[test]])
        return abs_resid, cols

    # --------------------------------------------------------------- prediction
    def predict(self, keep_observed: bool = True) -> np.ndarray:
        """Completed matrix in original units; observed cells are returned as given."""
        pred = self.transform_.inverse(self.z_pred_)
        return np.where(self.observed_, self.values_, pred) if keep_observed else pred

    def predict_interval(
        self, level: float = 0.9, keep_observed: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) in original units; observed cells collapse to their value."""
        low, high = self._interval_from_z(self.z_pred_, level)
        if keep_observed:
            low = np.where(self.observed_, self.values_, low)
            high = np.where(self.observed_, self.values_, high)
        return low, high

    def interval_halfwidth_z(self, level: float = 0.9) -> np.ndarray:
        """Per-benchmark half-width in z-space: shrunk CV quantile of |residual|."""
        level = _check_level(level)
        if len(self.cv_abs_residuals_) == 0:
            raise ValueError("intervals need cv_folds >= 2 and at least one CV residual")
        n_cols = self.z_pred_.shape[1]
        q_col, counts = _column_quantiles(self.cv_abs_residuals_, self.cv_columns_, n_cols, level)
        q_all, _ = _column_quantiles(
            self.cv_abs_residuals_, np.zeros_like(self.cv_columns_), 1, level
        )
        weight = counts / (counts + self.interval_prior)
        return weight * q_col + (1.0 - weight) * q_all[0]

    def _interval_from_z(self, z: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
        half = self.interval_halfwidth_z(level)
        return self.transform_.inverse(z - half), self.transform_.inverse(z + half)

    # ------------------------------------------------------------------ fold-in
    def fold_in(
        self, row: np.ndarray, return_z: bool = False, keep_observed: bool = True
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Predict every benchmark for a NEW model from its known scores (NaN = unknown).

        Each seed's bias and factors for the new row are a ridge fit against that seed's
        benchmark factors; the matrix itself is not refitted. With `return_z` also returns the
        ensemble z-space prediction.
        """
        row = self._check_row(row)
        z_row = self._fold_in_z(row)
        pred = self.transform_.inverse(z_row)
        if keep_observed:
            pred = np.where(np.isnan(row), pred, row)
        return (pred, z_row) if return_z else pred

    def fold_in_interval(
        self, row: np.ndarray, level: float = 0.9, keep_observed: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) for a new model, using the same CV half-widths as `predict_interval`."""
        row = self._check_row(row)
        low, high = self._interval_from_z(self._fold_in_z(row), level)
        if keep_observed:
            known = ~np.isnan(row)
            low, high = np.where(known, row, low), np.where(known, row, high)
        return low, high

    def _check_row(self, row: np.ndarray) -> np.ndarray:
        row = np.asarray(row, dtype=float)
        n_cols = self.z_pred_.shape[1]
        if row.ndim != 1 or row.shape[0] != n_cols:
            raise ValueError(f"row must be a 1-D array of length {n_cols}, got shape {row.shape}")
        if np.isinf(row).any():
            raise ValueError("row contains infinite entries; use NaN for unknown scores")
        return row

    def _fold_in_z(self, row: np.ndarray) -> np.ndarray:
        known = ~np.isnan(row)
        z_known = self.transform_.transform(row)[known]
        v = self.benchmark_factors_[:, known, :]  # (S, k, r)
        design = np.concatenate([np.ones(v.shape[:2] + (1,)), v], axis=2)
        target = z_known[None, :] - self.mu_[:, None] - self.benchmark_bias_[:, known]
        gram = design.transpose(0, 2, 1) @ design + self.alpha * np.eye(self.rank + 1)
        rhs = (design.transpose(0, 2, 1) @ target[..., None])[..., 0]
        sol = np.linalg.solve(gram, rhs[..., None])[..., 0]  # (S, r + 1)
        z = (
            self.mu_[:, None]
            + sol[:, :1]
            + self.benchmark_bias_
            + np.einsum("sr,smr->sm", sol[:, 1:], self.benchmark_factors_)
        )
        return z.mean(axis=0)


@dataclass(frozen=True)
class Completion:
    """A completed matrix: point estimate and interval, all in original units."""

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    model: Any = None
    level: float = 0.9


_PLAUSIBLE_LIMIT = 1e7  # as BenchPress.predict: a larger score is a typo, not a measurement


def _check_inputs(values: Any, scales: Sequence[str]) -> None:
    """Booleans, an empty matrix and percent cells outside 0-100 are errors, never data."""
    raw = np.asarray(values) if values is not None else np.asarray(np.nan)
    if raw.dtype == bool:
        raise TypeError("values must be scores (numbers with NaN for missing), got booleans")
    if raw.ndim == 2 and 0 in raw.shape:
        raise ValueError(f"values is empty (shape {raw.shape}): give models x benchmarks")
    arr = check_values(raw)
    percent = validate_scales(scales, arr.shape[1])
    with np.errstate(invalid="ignore"):
        outside = percent[None, :] & ((arr < 0.0) | (arr > 100.0))
        huge = np.abs(arr) > _PLAUSIBLE_LIMIT
    if outside.any():
        i, j = (int(k[0]) for k in np.nonzero(outside))
        raise ValueError(f"values[{i}, {j}] = {arr[i, j]:g} lies outside 0-100 (percent column)")
    if huge.any():
        i, j = (int(k[0]) for k in np.nonzero(huge))
        raise ValueError(f"values[{i}, {j}] = {arr[i, j]:g} is implausibly large")


def _check_in_range(values: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
    """An observed score outside the column's stated valid range contradicts it: an error."""
    with np.errstate(invalid="ignore"):
        outside = (values < lower[None, :]) | (values > upper[None, :])
    if outside.any():
        i, j = (int(k[0]) for k in np.nonzero(outside))
        raise ValueError(
            f"values[{i}, {j}] = {values[i, j]:g} lies outside its valid range "
            f"{lower[j]:g} to {upper[j]:g} (lower / upper)"
        )


def complete_matrix(
    values: np.ndarray,
    scales: Sequence[str],
    level: float = 0.9,
    *,
    method: str = "bayes",
    row_features: np.ndarray | None = None,
    floors: Sequence[float] | np.ndarray | None = None,
    lower: Sequence[float] | np.ndarray | None = None,
    upper: Sequence[float] | np.ndarray | None = None,
    row_groups: Sequence[str | None] | None = None,
    col_groups: Sequence[str | None] | None = None,
    new_model_features: Sequence[float] | np.ndarray | None = None,
    **params: Any,
) -> Completion:
    """Complete `values` (models x benchmarks, NaN = missing) and give `level` intervals.

    method "bayes" (default) fits `BayesianCompleter(**params)`, optionally with per-model side
    information `row_features` (models x f, e.g. release dates), each percent column's chance
    `floors` (25 on 4-way multiple choice), model families `row_groups` (e.g.
    `predictor.families.model_families(ids)`) and benchmark categories `col_groups` (and
    `new_model_features`, the features a model folded in later is assumed to have); "als"
    fits the BenchPress reference recipe `LowRankCompleter(**params)` (none of those). `lower`
    / `upper` give each column's valid range (default 0-100 on percent columns, open on the
    others): every method's predictions and interval ends are kept inside it. Observed cells
    come back unchanged, with low == high == mean.
    """
    level = check_level(level)
    _check_inputs(values, scales)
    percent = validate_scales(scales, np.shape(values)[1])
    _, bottom, top = column_ranges(percent, floors, lower, upper)  # checked before any fit
    _check_in_range(np.asarray(values, dtype=float), bottom, top)
    if method == "bayes":
        model: Any = BayesianCompleter(**params).fit(
            values,
            scales,
            row_features=row_features,
            floors=floors,
            lower=lower,
            upper=upper,
            row_groups=row_groups,
            col_groups=col_groups,
            new_model_features=new_model_features,
        )
    elif method == "als":
        extras = dict(
            row_features=row_features,
            floors=floors,
            row_groups=row_groups,
            col_groups=col_groups,
            new_model_features=new_model_features,
        )
        given = [name for name, value in extras.items() if value is not None]
        if given:
            raise ValueError(f"{', '.join(given)} needs method='bayes'")
        model = LowRankCompleter(**params).fit(values, scales)
    else:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    low, high = model.predict_interval(level)
    return Completion(
        mean=np.clip(model.predict(), bottom, top),
        low=np.clip(low, bottom, top),
        high=np.clip(high, bottom, top),
        model=model,
        level=level,
    )
