"""A plain, per-row-loop port of the BenchPress reference recipe, for accuracy and speed checks.

The recipe ("logit bias ALS", arXiv:2606.24020 and microsoft/benchpress):

1. percent columns -> logit of the score clipped to [0.5, 99.5] percent; other columns as is;
2. z-score every column with the mean and population std of its observed cells (std < 1e-8 -> 1);
3. fit z_ij ~ mu + a_i + c_j + u_i . v_j on the observed cells by alternating ridge regressions
   (lambda 0.1 on a, c, u, v; mu unpenalised, updated as the mean residual after each sweep),
   rank 2, 40 sweeps, factors initialised N(0, 0.01^2) from `RandomState(42 + seed)`;
4. average the 10 seeds' completed z matrices, undo the z-score and the logit, and clip percent
   columns to [0, 100]. Observed cells are returned unchanged.

This file is deliberately the straightforward version: one small linear solve per model row and
per benchmark column, in Python loops, one seed after another. It is the yardstick that the
vectorised default in `predictor/` is timed against, and it is written independently of the
project's own solver so that its error figures confirm the recipe, not our implementation of it.

    python benchmarks/reference_recipe.py            # 30-fold MedAE of this port (30-40 s)
    python benchmarks/reference_recipe.py --max-folds 3
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from predictor.fit.completion import Completion  # noqa: E402

RANK = 2
LAMBDA = 0.1
N_ITER = 40
N_ENSEMBLE = 10
BASE_SEED = 42
CLIP_PERCENT = 0.5  # logit clip, in percent points


def _to_working_space(values: np.ndarray, is_percent: np.ndarray):
    """Logit the percent columns, then z-score every column over its observed cells."""
    work = values.copy()
    for j in range(values.shape[1]):
        if is_percent[j]:
            p = np.clip(values[:, j], CLIP_PERCENT, 100.0 - CLIP_PERCENT) / 100.0
            work[:, j] = np.log(p / (1.0 - p))
    col_mean = np.nanmean(work, axis=0)
    col_std = np.nanstd(work, axis=0)
    col_std[col_std < 1e-8] = 1.0
    return (work - col_mean) / col_std, col_mean, col_std


def _from_working_space(z: np.ndarray, col_mean, col_std, is_percent: np.ndarray) -> np.ndarray:
    out = z * col_std + col_mean
    for j in range(z.shape[1]):
        if is_percent[j]:
            out[:, j] = np.clip(100.0 / (1.0 + np.exp(-out[:, j])), 0.0, 100.0)
    return out


def bias_als_one_seed(z: np.ndarray, seed: int) -> np.ndarray:
    """One ALS run from one random start; returns the completed z matrix."""
    n_models, n_bench = z.shape
    observed = ~np.isnan(z)
    rows = [np.flatnonzero(observed[i]) for i in range(n_models)]
    cols = [np.flatnonzero(observed[:, j]) for j in range(n_bench)]
    obs_i, obs_j = np.nonzero(observed)
    obs_z = z[obs_i, obs_j]
    penalty = LAMBDA * np.eye(RANK + 1)

    rng = np.random.RandomState(seed)
    mu = float(obs_z.mean()) if obs_z.size else 0.0
    a = np.zeros(n_models)
    c = np.zeros(n_bench)
    u = rng.normal(0.0, 0.01, size=(n_models, RANK))
    v = rng.normal(0.0, 0.01, size=(n_bench, RANK))

    for _ in range(N_ITER):
        for i in range(n_models):  # each model: ridge for (a_i, u_i) given c, v
            js = rows[i]
            if js.size == 0:
                continue
            x = np.column_stack([np.ones(js.size), v[js]])
            sol = np.linalg.solve(x.T @ x + penalty, x.T @ (z[i, js] - mu - c[js]))
            a[i], u[i] = sol[0], sol[1:]
        for j in range(n_bench):  # each benchmark: ridge for (c_j, v_j) given a, u
            is_ = cols[j]
            if is_.size == 0:
                continue
            x = np.column_stack([np.ones(is_.size), u[is_]])
            sol = np.linalg.solve(x.T @ x + penalty, x.T @ (z[is_, j] - mu - a[is_]))
            c[j], v[j] = sol[0], sol[1:]
        fitted = a[obs_i] + c[obs_j] + np.einsum("kr,kr->k", u[obs_i], v[obs_j])
        mu = float(np.mean(obs_z - fitted))
    return mu + a[:, None] + c[None, :] + u @ v.T


def reference_complete(values: np.ndarray, scales: Sequence[str], level: float = 0.9) -> Completion:
    """The recipe as a completer for `predictor.evaluation.protocols`; it has no intervals (NaN)."""
    values = np.asarray(values, dtype=float)
    is_percent = np.array([s == "percent" for s in scales], dtype=bool)
    z, col_mean, col_std = _to_working_space(values, is_percent)
    z_bar = np.zeros_like(z)
    for s in range(N_ENSEMBLE):
        z_bar += bias_als_one_seed(z, BASE_SEED + s)
    z_bar /= N_ENSEMBLE
    pred = _from_working_space(z_bar, col_mean, col_std, is_percent)
    observed = ~np.isnan(values)
    mean = np.where(observed, values, pred)
    no_interval = np.where(observed, values, np.nan)
    return Completion(mean=mean, low=no_interval, high=no_interval.copy(), level=level)


def main(argv: list[str] | None = None) -> int:
    from predictor.evaluation.protocols import (
        DEFAULT_FOLDS_PATH,
        DEFAULT_MATRIX_PATH,
        holdout_errors,
        load_folds,
        load_paper_matrix,
        summarize_errors,
    )

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_MATRIX_PATH)
    parser.add_argument("--folds", type=Path, default=DEFAULT_FOLDS_PATH)
    parser.add_argument("--max-folds", type=int, help="only the first N folds")
    args = parser.parse_args(argv)
    values, _, _, scales = load_paper_matrix(args.data)
    folds = load_folds(args.folds)[: args.max_folds]
    start = time.perf_counter()
    summary = summarize_errors(holdout_errors(values, scales, folds, reference_complete))
    seconds = time.perf_counter() - start
    print(
        f"reference recipe (loop port), {len(folds)} folds: MedAE {summary['medae']:.3f}, "
        f"MedAPE {summary['medape']:.2f}%, within 5 {summary['within5']:.3f}, {seconds:.1f} s "
        "(BenchPress publishes MedAE 4.576)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
