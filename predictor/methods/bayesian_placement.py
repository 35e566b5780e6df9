"""The default method's placement of models for a new benchmark (the transposed fold-in).

A snapshot keeps the posterior draws of the benchmark side only; given draw s, each model's
[a_i, u_i] has the Gaussian conditional the Gibbs sampler draws it from (its observed cells,
that draw's population prior, Student-t reweighting), so the model side is rebuilt by
sampling it. `predictor.new_benchmark` folds the new column in against the result.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from predictor.methods.base import Placement
from predictor.methods.bayesian_fitted import FittedBayesian

# Student-t reweighting steps when placing the fitted models (as `fold_in` does).
PLACEMENT_REWEIGHTS = 3
_CELL_BUDGET = 2_000_000  # draws x models x benchmarks per chunk when placing models


def bayes_placement(
    comp: FittedBayesian,
    values: np.ndarray,
    model_noise: np.ndarray | None,
    n_samples: int,
    random_state: int,
    groups: Sequence[str | None] | None = None,
) -> Placement:
    """The models of `values` placed against the kept draws: each row's [a_i, u_i] sampled
    `n_samples` times per draw from its Gaussian conditional (see `predictor.new_benchmark`).
    `groups`: each row's family; a family the fit knows gives that row its family's prior
    (as `fold_in` does), any other row the population's."""
    values = np.asarray(values, dtype=float)
    d = 1 + int(comp.rank)
    n = values.shape[0]
    col = comp.benchmark_params_[..., :d]  # (S, m, d); side features taken as average
    n_draws, m, _ = col.shape
    if values.shape[1] != m:
        raise ValueError(
            f"values must have {m} columns (the fitted benchmarks), got {values.shape}"
        )
    if model_noise is None:
        fitted = np.asarray(getattr(comp, "model_noise_", np.empty(0)))
        model_noise = fitted if fitted.shape == (n,) else np.full(n, comp.new_model_noise_)
    model_noise = np.asarray(model_noise, dtype=float)
    observed = np.isfinite(values)
    z = np.where(observed, comp.transform_.transform(np.where(observed, values, 50.0)), 0.0)
    theta = np.empty((n_draws, n, d))
    cov = np.empty((n_draws, n, d, d))
    step = max(1, _CELL_BUDGET // max(n_draws * m, 1))
    priors = None if groups is None else _row_priors(comp, groups, n)
    for start in range(0, n, step):
        rows = slice(start, min(start + step, n))
        prior = None if priors is None else (priors[0][:, rows], priors[1][:, rows])
        theta[:, rows], cov[:, rows] = _row_posteriors(
            comp, col, z[rows], observed[rows], model_noise[rows], prior
        )
    rng = np.random.default_rng(np.random.SeedSequence([int(random_state), n]))
    chol = np.linalg.cholesky((cov + np.swapaxes(cov, -1, -2)) / 2.0)
    noise = rng.standard_normal((n_samples, n_draws, n, d, 1))
    sampled = theta[None] + (chol[None] @ noise)[..., 0]  # (R, S, n, d)
    sampled = sampled.reshape(n_samples * n_draws, n, d)
    draw = np.tile(np.arange(n_draws), n_samples)
    offset = comp.mu_[draw, None] + sampled[..., 0]
    design = np.concatenate([np.ones((len(draw), n, 1)), sampled[..., 1:]], axis=2)
    return Placement(
        offset=offset,
        design=design,
        draw=draw,
        benchmark_params=col,
        benchmark_noise=1.0 / comp.benchmark_precision_,
        model_noise=model_noise,
        spread=np.asarray(comp.transform_.std_, dtype=float),
        percent=np.asarray(comp.transform_.is_percent_, dtype=bool),
        nu=float(comp.nu),
        interval_scale=float(comp.interval_scale),
    )


def _row_priors(
    comp: FittedBayesian, groups: Sequence[str | None], n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per draw and row: the prior mean (S, n, d) and precision (S, n, d, d) of [a_i, u_i]."""
    if len(groups) != n:
        raise ValueError(f"groups must name one family (or None) per row, got {len(groups)}")
    parts = [comp.model_prior(g) for g in groups]
    return np.stack([m for m, _ in parts], axis=1), np.stack([p for _, p in parts], axis=1)


def _row_posteriors(comp, col, z, observed, model_noise, prior=None):
    """Per draw: the Gaussian posterior (mean (S, n, d), covariance (S, n, d, d)) of each row's
    [a_i, u_i] given its observed cells, with Student-t reweighting (as `fold_in`); `prior`:
    per-row (mean, precision), default the population's for every row."""
    n_draws, m, d = col.shape
    offset = comp.mu_[:, None] + col[..., 0]  # (S, m)
    x = np.concatenate([np.ones((n_draws, m, 1)), col[..., 1:]], axis=2)  # (S, m, d)
    outer = (x[..., :, None] * x[..., None, :]).reshape(n_draws, m, d * d)
    base = observed[None] * (comp.benchmark_precision_[:, None, :] / model_noise[None, :, None])
    target = np.where(observed[None], z[None] - offset[:, None, :], 0.0)  # (S, n, m)
    if prior is None:  # the population's, shared by every row
        prior_prec = comp.model_prior_precision_[:, None]  # (S, 1, d, d)
        prior_shift = (comp.model_prior_precision_ @ comp.model_prior_mean_[..., None])[..., 0]
        prior_shift = prior_shift[:, None]  # (S, 1, d)
    else:
        prior_prec = prior[1]  # (S, n, d, d)
        prior_shift = (prior_prec @ prior[0][..., None])[..., 0]  # (S, n, d)
    weight = base
    nu = float(comp.nu)
    for step in range(PLACEMENT_REWEIGHTS + 1):
        gram = (weight @ outer).reshape(weight.shape[:2] + (d, d)) + prior_prec
        rhs = (weight * target) @ x + prior_shift
        theta = np.linalg.solve(gram, rhs[..., None])[..., 0]
        if step < PLACEMENT_REWEIGHTS:
            resid = target - theta @ np.swapaxes(x, 1, 2)
            weight = base * (nu + 1.0) / (nu + base * resid**2)
    return theta, np.linalg.inv(gram)
