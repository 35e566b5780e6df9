"""Robust Bayesian low-rank completion: the default method behind `complete_matrix`.

Same space as the BenchPress recipe (percent -> logit, then per-column z-score), a richer model:

    z_ij = mu + a_i + b_j + u_i . v_j  [+ s_i . g_j]  + e_ij,
    e_ij ~ Student-t(nu) with scale 1 / sqrt(tau_j * rho_i).

- Bayesian probabilistic matrix factorisation (Salakhutdinov & Mnih, 2008): [a_i, u_i] and
  [b_j, v_j, g_j] have Gaussian priors whose means and precisions get Normal-Wishart
  hyperpriors, so the amount of shrinkage is learned from the cells given, not tuned.
- Heteroscedastic noise: a precision tau_j per benchmark (prior Gamma(2, rate 0.1)) and a
  multiplier rho_i per model (prior Gamma(2, rate 2), mean 1).
- Robust: Student-t noise (nu = 3) as a scale mixture of normals; each cell's weight is set to
  its conditional mean (nu + 1) / (nu + tau_j rho_i e_ij^2), so a few odd scores (a different
  harness, a typo) do not drag a model's or a benchmark's factors.
- Optional side information s_i per model (for instance the release date), with a loading g_j
  per benchmark learned like the factors.
- Optional groups (`predictor.methods.hierarchy`): model families (settings, sizes and
  snapshots of one line) and benchmark categories. A grouped vector is drawn around its
  group's mean, the group means around the population's, and how far apart the groups are is
  learned (kappa), so a model with few scores borrows from its siblings.
- The transform (`ScaleTransform`) can take a chance floor per percent column and keeps
  back-transformed values inside each column's valid range.
- Sparse benchmarks: a column with a few scores is z-scored on whichever models have it, so
  its spread is pooled with a typical percent column's (`spread_prior` pseudo-scores) and its
  bias prior is widened by 1 + `sparse_bias` / cells (`_bias_widening`).

Inference is blocked Gibbs sampling (8 chains from random starts, 20 sweeps discarded, 20
kept), every chain advanced in the same numpy operations; predictions are posterior means over
the kept draws. Per-cell work touches the observed cells only; the normal equations are BLAS
products on scattered (n x m) weights for small matrices and float32 segment sums for big
ones, and big matrices run fewer chains (chains x observed cells <= 1e6, at least 2). All
hyperparameters are fixed in this file; nothing is tuned on evaluation folds.

Intervals: the posterior predictive of a cell is approximated by a Student-t(nu) whose scale
combines the spread of the draws' means with the noise scale; its quantile is multiplied by
`interval_scale`. A new model is folded in against the kept draws of the benchmark parameters
(a small Gaussian solve per draw), without refitting the matrix; given its family (`group`)
its prior is that family's mean, given its features (`features`) they enter as in the fit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from predictor.methods.base import SIDE_KEYWORDS, Placement
from predictor.methods.bayesian_batch import BatchFoldIn
from predictor.methods.bayesian_many import fold_in_predictive_many
from predictor.methods.bayesian_placement import bayes_placement
from predictor.methods.bayesian_state import STATE_VERSION, export_state, restore_state
from predictor.methods.common import (
    check_level,
    check_row,
    check_values,
    measurement_variance_z,
    student_t_cdf,
    student_t_quantile,
)
from predictor.methods.fold_in_calibration import FoldInCalibration
from predictor.methods.hierarchy import GroupPrior, Groups, encode_groups
from predictor.transforms import ScaleTransform

# Student-t reweighting steps when a new model is folded in.
_FOLD_IN_REWEIGHTS = 3
# Per-cell arrays x chains above which chains are advanced in several batches (memory bound).
_MAX_BATCH_CELLS = 1_500_000
# Observed cells x chains budget: big matrices run fewer chains (at least 2); their posterior
# is narrow, so the extra chains buy little there while costing linear time.
_CHAIN_CELL_BUDGET = 1_000_000
# Dense (n x m) layout below this many matrix entries or at least this fill; else sparse.
_DENSE_MAX_SIZE = 200_000
_DENSE_MIN_FILL = 0.3
# Spread of the random starting factors: small enough to start near "no structure", large
# enough that a 1,000 x 1,000 matrix converges within the burn-in.
_INIT_SD = 0.2


@lru_cache(maxsize=16)
def _pairs(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (a, b), a <= b, of the d(d+1)/2 distinct entries of a symmetric d x d."""
    return np.triu_indices(d)


def _outer(x: np.ndarray) -> np.ndarray:
    """(..., d) -> (..., d(d+1)/2): the distinct products x_a x_b, a <= b."""
    ia, ib = _pairs(x.shape[-1])
    return x[..., ia] * x[..., ib]


def _unpack(packed: np.ndarray, d: int) -> np.ndarray:
    """(..., d(d+1)/2) distinct entries -> (..., d, d) symmetric matrices."""
    ia, ib = _pairs(d)
    out = np.empty(packed.shape[:-1] + (d, d))
    out[..., ia, ib] = packed
    out[..., ib, ia] = packed
    return out


class _DenseLayout:
    """Per-cell quantities as (chains, cells) vectors over the observed cells; normal equations
    as matrix products after scattering the cell weights into (chains, n, m) arrays.

    For small or well-filled matrices: elementwise work grows with the observed cells only and
    the products run in BLAS.
    """

    def __init__(self, z: np.ndarray, observed: np.ndarray) -> None:
        self.n, self.m = observed.shape
        self.rows, self.cols = np.nonzero(observed)  # row-major
        self.flat = self.rows * self.m + self.cols
        self.y = z[self.rows, self.cols]
        self.row_count = observed.sum(axis=1)
        self.col_count = observed.sum(axis=0)
        self.n_cells = len(self.y)
        self.y_mean = float(self.y.mean()) if self.n_cells else 0.0

    def at_rows(self, v: np.ndarray) -> np.ndarray:
        return v[:, self.rows]

    def at_cols(self, v: np.ndarray) -> np.ndarray:
        return v[:, self.cols]

    def dense(self, cell: np.ndarray) -> np.ndarray:
        out = np.zeros((cell.shape[0], self.n * self.m))
        out[:, self.flat] = cell
        return out.reshape(-1, self.n, self.m)

    def bilinear(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Cell values p_i . q_j from row parts (C, n, r) and column parts (C, m, r)."""
        full = (p @ q.transpose(0, 2, 1)).reshape(p.shape[0], -1)
        return full[:, self.flat]

    def row_sums(self, cell: np.ndarray, col_weight: np.ndarray) -> np.ndarray:
        """sum_j col_weight_j cell_ij for every row: (C, n)."""
        return (self.dense(cell) @ col_weight[..., None])[..., 0]

    def col_sums(self, cell: np.ndarray, row_weight: np.ndarray) -> np.ndarray:
        """sum_i row_weight_i cell_ij for every column: (C, m)."""
        return (row_weight[:, None, :] @ self.dense(cell))[:, 0]

    def normal_rows(self, weight, wy, x_cols, p_rows, q_cols):
        """Weighted normal equations of every row: sum_j w_ij x_j x_j^T and
        sum_j w_ij (y_ij - p_i . q_j) x_j, with wy = w * y (cells observed in the row).

        The offset term is expanded into matrix products, so no per-cell target is formed.
        The scattered weights are kept for `normal_cols` and for another call on the same
        `weight` and `wy` objects (a sweep's draw of the unknown features).
        """
        source = getattr(self, "_source", None)
        if source is not None and source[0] is weight and source[1] is wy:
            w, wy = self._cache
        else:
            self._source = (weight, wy)  # held, so their identities cannot be reused
            w, wy = self.dense(weight), self.dense(wy)
            self._cache = (w, wy)
        d, r = x_cols.shape[-1], q_cols.shape[-1]
        n_pairs = d * (d + 1) // 2
        prod = w @ np.concatenate([_outer(x_cols), _outer_pair(q_cols, x_cols)], axis=2)
        gram = _unpack(prod[..., :n_pairs], d)
        corr = prod[..., n_pairs:].reshape(prod.shape[:2] + (r, d))
        return gram, wy @ x_cols - np.einsum("cnr,cnrd->cnd", p_rows, corr)

    def normal_cols(self, weight, wy, x_rows, p_cols, q_rows):
        """As `normal_rows` for every column, offset q_i . p_j; (x^T W) keeps W contiguous.

        Reuses the dense weights of the preceding `normal_rows` call (same weights)."""
        w, wy = self._cache
        d, r = x_rows.shape[-1], q_rows.shape[-1]
        n_pairs = d * (d + 1) // 2
        parts = np.concatenate([_outer(x_rows), _outer_pair(q_rows, x_rows)], axis=2)
        prod = (parts.transpose(0, 2, 1) @ w).transpose(0, 2, 1)  # (C, m, n_pairs + r*d)
        gram = _unpack(prod[..., :n_pairs], d)
        corr = prod[..., n_pairs:].reshape(prod.shape[:2] + (r, d))
        rhs = (x_rows.transpose(0, 2, 1) @ wy).transpose(0, 2, 1)
        return gram, rhs - np.einsum("cmr,cmrd->cmd", p_cols, corr)


class _SparseLayout:
    """Per-cell quantities as (chains, cells) arrays over the observed cells only.

    Normal equations are segment sums of per-cell outer products; memory and time grow with
    the number of observed cells, not with models x benchmarks.
    """

    def __init__(self, z: np.ndarray, observed: np.ndarray) -> None:
        self.n, self.m = observed.shape
        self.rows, self.cols = np.nonzero(observed)  # row-major
        self.y = z[self.rows, self.cols]
        self.row_count = np.bincount(self.rows, minlength=self.n)
        self.col_count = np.bincount(self.cols, minlength=self.m)
        self.n_cells = len(self.y)
        self.y_mean = float(self.y.mean()) if self.n_cells else 0.0
        self.perm = np.argsort(self.cols, kind="stable")  # column-major order of the cells
        self.rows_by_col = self.rows[self.perm]
        self.row_seg = _segments(self.row_count)
        self.col_seg = _segments(self.col_count)
        self._buffer: np.ndarray | None = None

    def at_rows(self, v: np.ndarray) -> np.ndarray:
        return v[:, self.rows]

    def at_cols(self, v: np.ndarray) -> np.ndarray:
        return v[:, self.cols]

    def bilinear(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        pt = p.transpose(0, 2, 1)[:, :, self.rows]  # (C, r, cells): cells last is fastest
        pt *= q.transpose(0, 2, 1)[:, :, self.cols]
        return pt.sum(axis=1)

    def row_sums(self, cell: np.ndarray, col_weight: np.ndarray) -> np.ndarray:
        return _segment_sum(cell * col_weight[:, self.cols], *self.row_seg, self.n)

    def col_sums(self, cell: np.ndarray, row_weight: np.ndarray) -> np.ndarray:
        weighted = (cell * row_weight[:, self.rows])[:, self.perm]
        return _segment_sum(weighted, *self.col_seg, self.m)

    def normal_rows(self, weight, wy, x_cols, p_rows, q_cols):
        target_w = wy - weight * self.bilinear(p_rows, q_cols)
        x = x_cols.astype(np.float32).transpose(0, 2, 1)[:, :, self.cols]  # (C, d, cells)
        return self._normal(x, weight, target_w, self.row_seg, self.n)

    def normal_cols(self, weight, wy, x_rows, p_cols, q_rows):
        target_w = (wy - weight * self.bilinear(q_rows, p_cols))[:, self.perm]
        x = x_rows.astype(np.float32).transpose(0, 2, 1)[:, :, self.rows_by_col]
        return self._normal(x, weight[:, self.perm], target_w, self.col_seg, self.m)

    def _normal(self, x, weight, target_w, segments, n_blocks):
        """Segment sums of w x x^T (distinct entries only) and of (w t) x; cells last.

        The per-cell products are float32 (the sums feed a random draw; 1e-6 relative error is
        far below its noise) and go to a buffer kept between calls: allocating them afresh
        each sweep costs more in page faults than the arithmetic.
        """
        n_chains, d, n_cells = x.shape
        ia, ib = _pairs(d)
        key = (n_chains, len(ia), n_cells)
        if self._buffer is None or self._buffer.shape != key:
            self._buffer = np.empty(key, dtype=np.float32)
        products = self._buffer
        wx = x * weight.astype(np.float32)[:, None, :]
        for k, (a, b) in enumerate(zip(ia, ib, strict=True)):
            np.multiply(wx[:, a], x[:, b], out=products[:, k])
        gram = _segment_sum_last(products, *segments, n_blocks)  # (C, n_blocks, pairs)
        np.multiply(x, target_w.astype(np.float32)[:, None, :], out=wx)
        rhs = _segment_sum_last(wx, *segments, n_blocks)
        return _unpack(gram, d), rhs


def _segment_sum_last(x: np.ndarray, starts, nonempty, n: int) -> np.ndarray:
    """Sum (C, k, cells) over contiguous cell segments -> (C, n, k)."""
    out = np.zeros((x.shape[0], n, x.shape[1]))
    if len(starts):
        out[:, nonempty] = np.add.reduceat(x, starts, axis=2, dtype=np.float64).transpose(0, 2, 1)
    return out


def _outer_pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(..., r) and (..., d) -> (..., r * d) flattened outer products."""
    return (a[..., :, None] * b[..., None, :]).reshape(a.shape[:-1] + (a.shape[-1] * b.shape[-1],))


def _segments(count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start of each non-empty segment of a sorted cell list, and which segments they are."""
    starts = np.cumsum(count) - count
    return starts[count > 0], np.flatnonzero(count > 0)


def _segment_sum(x: np.ndarray, starts: np.ndarray, nonempty: np.ndarray, n: int) -> np.ndarray:
    """Sum (C, cells, ...) over contiguous segments along axis 1 -> (C, n, ...)."""
    out = np.zeros((x.shape[0], n) + x.shape[2:])
    if len(starts):
        out[:, nonempty] = np.add.reduceat(x, starts, axis=1)
    return out


@lru_cache(maxsize=16)
def _tril_indices(d: int) -> tuple[np.ndarray, np.ndarray]:
    return np.tril_indices(d, -1)


def _sample_normal_wishart(
    rng: np.random.Generator, factors: np.ndarray, beta0: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    """Draw (mean, precision) of the factors' prior from its Normal-Wishart posterior.

    Hyperprior: mean0 = 0, beta0, W0 = I, nu0 = dimension. factors (C, n, d).
    """
    n_chains, n, d = factors.shape
    mean = factors.mean(axis=1)
    centred = factors - mean[:, None, :]
    scatter = centred.transpose(0, 2, 1) @ centred
    beta = beta0 + n
    w_inv = np.eye(d) + scatter + (beta0 * n / beta) * (mean[:, :, None] * mean[:, None, :])
    w = np.linalg.inv(w_inv)
    chol_w = np.linalg.cholesky((w + w.transpose(0, 2, 1)) / 2)
    # Bartlett decomposition of Wishart(dof = d + n, scale = w).
    bartlett = np.zeros((n_chains, d, d))
    lower = _tril_indices(d)
    bartlett[:, lower[0], lower[1]] = rng.standard_normal((n_chains, len(lower[0])))
    dof = d + n - np.arange(d)
    bartlett[:, np.arange(d), np.arange(d)] = np.sqrt(rng.chisquare(dof, size=(n_chains, d)))
    root = chol_w @ bartlett
    precision = root @ root.transpose(0, 2, 1)
    # mean | precision ~ N(n * mean / beta, (beta * precision)^-1)
    cov_chol = np.linalg.cholesky(np.linalg.inv(beta * precision))
    noise = (cov_chol @ rng.standard_normal((n_chains, d, 1)))[..., 0]
    return n * mean / beta + noise, precision


def _cholesky(a: np.ndarray) -> np.ndarray:
    """Lower Cholesky factors of a stack (..., d, d) of small SPD matrices.

    Loops over the d(d+1)/2 entries with whole-stack numpy operations: for the 3x3 to 6x6
    systems solved here this is several times faster than a LAPACK call per matrix.
    """
    d = a.shape[-1]
    low = np.zeros_like(a)
    for j in range(d):
        diag = a[..., j, j] - np.einsum("...k,...k->...", low[..., j, :j], low[..., j, :j])
        low[..., j, j] = np.sqrt(np.maximum(diag, 1e-300))
        for i in range(j + 1, d):
            off = a[..., i, j] - np.einsum("...k,...k->...", low[..., i, :j], low[..., j, :j])
            low[..., i, j] = off / low[..., j, j]
    return low


def _forward(low: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve L x = b for a stack of lower-triangular L (..., d, d) and b (..., d)."""
    x = np.empty_like(b)
    for i in range(b.shape[-1]):
        acc = b[..., i] - np.einsum("...k,...k->...", low[..., i, :i], x[..., :i])
        x[..., i] = acc / low[..., i, i]
    return x


def _backward(low: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve L^T x = b for a stack of lower-triangular L (..., d, d) and b (..., d)."""
    d = b.shape[-1]
    x = np.empty_like(b)
    for i in reversed(range(d)):
        acc = b[..., i] - np.einsum("...k,...k->...", low[..., i + 1 :, i], x[..., i + 1 :])
        x[..., i] = acc / low[..., i, i]
    return x


def _sample_gaussian(
    rng: np.random.Generator,
    gram: np.ndarray,
    rhs: np.ndarray,
    prior_mean: np.ndarray,
    prior_prec: np.ndarray,
) -> np.ndarray:
    """Draw every block's coefficients from its Gaussian conditional, all chains at once.

    gram (C, n, d, d) and rhs (C, n, d) are the weighted normal equations of the cells; the
    prior is (C, d) or one mean per block (C, n, d), and (C, d, d). With
    P = gram + prior precision = L L^T and h = rhs + prior precision @ prior mean, the draw
    L^-T (L^-1 h + eps) has mean P^-1 h and covariance P^-1.
    """
    if prior_prec.ndim == 4:  # one precision per block (C, n, d, d)
        low = _cholesky(gram + prior_prec)
        means = prior_mean if prior_mean.ndim == 3 else prior_mean[:, None, :]
        shift = rhs + (prior_prec @ means[..., None])[..., 0]
        return _backward(low, _forward(low, shift) + rng.standard_normal(shift.shape))
    low = _cholesky(gram + prior_prec[:, None])
    if prior_mean.ndim == 3:  # one prior mean per block (C, n, d): a grouped prior
        shift = rhs + prior_mean @ prior_prec  # the precision is symmetric
    else:
        shift = rhs + (prior_prec @ prior_mean[..., None])[:, None, :, 0]
    return _backward(low, _forward(low, shift) + rng.standard_normal(shift.shape))


@dataclass(frozen=True)
class _Draws:
    """Kept Gibbs draws, chains flattened: leading axis = draw."""

    mu: np.ndarray  # (S,)
    row: np.ndarray  # (S, n, 1 + k): [a_i, u_i]
    col: np.ndarray  # (S, m, 1 + k + f): [b_j, v_j, g_j]
    tau: np.ndarray  # (S, m)
    rho: np.ndarray  # (S, n)
    row_prior_mean: np.ndarray  # (S, 1 + k): prior of a model outside the fit's families
    row_prior_prec: np.ndarray  # (S, 1 + k, 1 + k)
    row_group_mean: np.ndarray  # (S, G, 1 + k): family means (G = 0 without families)
    row_group_prec: np.ndarray  # (S, 1 + k, 1 + k): within-family precision
    features: np.ndarray  # (S, n, f): standardised features, unknown ones as drawn


def _gibbs(
    layout: _DenseLayout | _SparseLayout,
    features: np.ndarray,
    rank: int,
    n_chains: int,
    n_burn: int,
    n_samples: int,
    nu: float,
    noise_shape: float,
    noise_rate: float,
    row_noise_shape: float,
    rng: np.random.Generator,
    row_groups: Groups | None = None,
    col_groups: Groups | None = None,
    group_prior: tuple[float, float] = (1.0, 1.0),
    sparse_bias: float = 0.0,
    unknown: tuple[np.ndarray, np.ndarray] | None = None,
) -> _Draws:
    """Gibbs sweeps of every chain at once. `unknown`: ((n,) models whose features are not
    known exactly, (n, f) their prior sd in standardised units): each sweep draws theirs
    jointly with their vector, prior N(given value, sd^2) (an unknown one: N(0, 1), the
    fitted models' spread), so a made-up or rough value does not pull the feature loadings
    as a known one does."""
    n, m = layout.n, layout.m
    f = features.shape[1]
    d = 1 + rank
    infer = np.flatnonzero(unknown[0]) if unknown is not None and f > 0 else np.zeros(0, int)
    infer_prior = None
    if len(infer):
        infer_prior = (features[infer], unknown[1][infer])  # (k, f) means and sds
    row_prior = None if row_groups is None else GroupPrior(row_groups, n_chains, d, *group_prior)
    col_prior = (
        None if col_groups is None else GroupPrior(col_groups, n_chains, d + f, *group_prior)
    )
    y = layout.y
    feats = np.broadcast_to(features, (n_chains, n, f))
    if len(infer):
        feats = feats.copy()  # the unknown ones are drawn
    ones_n, ones_m = np.ones((n_chains, n, 1)), np.ones((n_chains, m, 1))

    mu = np.full(n_chains, layout.y_mean)
    row = rng.normal(0.0, _INIT_SD, (n_chains, n, d))  # [a_i, u_i]
    col = rng.normal(0.0, _INIT_SD, (n_chains, m, d + f))  # [b_j, v_j, g_j]
    tau = np.full((n_chains, m), 2.0)
    rho = np.ones((n_chains, n))
    lam = np.ones((n_chains,) + np.shape(y))  # Student-t cell weights
    bias_cols = [0, *range(d, d + f)]
    widen = _bias_widening(layout.col_count, sparse_bias, d + f)  # (m, d + f, d + f) or None
    kept: dict[str, list[np.ndarray]] = {k: [] for k in _Draws.__dataclass_fields__}

    for step in range(n_burn + n_samples):
        if row_prior is None:
            row_mean, row_prec = _sample_normal_wishart(rng, row)
        else:
            row_mean, row_prec = row_prior.sample(rng, row)
        if col_prior is None:
            col_mean, col_prec = _sample_normal_wishart(rng, col)
        else:
            col_mean, col_prec = col_prior.sample(rng, col)
        if widen is not None:  # a wider bias prior for columns with few cells
            col_prec = col_prec[:, None] * widen
        weight = layout.at_cols(tau) * layout.at_rows(rho) * lam  # zero where unobserved
        wy = weight * y

        # Models: z - (mu + b_j + s_i . g_j) = [1, v_j] . [a_i, u_i]
        offset_q = col[..., bias_cols] + np.eye(1 + f)[0] * mu[:, None, None]
        gram, rhs = layout.normal_rows(
            weight,
            wy,
            np.concatenate([ones_m, col[..., 1:d]], 2),
            np.concatenate([ones_n, feats], 2),
            offset_q,
        )
        row = _sample_gaussian(rng, gram, rhs, row_mean, row_prec)
        if len(infer):
            row[:, infer], feats[:, infer] = _draw_unknown_features(
                rng, layout, weight, wy, col, mu, row_mean, row_prec, infer, d, infer_prior
            )

        # Benchmarks: z - (mu + a_i) = [1, u_i, s_i] . [b_j, v_j, g_j]
        gram, rhs = layout.normal_cols(
            weight,
            wy,
            np.concatenate([ones_n, row[..., 1:], feats], 2),
            ones_m,
            row[..., :1] + mu[:, None, None],
        )
        col = _sample_gaussian(rng, gram, rhs, col_mean, col_prec)

        # Global mean (prior N(0, 1)), then the noise model.
        fit = layout.bilinear(
            np.concatenate([row[..., :1], ones_n, row[..., 1:], feats], 2),
            np.concatenate([ones_m, col], 2),
        )  # everything but mu
        precision = weight.reshape(n_chains, -1).sum(axis=1) + 1.0
        mean = (wy - weight * fit).reshape(n_chains, -1).sum(axis=1) / precision
        mu = mean + rng.standard_normal(n_chains) / np.sqrt(precision)
        resid = y - fit
        resid -= _per_chain(mu, y)
        resid *= resid
        lam = (nu + 1.0) / (nu + layout.at_cols(tau) * layout.at_rows(rho) * resid)
        resid *= lam
        col_ss = layout.col_sums(resid, rho)  # sum_i rho_i lam_ij e_ij^2
        tau = rng.gamma(noise_shape + layout.col_count / 2.0, 1.0 / (noise_rate + col_ss / 2.0))
        row_ss = layout.row_sums(resid, tau)  # sum_j tau_j lam_ij e_ij^2
        rho = rng.gamma(
            row_noise_shape + layout.row_count / 2.0, 1.0 / (row_noise_shape + row_ss / 2.0)
        )

        if step >= n_burn:
            if row_prior is None:
                new_mean, new_prec = row_mean, row_prec
                group_mean = np.zeros((n_chains, 0, d))
            else:
                new_mean, new_prec = row_prior.new_member_prior(row_prec)
                group_mean = row_prior.centre
            for name, value in (
                ("mu", mu),
                ("row", row),
                ("col", col),
                ("tau", tau),
                ("rho", rho),
                ("row_prior_mean", new_mean),
                ("row_prior_prec", new_prec),
                ("row_group_mean", group_mean),
                ("row_group_prec", row_prec),
                ("features", feats.copy() if len(infer) else feats),
            ):
                kept[name].append(value)
    # (samples, chains, ...) -> (draws, ...), chain-major within each sample step
    return _Draws(**{k: np.concatenate(v, axis=0) for k, v in kept.items()})


def _draw_unknown_features(
    rng: np.random.Generator,
    layout: _DenseLayout | _SparseLayout,
    weight: np.ndarray,
    wy: np.ndarray,
    col: np.ndarray,
    mu: np.ndarray,
    row_mean: np.ndarray,
    row_prec: np.ndarray,
    infer: np.ndarray,
    d: int,
    feature_prior: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """[a_i, u_i] and the standardised features of the models `infer`, drawn jointly from
    their Gaussian conditional: z - (mu + b_j) = [1, v_j, g_j] . [a_i, u_i, s_i], the
    vector's prior as for every model and N(mean, sd^2) for each feature
    (`feature_prior`: (k, f) means and sds)."""
    n_chains, m, width = col.shape
    f = width - d
    gram, rhs = layout.normal_rows(
        weight,
        wy,
        np.concatenate([np.ones((n_chains, m, 1)), col[..., 1:]], 2),
        np.ones((n_chains, layout.n, 1)),
        col[..., :1] + mu[:, None, None],
    )
    means = row_mean[:, infer] if row_mean.ndim == 3 else row_mean[:, None, :]
    means = np.broadcast_to(means, (n_chains, len(infer), d))
    x_mean, x_sd = feature_prior
    k = len(infer)
    prior_mean = np.concatenate([means, np.broadcast_to(x_mean, (n_chains, k, f))], axis=2)
    prior_prec = np.zeros((n_chains, k, width, width))
    prior_prec[:, :, :d, :d] = row_prec[:, None]
    prior_prec[:, :, d:, d:] = np.eye(f) / (x_sd**2)[:, :, None]
    drawn = _sample_gaussian(rng, gram[:, infer], rhs[:, infer], prior_mean, prior_prec)
    return drawn[..., :d], drawn[..., d:]


def _row_labels(groups: Groups | None, n: int) -> list[str | None]:
    """The group label of each of n items (None: no group)."""
    if groups is None:
        return [None] * n
    return [groups.labels[c] for c in groups.codes]


def _named(labels: Sequence[str | None]) -> list[str]:
    """The named groups (they come first in an encoding; unnamed singletons follow)."""
    return [lab for lab in labels if lab is not None]


def _bias_widening(col_count: np.ndarray, strength: float, d: int) -> np.ndarray | None:
    """Per column, the factor (m, d, d) on the prior precision of [b_j, v_j, g_j] that widens
    the bias's prior variance by 1 + strength / cells (correlations kept): D^-1 P D^-1 with
    D = diag(sqrt(1 + strength / cells), 1, ...). None when strength is 0.

    The z-score centres a column on its observed cells, so its bias is minus the mean ability
    of the models that happen to have it: with five cells that mean varies far more between
    benchmarks than the population of well-filled columns says."""
    if strength <= 0:
        return None
    scale = np.ones((len(col_count), d))
    scale[:, 0] = 1.0 / np.sqrt(1.0 + strength / np.maximum(col_count, 1))
    return scale[:, :, None] * scale[:, None, :]


def _pool_spread(transform: ScaleTransform, values: np.ndarray, pseudo: float) -> None:
    """Pool each percent column's z-score spread with `pseudo` pseudo-scores at a typical
    percent column's (the median over those with at least 10 cells): a few scores say little
    about a spread, and a column z-scored on five similar models would otherwise be stretched
    (logit units are comparable across percent benchmarks; other scales keep their own)."""
    count = (~np.isnan(values)).sum(axis=0)
    percent = transform.is_percent_ & (count >= 2)
    if not percent.any():
        return
    var = transform.std_**2
    filled = percent & (count >= 10)
    typical = float(np.median(var[filled] if filled.any() else var[percent]))
    # the transform's std is over n cells: n var = (n - 1) x the sample variance
    pooled = (pseudo * typical + count * var) / (pseudo + np.maximum(count - 1, 0))
    transform.std_ = np.where(percent, np.sqrt(pooled), transform.std_)


def _known_features(row_features: np.ndarray | None, n: int) -> np.ndarray:
    """(n,) whether a fitted model has every feature (NaN = unknown, such as a date only
    first seen)."""
    if row_features is None:
        return np.zeros(n, dtype=bool)
    feats = np.asarray(row_features, dtype=float).reshape(n, -1)
    return ~np.isnan(feats).any(axis=1)


MIN_REGRESSION_MODELS = 20  # fitted models with known features needed to learn the prior


def _feature_regression(
    rows: np.ndarray, features: np.ndarray, known: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Per kept draw, the least-squares regression of the fitted models' standardised
    features on their vectors [bias, factors]: (alpha (S, f), beta (S, d, f), residual
    covariance (S, f, f)); None without features or with too few models that have them."""
    f = features.shape[1]
    if f == 0 or known.sum() < max(MIN_REGRESSION_MODELS, rows.shape[2] + f + 2):
        return None
    theta = rows[:, known]  # (S, k, d)
    x = features[known]  # (k, f)
    design = np.concatenate([np.ones(theta.shape[:2] + (1,)), theta], axis=2)  # (S, k, 1 + d)
    gram = design.transpose(0, 2, 1) @ design + 1e-6 * np.eye(design.shape[2])
    coef = np.linalg.solve(gram, design.transpose(0, 2, 1) @ x[None])  # (S, 1 + d, f)
    resid = x[None] - design @ coef
    dof = max(1, len(x) - design.shape[2])
    sigma = resid.transpose(0, 2, 1) @ resid / dof + 1e-6 * np.eye(f)
    return coef[:, 0, :], coef[:, 1:, :], sigma


def _per_chain(v: np.ndarray, like: np.ndarray) -> np.ndarray:
    """(C,) -> broadcastable against per-cell arrays (C, cells) or (C, n, m)."""
    return v.reshape((-1,) + (1,) * np.ndim(like))


def _chunks(n_draws: int, cells_per_draw: int, budget: int = 4_000_000) -> list[slice]:
    step = max(1, budget // max(cells_per_draw, 1))
    return [slice(s, min(s + step, n_draws)) for s in range(0, n_draws, step)]


class BayesianCompleter:
    """Robust Bayesian bias + low-rank factorisation in z-scored logit space (see module doc).

    Parameters are fixed defaults chosen once (on our own development folds of the paper
    matrix, never on the evaluation folds) and used unchanged everywhere:

    rank: latent factors besides the model and benchmark biases (4: with the sparse-column
        priors below, 3.64 held-out MedAE and 23.0 points of 90% width against 3.70 and
        23.2 at rank 3, mean of 4 seeds on our dev splits; 5 no better).
    n_chains, n_burn, n_samples: Gibbs chains, discarded and kept sweeps per chain.
    nu: Student-t degrees of freedom of the noise.
    noise_shape, noise_rate: Gamma prior of each benchmark's noise precision.
    row_noise_shape: Gamma(shape, rate=shape) prior of each model's noise multiplier.
    n_keep: draws kept for fold-in and exported with a snapshot (evenly thinned).
    interval_scale: multiplier on the Student-t predictive quantile (0.89: the 90% intervals
        of the default with side information then cover 0.90 of the held-out cells of our
        dev splits, median fold; 0.914 at 0.95, 0.897 at 0.88).
    eps: percent scores are clipped to [eps, 1 - eps] of their range before the logit.
    group_shape, group_rate: Gamma prior of kappa, how much closer the members of a group
        (family, category) are than any two vectors (used only with `row_groups` /
        `col_groups`).
    sparse_bias: a column's bias gets 1 + sparse_bias / cells times the population's prior
        variance (`_bias_widening`): five cells say where the column sits, the population of
        filled columns does not.
    spread_prior: pseudo-scores at a typical percent column's spread pooled with each percent
        column's own before the z-score (`_pool_spread`; as `predictor.new_benchmark`).
        Together the two took the thinned-column figure of `benchmarks/new_benchmark.py` from
        0.83 to 0.77 x its baseline and the held-out MedAE from 3.85 to 3.70 (rank 3) on our
        dev splits (`benchmarks/dev_splits.py`); 20 or 200, 2 or 8 gave the same within the
        run-to-run spread.
    link_prior, link_margin, link_mode: a percent link that bends per column (learned
        asymptotes, `ScaleTransform`; the same transform serves fit, fold-in and intervals),
        shrunk to the plain logit by n / (n + link_prior) so sparse columns keep it; 0 = the
        plain logit. On our dev splits, paired over random_state 0-7, learned at 30 against
        the plain logit: probe MedAE -0.065 +- 0.021 (6 of 8 seeds better), held-out
        -0.017 +- 0.011, width at 0.90 coverage +0.09 +- 0.08; fold-in MedAE at k = 3 / 5 /
        15 known scores (seeds 1000-1005) 4.70 / 4.24 / 3.82 against 4.78 / 4.29 / 3.83, and
        the time-honest protocol (mid-quarter cuts) 6.18 against 6.26. "range" (margin 0.25)
        was worse (3.75-3.83 at link_prior 10-30).
    """

    method: ClassVar[str] = "bayes"
    label: ClassVar[str] = "robust Bayesian matrix factorisation"
    state_version: ClassVar[int] = STATE_VERSION
    side_information: ClassVar[frozenset[str]] = frozenset(SIDE_KEYWORDS)

    def __init__(
        self,
        rank: int = 4,
        n_chains: int = 8,
        n_burn: int = 20,
        n_samples: int = 20,
        nu: float = 3.0,
        noise_shape: float = 2.0,
        noise_rate: float = 0.1,
        row_noise_shape: float = 2.0,
        n_keep: int = 40,
        interval_scale: float = 0.89,
        random_state: int = 0,
        eps: float = 0.002,
        group_shape: float = 1.0,
        group_rate: float = 1.0,
        sparse_bias: float = 50.0,
        spread_prior: float = 4.0,
        link_prior: float = 30.0,
        link_margin: float = 0.25,
        link_mode: str = "learned",
    ) -> None:
        self.rank = rank
        self.n_chains = n_chains
        self.n_burn = n_burn
        self.n_samples = n_samples
        self.nu = nu
        self.noise_shape = noise_shape
        self.noise_rate = noise_rate
        self.row_noise_shape = row_noise_shape
        self.n_keep = n_keep
        self.interval_scale = interval_scale
        self.random_state = random_state
        self.eps = eps
        self.group_shape = group_shape
        self.group_rate = group_rate
        self.sparse_bias = sparse_bias
        self.spread_prior = spread_prior
        self.link_prior = link_prior
        self.link_margin = link_margin
        self.link_mode = link_mode

    def get_params(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _PARAMS}

    def _check_params(self) -> None:
        for name in ("rank", "n_chains", "n_samples", "n_keep"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.n_burn < 0:
            raise ValueError(f"n_burn must be >= 0, got {self.n_burn}")
        for name in (
            "nu",
            "noise_shape",
            "noise_rate",
            "row_noise_shape",
            "interval_scale",
            "group_shape",
            "group_rate",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in ("sparse_bias", "spread_prior", "link_prior", "link_margin"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    # ------------------------------------------------------------------ fitting
    def fit(
        self,
        values: np.ndarray,
        scales: Sequence[str],
        row_features: np.ndarray | None = None,
        *,
        floors: Sequence[float] | np.ndarray | None = None,
        lower: Sequence[float] | np.ndarray | None = None,
        upper: Sequence[float] | np.ndarray | None = None,
        row_groups: Sequence[str | None] | None = None,
        col_groups: Sequence[str | None] | None = None,
        new_model_features: np.ndarray | Sequence[float] | None = None,
        row_feature_sd: np.ndarray | None = None,
    ) -> BayesianCompleter:
        """Fit on a float matrix with NaN for missing cells; `scales` gives each column's kind.

        `row_features` (models x f, NaN = unknown) is optional side information per model,
        standardised here; a model's missing feature counts as the average. `floors` (chance
        score per percent column), `lower` / `upper` (valid range per column) go to the
        `ScaleTransform`. `row_groups` (a family name per model, None = none) and
        `col_groups` (a category per benchmark) give the factors a hierarchical prior
        (`predictor.methods.hierarchy`): each vector is drawn around its group's mean.
        `new_model_features` (f values, original units) is what a model folded in later is
        assumed to have when its features are not given (default: the fitted models' mean).
        A fold-in given NaN features infers them instead, with the model's vector
        (`BenchPress.predict` does so for a model whose release date nobody knows).
        `row_feature_sd` (models x f, original units; 0 or NaN = exact) marks features that
        are only approximately known (a release date only known as the day a leaderboard
        first listed the model): those are drawn in the sweeps with their model's vector,
        prior N(value, sd^2), as NaN features are with the fitted models' spread as prior.
        """
        self._check_params()
        values = check_values(values)
        n, m = values.shape
        self.transform_ = ScaleTransform(
            scales,
            eps=self.eps,
            floors=floors,
            lower=lower,
            upper=upper,
            link_prior=float(self.link_prior),
            link_margin=float(self.link_margin),
            link_mode=str(self.link_mode),
        ).fit(values)
        if self.spread_prior > 0:
            _pool_spread(self.transform_, values, float(self.spread_prior))
        z = self.transform_.transform(values)
        observed = ~np.isnan(values)
        features = self._fit_features(row_features, n)
        prior_sd = self._feature_sd(row_feature_sd, features.shape)
        known = _known_features(row_features, n) & ~(prior_sd > 0).any(axis=1)
        # features unknown or uncertain are inferred in the sweeps, once some models have them
        unknown = None
        if features.shape[1] and known.any() and not known.all():
            unknown = (~known, np.where(prior_sd > 0, prior_sd, 1.0))
        self.new_model_features_ = (
            np.zeros(features.shape[1])
            if new_model_features is None
            else self._standardise(self._feature_row(new_model_features, "new_model_features"))[0]
        )
        groups = encode_groups(row_groups, n, "row_groups")
        categories = encode_groups(col_groups, m, "col_groups")
        dense = observed.size <= _DENSE_MAX_SIZE or observed.mean() >= _DENSE_MIN_FILL
        layout = (_DenseLayout if dense else _SparseLayout)(z, observed)
        rng = np.random.default_rng(np.random.SeedSequence(self.random_state))

        chains = min(int(self.n_chains), max(2, _CHAIN_CELL_BUDGET // max(layout.n_cells, 1)))
        self.n_chains_used_ = chains
        per_batch = max(1, _MAX_BATCH_CELLS // max(layout.y.size, 1))
        batches = [min(per_batch, chains - s) for s in range(0, chains, per_batch)]
        parts = [
            _gibbs(
                layout,
                features,
                int(self.rank),
                size,
                int(self.n_burn),
                int(self.n_samples),
                float(self.nu),
                float(self.noise_shape),
                float(self.noise_rate),
                float(self.row_noise_shape),
                rng,
                groups,
                categories,
                (float(self.group_shape), float(self.group_rate)),
                float(self.sparse_bias),
                unknown,
            )
            for size in batches
        ]
        draws = _Draws(
            **{
                k: np.concatenate([getattr(p, k) for p in parts])
                for k in _Draws.__dataclass_fields__
            }
        )
        if unknown is not None:  # their posterior mean from here on
            features = np.where(unknown[0][:, None], draws.features.mean(axis=0), features)
        self.values_ = values
        # Per fitted model: its standardised features and family (for folding in a new
        # benchmark against the fitted models: each model's own prior and side information).
        self.model_features_ = features
        self.model_row_groups_ = _row_labels(groups, n)
        self.observed_ = observed
        n_draws = len(draws.mu)
        keep = np.unique(np.linspace(0, n_draws - 1, min(self.n_keep, n_draws)).round()).astype(int)
        # The completed matrix is computed on first use (a 10,000 x 1,000 fit needs no dense
        # n x m arrays until someone asks for them).
        self._pending = (draws, features, keep)
        self._z_pred = self._z_var = None
        self.model_noise_ = np.mean(1.0 / draws.rho, axis=0)  # E[1 / rho_i]
        self.benchmark_noise_ = np.mean(1.0 / draws.tau, axis=0)  # E[1 / tau_j]
        self.mu_ = draws.mu[keep]
        self.benchmark_params_ = draws.col[keep]
        self.benchmark_precision_ = draws.tau[keep]
        self.model_prior_mean_ = draws.row_prior_mean[keep]
        self.model_prior_precision_ = draws.row_prior_prec[keep]
        # How the fitted models' features follow their vectors (newer models sit higher
        # than their date alone says): the prior of a feature a fold-in must infer.
        self.feature_regression_ = _feature_regression(draws.row[keep], features, known)
        # Families: a model folded in with a family seen in the fit starts from its mean.
        self.model_groups_ = [] if groups is None else _named(groups.labels)
        self.model_group_mean_ = draws.row_group_mean[keep][:, : len(self.model_groups_)]
        self.model_group_precision_ = draws.row_group_prec[keep]
        # Noise multiplier (1 / rho) of a typical model, for models folded in later.
        self.new_model_noise_ = float(np.mean(1.0 / draws.rho))
        # set by `predictor.fit.calibration.calibrate_fold_in` (None: the model-based intervals)
        self.fold_in_calibration_: FoldInCalibration | None = None
        return self

    @property
    def z_pred_(self) -> np.ndarray:
        """Posterior mean of every cell in z-space (models x benchmarks)."""
        if getattr(self, "_z_pred", None) is None:
            self._complete()
        return self._z_pred

    @z_pred_.setter
    def z_pred_(self, value: np.ndarray) -> None:
        self._z_pred = value

    @property
    def z_var_(self) -> np.ndarray:
        """Posterior variance of every cell's mean function in z-space."""
        if getattr(self, "_z_var", None) is None:
            self._complete()
        return self._z_var

    @z_var_.setter
    def z_var_(self, value: np.ndarray) -> None:
        self._z_var = value

    def _complete(self) -> None:
        pending = getattr(self, "_pending", None)
        if pending is None:
            raise AttributeError("this BayesianCompleter is not fitted yet")
        self._z_pred, self._z_var = self._moments(*pending)
        self._pending = None

    def _fit_features(self, row_features: np.ndarray | None, n: int) -> np.ndarray:
        if row_features is None:
            self.feature_mean_ = np.zeros(0)
            self.feature_std_ = np.ones(0)
            return np.zeros((n, 0))
        feats = np.asarray(row_features, dtype=float)
        if feats.ndim == 1:
            feats = feats[:, None]
        if feats.ndim != 2 or feats.shape[0] != n:
            raise ValueError(f"row_features must have shape ({n}, f), got {feats.shape}")
        if np.isinf(feats).any():
            raise ValueError("row_features contains infinite entries; use NaN for unknown")
        count = (~np.isnan(feats)).sum(axis=0)
        mean = np.where(count > 0, np.nanmean(np.where(count > 0, feats, 0.0), axis=0), 0.0)
        std = np.nanstd(feats, axis=0) if n else np.ones(feats.shape[1])
        std = np.where((count > 1) & (std > 1e-12), std, 1.0)
        self.feature_mean_, self.feature_std_ = mean, std
        return self._standardise(feats)

    def _feature_sd(self, row_feature_sd: np.ndarray | None, shape: tuple[int, int]) -> np.ndarray:
        """`row_feature_sd` in standardised units, (n, f); 0 where the feature is exact."""
        if row_feature_sd is None or shape[1] == 0:
            return np.zeros(shape)
        sd = np.asarray(row_feature_sd, dtype=float).reshape(shape[0], -1)
        if sd.shape != shape or (sd < 0).any() or np.isinf(sd).any():
            raise ValueError(f"row_feature_sd must be (n, f) = {shape}, >= 0 or NaN")
        return np.nan_to_num(sd, nan=0.0) / self.feature_std_

    def _standardise(self, feats: np.ndarray) -> np.ndarray:
        return np.nan_to_num((feats - self.feature_mean_) / self.feature_std_, nan=0.0)

    def _moments(
        self, draws: _Draws, features: np.ndarray, subset: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean (all draws) and variance (the `subset` draws) of every cell's mean;
        each draw with its own features (`features`, the posterior means, are not needed)."""
        del features
        d = 1 + int(self.rank)
        n_draws, n, _ = draws.row.shape
        m = draws.col.shape[1]
        u = draws.row[..., 1:].transpose(1, 0, 2).reshape(n, -1)  # (n, S * k)
        v = draws.col[..., 1:d].transpose(1, 0, 2).reshape(m, -1)
        # features per draw: a model's unknown ones were drawn with its vector
        x = draws.features.transpose(1, 0, 2).reshape(n, -1)  # (n, S * f)
        g = draws.col[..., d:].transpose(1, 0, 2).reshape(m, -1)
        mean = (
            draws.mu.mean()
            + draws.row[..., 0].mean(axis=0)[:, None]
            + draws.col[..., 0].mean(axis=0)[None, :]
            + (u @ v.T) / n_draws
            + (x @ g.T) / n_draws
        )
        total_sq = np.zeros((n, m))
        for part in _chunks(len(subset), n * m):
            idx = subset[part]
            row, col = draws.row[idx], draws.col[idx]
            f = (
                draws.mu[idx, None, None]
                + row[..., :1]
                + col[:, None, :, 0]
                + row[..., 1:] @ col[..., 1:d].transpose(0, 2, 1)
                + draws.features[idx] @ col[..., d:].transpose(0, 2, 1)
                - mean
            )
            total_sq += (f**2).sum(axis=0)
        return mean, total_sq / len(subset)

    # --------------------------------------------------------------- prediction
    def predict(self, keep_observed: bool = True) -> np.ndarray:
        """Completed matrix in original units; observed cells are returned as given."""
        pred = self.transform_.inverse(self.z_pred_)
        return np.where(self.observed_, self.values_, pred) if keep_observed else pred

    def predict_interval(
        self, level: float = 0.9, keep_observed: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) in original units; observed cells collapse to their value."""
        noise_var = self.model_noise_[:, None] * self.benchmark_noise_[None, :]
        half = self._halfwidth(self.z_var_, noise_var, level)
        low = self.transform_.inverse(self.z_pred_ - half)
        high = self.transform_.inverse(self.z_pred_ + half)
        if keep_observed:
            low = np.where(self.observed_, self.values_, low)
            high = np.where(self.observed_, self.values_, high)
        return low, high

    def predict_within(self, width: float = 5.0) -> np.ndarray:
        """P(|true score - prediction| <= width) per cell, original units (observed: 1).

        The trust figure: the same Student-t predictive as `predict_interval`, so it is
        calibrated with it (checked by decile in `benchmarks/calibration.py`)."""
        noise_var = self.model_noise_[:, None] * self.benchmark_noise_[None, :]
        p = self._within(self.z_pred_, self.z_var_ + noise_var, width)
        return np.where(self.observed_, 1.0, p)

    def _within(self, z_mean: np.ndarray, var: np.ndarray, width: float) -> np.ndarray:
        """Predictive probability that the score lies within `width` of its point prediction.

        The band mean +- width (clipped to floor-100 on percent columns) is mapped into z-space
        and the Student-t predictive mass inside it is returned."""
        if not (isinstance(width, int | float) and math.isfinite(width) and width > 0):
            raise ValueError(f"width must be a positive number of points, got {width!r}")
        tf = self.transform_
        mean = tf.inverse(z_mean)
        percent = np.broadcast_to(tf.is_percent_, mean.shape)
        low, high = mean - width, mean + width
        floor, top = tf.link()
        with np.errstate(invalid="ignore", divide="ignore"):
            z_low = np.where(percent & (low <= floor), -np.inf, tf.transform(low))
            z_high = np.where(percent & (high >= top), np.inf, tf.transform(high))
        scale = self.interval_scale * np.sqrt(var)
        nu = float(self.nu)
        return student_t_cdf((z_high - z_mean) / scale, nu) - student_t_cdf(
            (z_low - z_mean) / scale, nu
        )

    def _halfwidth(self, param_var: np.ndarray, noise_var: np.ndarray, level: float) -> np.ndarray:
        q = student_t_quantile(0.5 + check_level(level) / 2.0, float(self.nu))
        return self.interval_scale * q * np.sqrt(param_var + noise_var)

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

        For each kept draw of the benchmark parameters the new model's bias and factors get
        their Gaussian posterior given its known cells (prior: that draw's population of
        models; Student-t weights by a few reweighting steps); predictions average the draws.
        The matrix is not refitted. With `return_z` also returns the z-space prediction.
        `noise_sd` (per benchmark, original units; NaN or 0 = exact): measurement noise of
        the known scores, added to those cells' noise variance (`_fold_in_posterior`).
        """
        row = check_row(row, self.benchmark_params_.shape[1])
        z_row, _ = self._fold_in_z(row, features, group, noise_sd)
        pred = self.transform_.inverse(z_row)
        if keep_observed:
            pred = np.where(np.isnan(row), pred, row)
        return (pred, z_row) if return_z else pred

    def fold_in_within(
        self,
        row: np.ndarray,
        width: float = 5.0,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> np.ndarray:
        """P(|true score - fold-in prediction| <= width) per benchmark; known scores: 1."""
        row = check_row(row, self.benchmark_params_.shape[1])
        z_row, var = self._fold_in_z(row, features, group, noise_sd)
        return self._fold_in_within(row, z_row, var, width)

    def new_model_side(self) -> tuple[np.ndarray | None, list[str]]:
        """What a model folded in without side information is assumed to have: its features
        in original units (`new_model_features`; None when the fit had no features), and the
        families the fit knows (a family outside them gets the
        population prior)."""
        if len(self.feature_mean_) == 0:
            return None, list(self.model_groups_)
        default = self.new_model_features_ * self.feature_std_ + self.feature_mean_
        return np.asarray(default, dtype=float), list(self.model_groups_)

    def noise_scale_z(self) -> np.ndarray:
        """Per-benchmark noise standard deviation in z-space (a typical model's)."""
        return np.sqrt(self.benchmark_noise_)

    def interval_multiplier(self, level: float) -> float:
        """Half-width of the central `level` interval in units of the predictive scale
        (`fold_in_predictive`), before any fold-in calibration."""
        return self.interval_scale * student_t_quantile(0.5 + level / 2, float(self.nu))

    def batch_fold_in(self, values: np.ndarray, n_draws: int | None = None) -> BatchFoldIn:
        """Gaussian fold-in of every row of `values` at once (`BatchFoldIn`), for probe
        selection and the trust figures."""
        return BatchFoldIn(self, values, n_draws=n_draws)

    def placement(
        self,
        values: np.ndarray,
        model_noise: np.ndarray | None = None,
        n_model_samples: int = 5,
        random_state: int = 0,
        new_models: bool = False,
        groups: Sequence[str | None] | None = None,
    ) -> Placement:
        """The models of `values` placed for a new benchmark (`bayes_placement`); rows that
        are `new_models` get a typical new model's noise unless `model_noise` says otherwise;
        `groups` gives rows their family's prior."""
        if model_noise is None and new_models:
            model_noise = np.full(np.shape(values)[0], float(self.new_model_noise_))
        return bayes_placement(self, values, model_noise, n_model_samples, random_state, groups)

    def to_state(self) -> dict[str, Any]:
        """Plain JSON-able state for a snapshot (`predictor.methods.bayesian_state`)."""
        return export_state(self)

    @classmethod
    def from_state(cls, state: dict[str, Any], values: np.ndarray) -> BayesianCompleter:
        return restore_state(cls, state, values)

    def _fold_in_within(
        self, row: np.ndarray, z_row: np.ndarray, var: np.ndarray, width: float
    ) -> np.ndarray:
        p = self._within(z_row, var + self.new_model_noise_ * self.benchmark_noise_, width)
        return np.where(np.isnan(row), p, 1.0)

    def fold_in_predictive(
        self,
        row: np.ndarray,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(mean, scale) in z-space of a new model's predictive per benchmark: the Student-t
        (nu) the uncalibrated intervals use is mean +- interval_scale x t_q x scale."""
        row = check_row(row, self.benchmark_params_.shape[1])
        z_row, var = self._fold_in_z(row, features, group, noise_sd)
        return z_row, np.sqrt(var + self.new_model_noise_ * self.benchmark_noise_)

    def fold_in_predictive_many(
        self,
        rows: np.ndarray,
        features: np.ndarray | None = None,
        groups: Sequence[str | None] | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """`fold_in_predictive` of every row of `rows` (n, m), with `features` (n, f),
        `groups` (n) and `noise_sd` (n, m) per row, in stacked numpy operations
        (`bayesian_many`): (mean, scale) (n, m). The fold-in calibration of thousands of
        held-out models runs on it."""
        return fold_in_predictive_many(
            self, rows, features, groups, _FOLD_IN_REWEIGHTS, noise_sd=noise_sd
        )

    def fold_in_interval(
        self,
        row: np.ndarray,
        level: float = 0.9,
        keep_observed: bool = True,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) for a new model, from the same predictive as `predict_interval`.

        With `fold_in_calibration_` set (see `predictor.fit.calibration`) the half-width is
        scaled by the conformal factor of the row's number of known scores and `level`."""
        row = check_row(row, self.benchmark_params_.shape[1])
        z_row, var = self._fold_in_z(row, features, group, noise_sd)
        return self._fold_in_bounds(row, z_row, var, level, keep_observed, features)

    def _calibration_factor(self, row: np.ndarray, level: float, features: Any) -> float:
        """The fold-in calibration's factor for this row (1 without calibration): by its
        known scores, and from the unknown-date table when the fit has release dates and the
        model's is not known (NaN: inferred from the probes; None in snapshots that took
        the fit's newest date instead)."""
        calibration = getattr(self, "fold_in_calibration_", None)
        if calibration is None:
            check_level(level)
            return 1.0
        release = len(self.feature_mean_) > 0 and (
            features is None or bool(np.isnan(np.asarray(features, dtype=float)).any())
        )
        return calibration.factor(int((~np.isnan(row)).sum()), level, release)

    def _fold_in_bounds(
        self,
        row: np.ndarray,
        z_row: np.ndarray,
        var: np.ndarray,
        level: float,
        keep_observed: bool,
        features: Any = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        noise = self.new_model_noise_ * self.benchmark_noise_
        half = self._halfwidth(var, noise, level) * self._calibration_factor(row, level, features)
        # never of zero width: a centre past a bound or a flat link (`ScaleTransform.interval`)
        low, high = self.transform_.interval(z_row, half)
        if keep_observed:
            known = ~np.isnan(row)
            low, high = np.where(known, row, low), np.where(known, row, high)
        return low, high

    def fold_in_summary(
        self,
        row: np.ndarray,
        level: float = 0.9,
        width: float = 5.0,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(prediction, low, high, P(|error| <= width)) for a new model from ONE fold-in pass:
        what `fold_in`, `fold_in_interval` and `fold_in_within` give (known scores kept)."""
        row = check_row(row, self.benchmark_params_.shape[1])
        z_row, var = self._fold_in_z(row, features, group, noise_sd)
        mean = np.where(np.isnan(row), self.transform_.inverse(z_row), row)
        low, high = self._fold_in_bounds(row, z_row, var, level, True, features)
        return mean, low, high, self._fold_in_within(row, z_row, var, width)

    def _feature_row(self, features: Any, name: str) -> np.ndarray:
        """One model's features as a (1, f) row, checked against the fit's f."""
        n_feat = len(self.feature_mean_)
        feats = np.asarray(features, dtype=float).reshape(-1)
        if feats.shape[0] != n_feat:
            raise ValueError(f"{name} must have {n_feat} entries, got {feats.shape[0]}")
        return feats[None, :]

    def _new_features(self, features: np.ndarray | None) -> np.ndarray:
        """Standardised features of a model folded in; not given: `new_model_features_`.
        NaN stays NaN: that feature is unknown and inferred with the model's vector."""
        if features is None:
            default = getattr(self, "new_model_features_", None)
            return np.zeros(len(self.feature_mean_)) if default is None else default
        row = self._feature_row(features, "features")[0]
        return (row - self.feature_mean_) / self.feature_std_

    def inferred_features(
        self,
        row: np.ndarray,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """(posterior mean, sd) in original units of the features a fold-in did not know
        (NaN in `features`; a release date inferred from the probe scores), NaN where the
        feature was known; None when every feature was known or the fit has none."""
        feats = self._new_features(features)
        if not np.isnan(feats).any():
            return None
        row = check_row(row, self.benchmark_params_.shape[1])
        _, _, theta, cov = self._fold_in_posterior(row, features, group, noise_sd)
        d = 1 + int(self.rank)
        latent = np.flatnonzero(np.isnan(feats))
        x = theta[:, d:]  # (S, L)
        var = np.einsum("sll->sl", cov[:, d:, d:]).mean(axis=0) + x.var(axis=0)
        mean = np.full(len(feats), np.nan)
        sd = np.full(len(feats), np.nan)
        mean[latent] = x.mean(axis=0) * self.feature_std_[latent] + self.feature_mean_[latent]
        sd[latent] = np.sqrt(var) * self.feature_std_[latent]
        return mean, sd

    def _fold_in_z(
        self,
        row: np.ndarray,
        features: np.ndarray | None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance of the new row's mean function, per benchmark."""
        offset, design_all, theta, cov = self._fold_in_posterior(row, features, group, noise_sd)
        mean_draws = offset + (design_all @ theta[..., None])[..., 0]  # (S, m)
        param_var = np.einsum("smi,sij,smj->sm", design_all, cov, design_all)
        mean = mean_draws.mean(axis=0)
        var = mean_draws.var(axis=0) + param_var.mean(axis=0)
        return mean, var

    def model_prior(self, group: str | None) -> tuple[np.ndarray, np.ndarray]:
        """(mean (S, d), precision (S, d, d)) of a new model's vector: its family's when the
        fit saw the family, else the population's (a model of a family of its own)."""
        groups = getattr(self, "model_groups_", None) or []
        if group is not None and group in groups:
            g = groups.index(group)
            return self.model_group_mean_[:, g], self.model_group_precision_
        return self.model_prior_mean_, self.model_prior_precision_

    def _with_latent_prior(
        self, mean: np.ndarray, precision: np.ndarray, latent: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The model prior (mean (S, d), precision (S, d, d)) extended by the unknown
        features. When every feature is unknown and the fit kept `feature_regression_`: the
        features given the model's vector as the fitted models' follow theirs, x = alpha +
        beta' theta + e, e ~ N(0, Sigma) (a joint Gaussian with the vector's prior); else
        standardised N(0, 1), independent of the vector (the fitted models' spread)."""
        n_latent = int(latent.sum())
        if n_latent == 0:
            return mean, precision
        s, d = mean.shape
        wide = np.zeros((s, d + n_latent, d + n_latent))
        regression = getattr(self, "feature_regression_", None)
        if regression is None or n_latent != len(latent):
            wide[:, :d, :d] = precision
            wide[:, d:, d:] = np.eye(n_latent)
            return np.concatenate([mean, np.zeros((s, n_latent))], axis=1), wide
        alpha, beta, sigma = regression  # (S, f), (S, d, f), (S, f, f)
        inv_sigma = np.linalg.inv(sigma)
        beta_w = beta @ inv_sigma  # (S, d, f)
        wide[:, :d, :d] = precision + beta_w @ beta.transpose(0, 2, 1)
        wide[:, :d, d:] = -beta_w
        wide[:, d:, :d] = -beta_w.transpose(0, 2, 1)
        wide[:, d:, d:] = inv_sigma
        x_mean = alpha + (beta.transpose(0, 2, 1) @ mean[..., None])[..., 0]
        return np.concatenate([mean, x_mean], axis=1), wide

    def fitted_model_prior(self) -> tuple[np.ndarray, np.ndarray]:
        """Per kept draw, the prior mean (S, n, d) and precision (S, n, d, d) of every fitted
        model's [a_i, u_i]: its family's mean and the within-family precision for a model of
        a family, the population prior (`model_prior_*`) for the others."""
        rows = getattr(self, "model_row_groups_", None) or [None] * self.values_.shape[0]
        n = len(rows)
        means = np.repeat(self.model_prior_mean_[:, None, :], n, axis=1)
        precision = np.repeat(self.model_prior_precision_[:, None], n, axis=1)
        index = {g: k for k, g in enumerate(getattr(self, "model_groups_", None) or [])}
        members = [i for i, g in enumerate(rows) if g in index]
        if members:
            means[:, members] = self.model_group_mean_[:, [index[rows[i]] for i in members]]
            precision[:, members] = self.model_group_precision_[:, None]
        return means, precision

    def _fold_in_posterior(
        self,
        row: np.ndarray,
        features: np.ndarray | None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per kept draw s: the offset (S, m) and design (S, m, d) of every benchmark, and the
        Gaussian posterior mean (S, d) and covariance (S, d, d) of the new row's parameters.
        `group` names the model's family (see `model_prior`). `noise_sd`: the known scores'
        measurement noise (original units), whose z-space variance is added to each such
        cell's noise variance 1 / (tau_j / rho): a noisy score weighs less in the posterior
        (`predictor.methods.common.measurement_variance_z`)."""
        d = 1 + int(self.rank)
        known = ~np.isnan(row)
        z_known = self.transform_.transform(row)[known]
        feats = self._new_features(features)
        latent = np.isnan(feats)  # unknown features: inferred jointly with the model's vector
        col = self.benchmark_params_  # (S, m, d + f)
        offset = self.mu_[:, None] + col[..., 0] + col[..., d:] @ np.where(latent, 0.0, feats)
        design_all = np.concatenate(
            [np.ones(col.shape[:2] + (1,)), col[..., 1:d], col[..., d:][..., latent]], axis=2
        )
        design = design_all[:, known]  # (S, k, d + latent)
        target = z_known[None, :] - offset[:, known]
        base_w = self.benchmark_precision_[:, known] / self.new_model_noise_
        extra = measurement_variance_z(self.transform_, row, noise_sd)
        if extra is not None:  # the cell's noise variance plus its measurement noise
            base_w = 1.0 / (1.0 / base_w + extra[known])
        prior_mean, prior_prec = self._with_latent_prior(*self.model_prior(group), latent)
        prior_shift = (prior_prec @ prior_mean[..., None])[..., 0]
        weight = base_w
        for step in range(_FOLD_IN_REWEIGHTS + 1):
            weighted = (design * weight[..., None]).transpose(0, 2, 1)  # (S, d, k)
            precision = prior_prec + weighted @ design
            shift = prior_shift + (weighted @ target[..., None])[..., 0]
            theta = np.linalg.solve(precision, shift[..., None])[..., 0]
            if step < _FOLD_IN_REWEIGHTS:  # Student-t weights from the current fit
                resid = target - (design @ theta[..., None])[..., 0]
                weight = base_w * (self.nu + 1.0) / (self.nu + base_w * resid**2)
        return offset, design_all, theta, np.linalg.inv(precision)

    def fold_in_draws(
        self,
        row: np.ndarray,
        n_draws: int = 4000,
        random_state: int = 0,
        level: float = 0.9,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> np.ndarray:
        """(n_draws, m) joint predictive draws of a new model's scores, original units; known
        scores are returned as given in every draw (`noise_sd`: their measurement noise, as
        in `fold_in`).

        The same predictive as `fold_in_interval`, jointly over benchmarks: draw k takes kept
        draw s = k mod S of the benchmark parameters and samples the new row's parameters
        from their Gaussian posterior there (shared by every benchmark: this is what makes
        benchmarks move together), adds Gaussian cell noise of the new-model noise scale, and
        divides the whole deviation by one sqrt(chi2(nu) / nu): a multivariate Student-t(nu)
        whose marginal is the interval's t with scale sqrt(param var + noise). The deviation
        is scaled by `interval_scale` and the fold-in calibration factor at `level`, so the
        central `level` range of the draws is the calibrated interval. Seeded: the same
        arguments give the same draws."""
        row = check_row(row, self.benchmark_params_.shape[1])
        n_draws = int(n_draws)
        if n_draws < 1:
            raise ValueError(f"n_draws must be >= 1, got {n_draws}")
        scale = self.interval_scale * self._calibration_factor(row, level, features)
        offset, design_all, theta, cov = self._fold_in_posterior(row, features, group, noise_sd)
        n_kept, m, d = design_all.shape
        z_mean = (offset + (design_all @ theta[..., None])[..., 0]).mean(axis=0)
        rng = np.random.default_rng(np.random.SeedSequence(int(random_state)))
        chol = np.linalg.cholesky((cov + cov.transpose(0, 2, 1)) / 2.0)  # (S, d, d)
        s = np.arange(n_draws) % n_kept
        params = theta[s] + (chol[s] @ rng.standard_normal((n_draws, d, 1)))[..., 0]
        mean_fn = offset[s] + np.einsum("kmd,kd->km", design_all[s], params)
        noise = np.sqrt(self.new_model_noise_ * self.benchmark_noise_)
        deviation = mean_fn - z_mean + noise * rng.standard_normal((n_draws, m))
        mixing = np.sqrt(rng.chisquare(float(self.nu), size=(n_draws, 1)) / float(self.nu))
        # a centre past a column's edge sits on it, as in `ScaleTransform.interval`
        z = self.transform_.onto_edges(z_mean) + scale * deviation / mixing
        values = self.transform_.inverse(z)
        known = ~np.isnan(row)
        values[:, known] = row[known]
        return values


_PARAMS = (
    "rank",
    "n_chains",
    "n_burn",
    "n_samples",
    "nu",
    "noise_shape",
    "noise_rate",
    "row_noise_shape",
    "n_keep",
    "interval_scale",
    "random_state",
    "eps",
    "group_shape",
    "group_rate",
    "sparse_bias",
    "spread_prior",
    "link_prior",
    "link_margin",
    "link_mode",
)
