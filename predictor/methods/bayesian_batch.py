"""Batched Gaussian fold-in of many models at once against a fitted `BayesianCompleter`
(`BayesianCompleter.batch_fold_in`; the trust figures and probe selection use it).

`BayesianCompleter.fold_in` handles one new row (with Student-t reweighting). Probe selection
and "what to run next" score hundreds of candidate probe sets for every model of a matrix, so
this module does the same per-draw Gaussian posterior as `_fold_in_z` but for all models and
draws in single numpy operations, and without the Student-t reweighting steps (the plain
Gaussian posterior: the first step of `fold_in`). Normal equations are additive over known
cells, so adding or removing one probe column is a rank-1 update of a cached system.
"""

from __future__ import annotations

import numpy as np

from predictor.methods.bayesian_fitted import FittedBayesian
from predictor.methods.common import student_t_quantile


class BatchFoldIn:
    """Per-draw normal equations of every row of `values`, built up column by column."""

    def __init__(self, completer: FittedBayesian, values: np.ndarray, n_draws: int | None = None):
        if not hasattr(completer, "benchmark_params_"):
            raise ValueError("the completer is not fitted")
        values = np.asarray(values, dtype=float)
        m = completer.benchmark_params_.shape[1]
        if values.ndim != 2 or values.shape[1] != m:
            raise ValueError(f"values must be (models, {m}), got {values.shape}")
        d = 1 + int(completer.rank)
        n_all = completer.benchmark_params_.shape[0]
        if n_draws is None or n_draws >= n_all:
            draws = np.arange(n_all)
        else:  # evenly thinned, deterministic
            draws = np.unique(np.linspace(0, n_all - 1, max(1, n_draws)).round().astype(int))
        col = completer.benchmark_params_[draws]  # (S, m, d + f); features taken as average
        self.completer = completer
        self.values = values
        self.observed = np.isfinite(values)
        self.offset = completer.mu_[draws, None] + col[..., 0]  # (S, m)
        self.design = np.concatenate([np.ones(col.shape[:2] + (1,)), col[..., 1:d]], axis=2)
        self.weight = completer.benchmark_precision_[draws] / completer.new_model_noise_
        self.prior_prec = completer.model_prior_precision_[draws]  # (S, d, d)
        self.prior_shift = (self.prior_prec @ completer.model_prior_mean_[draws][..., None])[..., 0]
        tf = completer.transform_
        self.z = np.where(self.observed, tf.transform(np.where(self.observed, values, 50.0)), 0.0)
        # Per-column pieces: G_j = w_j x_j x_j^T (S, m, d, d); h_ij = w_j x_j (z_ij - off_j).
        wx = self.design * self.weight[..., None]
        self.gram = wx[..., :, None] * self.design[..., None, :]
        self.noise = completer.new_model_noise_ * completer.benchmark_noise_  # (m,)
        self.n_draws = len(draws)

    def system(self, columns, rows=None):
        """(precision (S, n, d, d), shift (S, n, d)) of the rows given their known `columns`."""
        rows = np.arange(self.values.shape[0]) if rows is None else np.asarray(rows)
        prec = np.broadcast_to(
            self.prior_prec[:, None], (self.n_draws, len(rows)) + self.prior_prec.shape[1:]
        ).copy()
        shift = np.broadcast_to(
            self.prior_shift[:, None], (self.n_draws, len(rows), self.prior_shift.shape[1])
        ).copy()
        for j in columns:
            p, s = self.column_terms(j, rows)
            prec += p
            shift += s
        return prec, shift

    def column_terms(self, j: int, rows=None):
        """Contribution of column j to every row's system (zero where the row lacks j)."""
        rows = np.arange(self.values.shape[0]) if rows is None else np.asarray(rows)
        known = self.observed[rows, j].astype(float)  # (n,)
        p = known[None, :, None, None] * self.gram[:, j][:, None]
        resid = self.z[rows, j][None, :] - self.offset[:, j][:, None]  # (S, n)
        s = (known[None, :] * resid * self.weight[:, j][:, None])[..., None] * (
            self.design[:, j][:, None, :]
        )
        return p, s

    def predict_z(self, prec, shift, columns, with_var: bool = False):
        """Posterior mean (n, t) [and variance of the mean function] at `columns` in z-space."""
        columns = np.asarray(columns, dtype=int)
        theta = np.linalg.solve(prec, shift[..., None])[..., 0]  # (S, n, d)
        x = self.design[:, columns]  # (S, t, d)
        draws = self.offset[:, None, columns] + np.einsum("std,snd->snt", x, theta)
        mean = draws.mean(axis=0)
        if not with_var:
            return mean
        cov = np.linalg.inv(prec)  # (S, n, d, d)
        param = np.einsum("std,snde,ste->snt", x, cov, x)
        return mean, draws.var(axis=0) + param.mean(axis=0)

    def to_units(self, z, columns):
        """z-space values at `columns` -> original units (percent strictly inside 0-100)."""
        return self.completer.transform_.inverse_at(z, columns)

    def halfwidth_z(self, var, columns, level: float):
        c = self.completer
        q = student_t_quantile(0.5 + level / 2.0, float(c.nu))
        return c.interval_scale * q * np.sqrt(var + self.noise[np.asarray(columns, dtype=int)])
