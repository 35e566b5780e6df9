"""The BenchPress reference recipe, "logit bias ALS", as a `Completer`.

In the z-scored logit space each score is mu + a_i + b_j + u_i . v_j, fitted by
ridge-regularised alternating least squares and averaged over several random
initialisations. Intervals come from an internal K-fold cross-validation of |z residuals|.
It has no predictive distribution: no trust figure, no predictive draws, no batched fold-in
(`NotSupportedError`). Snapshot state layout 1 (unchanged since the first snapshot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from predictor.methods.base import NotSupportedError, Placement, check_side
from predictor.methods.common import (
    check_level,
    check_values,
    measurement_variance_z,
    round_state,
)
from predictor.transforms import ScaleTransform

_PARAMS = (
    "rank",
    "alpha",
    "n_iter",
    "n_seeds",
    "random_state",
    "cv_folds",
    "interval_prior",
    "eps",
)
_NO_PREDICTIVE = "the recipe ALS has no predictive distribution"


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


class LowRankCompleter:
    """Bias + rank-r ALS ensemble in z-scored logit space (BenchPress reference recipe).

    Intervals come from an internal K-fold cross-validation over the observed cells given to
    `fit`: the L-quantile of |out-of-fold z residual| per benchmark, shrunk toward the global
    quantile by a pseudo-count of `interval_prior` residuals. `cv_folds=0` skips this.
    """

    method: ClassVar[str] = "als"
    label: ClassVar[str] = "alternating least squares (ALS)"
    state_version: ClassVar[int] = 1  # layout 1, unchanged since the first snapshot
    side_information: ClassVar[frozenset[str]] = frozenset()

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
    def get_params(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _PARAMS}

    def fit(self, values: np.ndarray, scales: Sequence[str], **side: Any) -> LowRankCompleter:
        """Fit on a float matrix with NaN for missing cells; `scales` gives each column's kind.
        The recipe uses no side information: any given is an error (`check_side`)."""
        check_side(self.method, self.side_information, side)
        self._check_params()
        values = check_values(values)
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
        self.fold_in_calibration_ = None
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
        level = check_level(level)
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
        self,
        row: np.ndarray,
        return_z: bool = False,
        keep_observed: bool = True,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Predict every benchmark for a NEW model from its known scores (NaN = unknown).

        Each seed's bias and factors for the new row are a ridge fit against that seed's
        benchmark factors; the matrix itself is not refitted. With `return_z` also returns the
        ensemble z-space prediction. `noise_sd` (per benchmark, original units; NaN or 0 =
        exact): the known scores' measurement noise, which weights each in the ridge fit by
        s^2 / (s^2 + e^2) (s: the residual noise scale, e: its noise in z-space).
        """
        self._no_side(features, group)
        row = self._check_row(row)
        z_row = self._fold_in_z(row, noise_sd)
        pred = self.transform_.inverse(z_row)
        if keep_observed:
            pred = np.where(np.isnan(row), pred, row)
        return (pred, z_row) if return_z else pred

    def fold_in_interval(
        self,
        row: np.ndarray,
        level: float = 0.9,
        keep_observed: bool = True,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) for a new model, using the same CV half-widths as `predict_interval`
        (around the fold-in weighted by `noise_sd`, as in `fold_in`; the widths are the
        recipe's cross-validated ones either way)."""
        self._no_side(features, group)
        row = self._check_row(row)
        # never of zero width for a new model (`ScaleTransform.interval`)
        low, high = self.transform_.interval(
            self._fold_in_z(row, noise_sd), self.interval_halfwidth_z(level)
        )
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

    def _fold_in_z(self, row: np.ndarray, noise_sd: np.ndarray | None = None) -> np.ndarray:
        known = ~np.isnan(row)
        z_known = self.transform_.transform(row)[known]
        v = self.benchmark_factors_[:, known, :]  # (S, k, r)
        design = np.concatenate([np.ones(v.shape[:2] + (1,)), v], axis=2)
        target = z_known[None, :] - self.mu_[:, None] - self.benchmark_bias_[:, known]
        extra = measurement_variance_z(self.transform_, row, noise_sd)
        weighted = design.transpose(0, 2, 1)  # (S, r + 1, k)
        if extra is not None:  # a noisy score counts for less: s^2 / (s^2 + e^2)
            residual = self._residual_sd() ** 2
            weighted = weighted * (residual / (residual + extra[known]))
        gram = weighted @ design + self.alpha * np.eye(self.rank + 1)
        rhs = (weighted @ target[..., None])[..., 0]
        sol = np.linalg.solve(gram, rhs[..., None])[..., 0]  # (S, r + 1)
        z = (
            self.mu_[:, None]
            + sol[:, :1]
            + self.benchmark_bias_
            + np.einsum("sr,smr->sm", sol[:, 1:], self.benchmark_factors_)
        )
        return z.mean(axis=0)

    def fold_in_summary(
        self,
        row: np.ndarray,
        level: float = 0.9,
        width: float = 5.0,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, None]:
        """(prediction, low, high, None): no predictive distribution, so no P(|error| <= width)."""
        low, high = self.fold_in_interval(row, level=level, noise_sd=noise_sd)
        return self.fold_in(row, noise_sd=noise_sd), low, high, None

    def _no_side(self, features: Any, group: Any) -> None:
        # a fold-in's side information is simply not used by this method: the answer says so
        # through `new_model_side` (no dates, no families)
        del features, group

    def new_model_side(self) -> tuple[None, list[str]]:
        """No release-date feature and no families: a new model is just its scores."""
        return None, []

    def noise_scale_z(self) -> np.ndarray:
        """Per-benchmark noise scale in z-space: the cross-validated |residual| median / 0.6745."""
        sd = self._residual_sd()
        return np.full(self.z_pred_.shape[1], sd)

    def _residual_sd(self) -> float:
        resid = np.asarray(self.cv_abs_residuals_, dtype=float)
        # a normal's median |residual| is 0.6745 sd
        return float(np.median(resid)) / 0.6745 if len(resid) else 0.5

    def predict_within(self, width: float = 5.0) -> np.ndarray:
        raise NotSupportedError(f"{_NO_PREDICTIVE}: no P(|error| <= {width:g}) per cell")

    def fold_in_predictive(self, row, features=None, group=None, noise_sd=None):
        raise NotSupportedError(f"{_NO_PREDICTIVE}: no fold-in predictive scale")

    def interval_multiplier(self, level: float) -> float:
        raise NotSupportedError(f"{_NO_PREDICTIVE}: its intervals are not calibrated by factor")

    def fold_in_draws(
        self, row, n_draws=4000, random_state=0, level=0.9, features=None, group=None, noise_sd=None
    ):
        raise NotSupportedError(f"{_NO_PREDICTIVE}: it has no predictive draws")

    def batch_fold_in(self, values: np.ndarray, n_draws: int | None = None) -> Any:
        raise NotSupportedError(f"{_NO_PREDICTIVE}: probe selection and trust figures need one")

    # ---------------------------------------------------------- a new benchmark
    def placement(
        self,
        values: np.ndarray,
        model_noise: np.ndarray | None = None,
        n_model_samples: int = 5,
        random_state: int = 0,
        new_models: bool = False,
        groups: Sequence[str | None] | None = None,
    ) -> Placement:
        """Each seed is a draw; fitted rows keep their factors, other rows get a ridge
        fold-in per seed; the noise is the cross-validated residual scale, with Student-t(3)
        tails. The factors carry no posterior here, so its intervals lack their uncertainty
        and cover less than the default method's (see `benchmarks/new_benchmark.py`)."""
        # no posterior to sample and no families
        del model_noise, n_model_samples, random_state, new_models, groups
        values = np.asarray(values, dtype=float)
        n_seeds, m, _ = self.benchmark_factors_.shape
        n_fit = self.model_factors_.shape[1]
        if values.shape[0] == n_fit and np.array_equal(
            np.isfinite(values), np.asarray(self.observed_, dtype=bool)
        ):
            bias, factors = self.model_bias_, self.model_factors_
        else:
            bias, factors = self._ridge_rows_of(values)
        offset = self.mu_[:, None] + bias
        design = np.concatenate([np.ones((n_seeds, values.shape[0], 1)), factors], axis=2)
        params = np.concatenate([self.benchmark_bias_[..., None], self.benchmark_factors_], axis=2)
        sd = self._residual_sd()
        return Placement(
            offset=offset,
            design=design,
            draw=np.arange(n_seeds),
            benchmark_params=params,
            benchmark_noise=np.full((n_seeds, m), sd**2),
            model_noise=np.ones(values.shape[0]),
            spread=np.asarray(self.transform_.std_, dtype=float),
            percent=np.asarray(self.transform_.is_percent_, dtype=bool),
            nu=3.0,  # the default method's Student-t tails: the factors' own error is not modelled
            interval_scale=1.0,
        )

    def _ridge_rows_of(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per seed, each row's ridge bias and factors against the seed's benchmark factors."""
        observed = np.isfinite(values)
        z = np.where(observed, self.transform_.transform(np.where(observed, values, 50.0)), 0.0)
        v = self.benchmark_factors_  # (S, m, r)
        x = np.concatenate([np.ones(v.shape[:2] + (1,)), v], axis=2)
        k = x.shape[2]
        target = np.where(
            observed[None], z[None] - self.mu_[:, None, None] - self.benchmark_bias_[:, None], 0.0
        )
        outer = (x[..., :, None] * x[..., None, :]).reshape(x.shape[0], x.shape[1], k * k)
        w = np.broadcast_to(observed.astype(float), (x.shape[0],) + observed.shape)
        gram = (w @ outer).reshape(x.shape[0], -1, k, k) + self.alpha * np.eye(k)
        sol = np.linalg.solve(gram, ((w * target) @ x)[..., None])[..., 0]
        return sol[..., 0], sol[..., 1:]

    # ---------------------------------------------------------------- snapshots
    def to_state(self) -> dict[str, Any]:
        """Plain JSON-able state (layout 1), floats at 10 significant digits."""
        return {
            "state_version": self.state_version,
            "params": self.get_params(),
            "scales": list(self.transform_.scales),
            "transform_mean": round_state(self.transform_.mean_),
            "transform_std": round_state(self.transform_.std_),
            "mu": round_state(self.mu_),
            "model_bias": round_state(self.model_bias_),
            "benchmark_bias": round_state(self.benchmark_bias_),
            "model_factors": round_state(self.model_factors_),
            "benchmark_factors": round_state(self.benchmark_factors_),
            "cv_abs_residuals": round_state(self.cv_abs_residuals_),
            "cv_columns": [int(c) for c in self.cv_columns_],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any], values: np.ndarray) -> LowRankCompleter:
        """A completer equivalent to the exported one; `values` are the fitted observed cells."""
        if state.get("state_version") != cls.state_version:
            raise ValueError(f"unsupported fit state version {state.get('state_version')!r}")
        model = cls(**state["params"])
        model.transform_ = ScaleTransform.restored(
            state["scales"], model.eps, state["transform_mean"], state["transform_std"]
        )
        model.mu_ = np.asarray(state["mu"], dtype=float)
        model.model_bias_ = np.asarray(state["model_bias"], dtype=float)
        model.benchmark_bias_ = np.asarray(state["benchmark_bias"], dtype=float)
        rank = int(state["params"]["rank"])
        n_seeds = len(model.mu_)
        model.model_factors_ = np.asarray(state["model_factors"], dtype=float).reshape(
            n_seeds, -1, rank
        )
        model.benchmark_factors_ = np.asarray(state["benchmark_factors"], dtype=float).reshape(
            n_seeds, -1, rank
        )
        model.cv_abs_residuals_ = np.asarray(state["cv_abs_residuals"], dtype=float)
        model.cv_columns_ = np.asarray(state["cv_columns"], dtype=int)
        model.z_pred_ = (
            model.mu_[:, None, None]
            + model.model_bias_[:, :, None]
            + model.benchmark_bias_[:, None, :]
            + model.model_factors_ @ model.benchmark_factors_.transpose(0, 2, 1)
        ).mean(axis=0)
        model.values_ = np.asarray(values, dtype=float)
        model.observed_ = ~np.isnan(model.values_)
        model.fold_in_calibration_ = None
        return model
