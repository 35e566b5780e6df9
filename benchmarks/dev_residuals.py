"""Residual models on top of the low-rank fit, cross-fitted on training cells (measure only).

On our dev splits (`benchmarks/dev_splits.py`: per-model 3-fold splits on seeds 1000-1009),
each fold's training cells are split again into 3 per-model folds (seed 7), the default
method is refitted on each and its out-of-fold predictions give every training cell a
residual in z-space (logit for percent benchmarks) that no fit saw. Per benchmark, a residual
model learned on those residuals corrects the fold's own predictions of its held-out cells:

- `bias<lambda>`: the mean residual shrunk by n / (n + lambda);
- `slope<lambda>`: that bias plus a slope in the out-of-fold prediction (ridge lambda);
- `knn<k>_<share>`: the mean residual of the k nearest fitted models (rank-5 row scores of
  the completed z-matrix) scored on the benchmark, times `share`;
- `et_<share>`: ExtraTrees (50 trees, 5 per leaf) on those row scores and the prediction.

Prints the median over folds of the held-out MedAE in points per variant, `base` being the
fit alone. The held-out cells are never used to learn a correction.

    python benchmarks/dev_residuals.py [--seeds 4] [--link-prior 0]   # 4 seeds: 12 folds
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from predictor.evaluation import (  # noqa: E402
    DEFAULT_MATRIX_PATH,
    DEFAULT_REGISTRY_PATH,
    SideAware,
    load_paper_matrix,
    per_model_folds,
)
from predictor.side_information import DEFAULT_USE, paper_side_information  # noqa: E402

SEEDS = tuple(range(1000, 1010))
INNER_SEED = 7
LAMBDAS = (1, 3, 10, 30, 100)
NEIGHBOURS = (5, 10, 20)
SHARES = (0.3, 0.5)


def out_of_fold(train: np.ndarray, scales, fit_predict) -> np.ndarray:
    """z-space predictions of the training cells, each from a fit without it."""
    out = np.full(train.shape, np.nan)
    for fold in per_model_folds(train, (INNER_SEED,)):
        cells = fold.test_cells
        inner = train.copy()
        inner[cells[:, 0], cells[:, 1]] = np.nan
        model = fit_predict(inner, scales).model
        out[cells[:, 0], cells[:, 1]] = model.z_pred_[cells[:, 0], cells[:, 1]]
    return out


def row_scores(z_pred: np.ndarray, rank: int = 5) -> np.ndarray:
    centred = z_pred - z_pred.mean(axis=0)
    u, sv, _ = np.linalg.svd(centred, full_matrices=False)
    return u[:, :rank] * sv[:rank]


def corrections(resid, z_oof, z_hat, embed, rows, cols, trees: bool) -> dict[str, np.ndarray]:
    """Each variant's z-space correction of the held-out cells (rows, cols)."""
    out: dict[str, np.ndarray] = {}
    known = np.isfinite(resid)
    n, total = known.sum(axis=0), np.nansum(resid, axis=0)
    centre = np.where(known, z_oof, 0.0).sum(axis=0) / np.maximum(n, 1)
    dev = np.where(known, z_oof - centre, 0.0)
    for lam in LAMBDAS:
        bias = total / (n + lam)
        slope = (dev * np.nan_to_num(resid)).sum(axis=0) / ((dev * dev).sum(axis=0) + lam)
        out[f"bias{lam}"] = bias[cols]
        out[f"slope{lam}"] = bias[cols] + slope[cols] * (z_hat - centre[cols])
    for k in NEIGHBOURS:
        mean_resid = np.zeros(len(rows))
        for j in np.unique(cols):
            have = np.flatnonzero(known[:, j])
            if len(have) == 0:  # no training residual on this benchmark: no correction
                continue
            at = np.flatnonzero(cols == j)
            dist = ((embed[rows[at]][:, None, :] - embed[have][None, :, :]) ** 2).sum(-1)
            nearest = np.argsort(dist, axis=1)[:, : min(k, len(have))]
            mean_resid[at] = resid[have[nearest], j].mean(axis=1)
        for share in SHARES:
            out[f"knn{k}_{share}"] = share * mean_resid
    if trees:
        from sklearn.ensemble import ExtraTreesRegressor  # deferred: dev extra only

        fitted = np.zeros(len(rows))
        for j in np.unique(cols):
            have = np.flatnonzero(known[:, j])
            if len(have) < 10:
                continue
            at = np.flatnonzero(cols == j)
            forest = ExtraTreesRegressor(
                50, min_samples_leaf=5, max_features=0.5, random_state=0, n_jobs=1
            )
            forest.fit(np.c_[embed[have], z_oof[have, j]], resid[have, j])
            fitted[at] = forest.predict(np.c_[embed[rows[at]], z_hat[at]])
        for share in (0.5, 1.0):
            out[f"et_{share}"] = share * fitted
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=len(SEEDS), help="first N dev seeds")
    parser.add_argument("--link-prior", type=float, default=None, help="override link_prior")
    parser.add_argument("--no-trees", action="store_true", help="skip ExtraTrees (slow)")
    args = parser.parse_args(argv)
    values, _, benchmark_ids, scales = load_paper_matrix(DEFAULT_MATRIX_PATH)
    side = paper_side_information(DEFAULT_MATRIX_PATH, DEFAULT_REGISTRY_PATH, benchmark_ids)
    params = {"level": 0.9}
    if args.link_prior is not None:
        params["link_prior"] = args.link_prior
    fit_predict = SideAware(side, DEFAULT_USE, params)
    errors: dict[str, list[float]] = {}
    for fold in per_model_folds(values, SEEDS[: args.seeds]):
        cells = fold.test_cells
        rows, cols = cells[:, 0], cells[:, 1]
        train = values.copy()
        train[rows, cols] = np.nan
        model = fit_predict(train, scales).model
        transform = model.transform_
        z_oof = out_of_fold(train, scales, fit_predict)
        resid = transform.transform(train) - z_oof
        z_hat = model.z_pred_[rows, cols]
        actual = values[rows, cols]
        variants = {"base": np.zeros(len(rows))}
        variants.update(
            corrections(
                resid, z_oof, z_hat, row_scores(model.z_pred_), rows, cols, not args.no_trees
            )
        )
        for name, shift in variants.items():
            predicted = transform.inverse_at(z_hat + shift, cols)
            errors.setdefault(name, []).append(float(np.median(np.abs(predicted - actual))))
        print(f"seed {fold.seed} fold {fold.fold}: base {errors['base'][-1]:.3f}", flush=True)
    summary = {name: round(float(np.median(v)), 4) for name, v in errors.items()}
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
