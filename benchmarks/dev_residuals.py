"""Residual models on top of the low-rank fit, learned on training cells only (measure only).

On our dev splits (`benchmarks/dev_splits.py`: per-model 3-fold splits on seeds 1000-1009),
each fold's training cells are split again into 3 per-model folds (seed 7), the default
method is refitted on each and its out-of-fold predictions (compared in points, then through
the fold's own link: each fit learns its own) give every training cell a residual in z-space
(logit for percent benchmarks) that no fit saw. Per benchmark, a residual model learned on
those residuals corrects the fold's own predictions of its held-out cells:

- `bias<lambda>`: the mean residual shrunk by n / (n + lambda);
- `slope<lambda>`: that bias plus a slope in the out-of-fold prediction (ridge lambda);
- `knn<k>_<share>`: the mean residual of the k nearest fitted models (rank-5 row scores of
  the completed z-matrix) scored on the benchmark, times `share`;
- `et_<share>`: ExtraTrees (50 trees, 5 per leaf) on those row scores and the prediction;
- `fit_knn<k>_<share>`: as `knn`, but from the fold fit's own residuals on its training cells
  (no extra fit; the neighbours' cells, never the held-out model's own).

Prints per variant the median over folds of the held-out MedAE in points, the mean paired
difference to `base` (the fit alone) and in how many folds it was lower. The held-out cells
are never used to learn a correction.

`--fold-in`: new models instead. Per seed the models are split into 8 groups; each group is
hidden, the default method fitted on the rest, and each hidden model folded in (as
`BenchPress.predict` does) from 5 of its scores drawn at random; the `fit_knn` corrections
(and `knn`, from the group fit's cross-fitted residuals) use its folded-in row's position
among the fitted models. Prints the pooled MedAE of the hidden cells per variant and for how
many models it was lower than `base`.

    python benchmarks/dev_residuals.py [--seeds 4] [--link-prior 0]   # 4 seeds: 12 folds
    python benchmarks/dev_residuals.py --no-trees                     # all 30 folds
    python benchmarks/dev_residuals.py --fold-in [--seeds 2]
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

from predictor.evaluation.protocols import (  # noqa: E402
    DEFAULT_MATRIX_PATH,
    DEFAULT_REGISTRY_PATH,
    SideAware,
    load_paper_matrix,
    per_model_folds,
)
from predictor.fit.calibration import hide_models, reveal_scores  # noqa: E402
from predictor.side_information import DEFAULT_USE, paper_side_information  # noqa: E402

SEEDS = tuple(range(1000, 1010))
INNER_SEED = 7
LAMBDAS = (1, 3, 10, 30, 100)
NEIGHBOURS = (5, 10, 20)
SHARES = (0.3, 0.5)
FOLD_IN_SEEDS = (1000, 1001, 1002, 1003)
FOLD_IN_GROUPS = 8


def out_of_fold(train: np.ndarray, scales, fit_predict) -> np.ndarray:
    """Predictions of the training cells in points, each from a fit without it (in points:
    each fit learns its own link, so z-spaces of different fits do not compare)."""
    out = np.full(train.shape, np.nan)
    for fold in per_model_folds(train, (INNER_SEED,)):
        cells = fold.test_cells
        inner = train.copy()
        inner[cells[:, 0], cells[:, 1]] = np.nan
        model = fit_predict(inner, scales).model
        z = model.z_pred_[cells[:, 0], cells[:, 1]]
        out[cells[:, 0], cells[:, 1]] = model.transform_.inverse_at(z, cells[:, 1])
    return out


def crossed_residuals(model, train: np.ndarray, scales, fit_predict):
    """(residuals, out-of-fold predictions) of the training cells in `model`'s z-space."""
    z_oof = model.transform_.transform(out_of_fold(train, scales, fit_predict))
    return model.transform_.transform(train) - z_oof, z_oof


class RowSpace:
    """The rank-5 row scores of a fit's completed z-matrix, and where another row lands."""

    def __init__(self, z_pred: np.ndarray, rank: int = 5) -> None:
        self.centre = z_pred.mean(axis=0)
        _, _, vt = np.linalg.svd(z_pred - self.centre, full_matrices=False)
        self.basis = vt[:rank].T
        self.scores = self.place(z_pred)

    def place(self, z: np.ndarray) -> np.ndarray:
        return (z - self.centre) @ self.basis


def neighbour_residual(
    resid: np.ndarray, scores: np.ndarray, query: np.ndarray, cols: np.ndarray, k: int
) -> np.ndarray:
    """For each query t (row scores `query[t]`, benchmark `cols[t]`) the mean residual of the
    k fitted models nearest to it that have one on that benchmark (0 when none has)."""
    known = np.isfinite(resid)
    out = np.zeros(len(cols))
    for j in np.unique(cols):
        have = np.flatnonzero(known[:, j])
        if len(have) == 0:  # no training residual on this benchmark: no correction
            continue
        at = np.flatnonzero(cols == j)
        dist = ((query[at][:, None, :] - scores[have][None, :, :]) ** 2).sum(-1)
        nearest = np.argsort(dist, axis=1, kind="stable")[:, : min(k, len(have))]
        out[at] = resid[have[nearest], j].mean(axis=1)
    return out


def knn_variants(prefix: str, resid, scores, query, cols) -> dict[str, np.ndarray]:
    out = {}
    for k in NEIGHBOURS:
        mean_resid = neighbour_residual(resid, scores, query, cols, k)
        for share in SHARES:
            out[f"{prefix}{k}_{share}"] = share * mean_resid
    return out


def fit_residuals(model, train: np.ndarray) -> np.ndarray:
    """The fit's own z-space residuals on its training cells (NaN elsewhere)."""
    observed = np.isfinite(train)
    z = model.transform_.transform(np.where(observed, train, 50.0))
    return np.where(observed, z - model.z_pred_, np.nan)


def corrections(resid, z_oof, z_hat, space, rows, cols, trees: bool) -> dict[str, np.ndarray]:
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
    out.update(knn_variants("knn", resid, space.scores, space.scores[rows], cols))
    if trees:
        from sklearn.ensemble import ExtraTreesRegressor  # deferred: dev extra only

        embed = space.scores
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


def paired_summary(errors: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Per variant: median over folds, mean paired difference to `base`, folds lower."""
    base = np.asarray(errors["base"])
    return {
        name: {
            "median": round(float(np.median(v)), 4),
            "vs_base": round(float(np.mean(np.asarray(v) - base)), 4),
            "lower": int((np.asarray(v) < base).sum()),
            "of": len(v),
        }
        for name, v in errors.items()
    }


def held_out(values, scales, fit_predict, seeds, trees: bool) -> dict[str, list[float]]:
    errors: dict[str, list[float]] = {}
    for fold in per_model_folds(values, seeds):
        cells = fold.test_cells
        rows, cols = cells[:, 0], cells[:, 1]
        train = values.copy()
        train[rows, cols] = np.nan
        model = fit_predict(train, scales).model
        transform = model.transform_
        resid, z_oof = crossed_residuals(model, train, scales, fit_predict)
        z_hat = model.z_pred_[rows, cols]
        actual = values[rows, cols]
        space = RowSpace(model.z_pred_)
        variants = {"base": np.zeros(len(rows))}
        variants.update(corrections(resid, z_oof, z_hat, space, rows, cols, trees))
        own = fit_residuals(model, train)
        variants.update(knn_variants("fit_knn", own, space.scores, space.scores[rows], cols))
        for name, shift in variants.items():
            predicted = transform.inverse_at(z_hat + shift, cols)
            errors.setdefault(name, []).append(float(np.median(np.abs(predicted - actual))))
        print(f"seed {fold.seed} fold {fold.fold}: base {errors['base'][-1]:.3f}", flush=True)
    return errors


def folded_in(values, scales, fit_predict, seeds, n_known: int = 5) -> dict[str, list]:
    """Per variant, the absolute errors of each folded-in new model's hidden cells."""
    observed = np.isfinite(values)
    errors: dict[str, list[np.ndarray]] = {}
    for seed in seeds:
        rng = np.random.default_rng(seed)
        group = rng.permutation(values.shape[0]) % FOLD_IN_GROUPS
        for g in range(FOLD_IN_GROUPS):
            inside = group == g
            train = hide_models(values, inside)
            model = fit_predict(train, scales).model
            transform = model.transform_
            own = fit_residuals(model, train)
            crossed, _ = crossed_residuals(model, train, scales, fit_predict)
            space = RowSpace(model.z_pred_)
            fitted = np.isfinite(train).any(axis=0)
            for i in np.flatnonzero(inside):
                cells = np.flatnonzero(observed[i] & fitted)
                if (drawn := reveal_scores(values, i, cells, n_known, rng)) is None:
                    continue
                row, hidden = drawn
                z_mean, _ = model.fold_in_predictive(row)
                query = np.repeat(space.place(z_mean)[None, :], len(hidden), axis=0)
                variants = {"base": np.zeros(len(hidden))}
                variants.update(knn_variants("knn", crossed, space.scores, query, hidden))
                variants.update(knn_variants("fit_knn", own, space.scores, query, hidden))
                for name, shift in variants.items():
                    predicted = transform.inverse_at(z_mean[hidden] + shift, hidden)
                    errors.setdefault(name, []).append(np.abs(predicted - values[i, hidden]))
        print(f"seed {seed}: {len(errors['base'])} models", flush=True)
    return errors


def fold_in_summary(errors: dict[str, list[np.ndarray]]) -> dict[str, dict[str, float]]:
    base = [float(np.median(e)) for e in errors["base"]]
    return {
        name: {
            "pooled_medae": round(float(np.median(np.concatenate(v))), 4),
            "models_lower": int(sum(float(np.median(e)) < b for e, b in zip(v, base, strict=True))),
            "of": len(v),
        }
        for name, v in errors.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None, help="first N dev seeds")
    parser.add_argument("--link-prior", type=float, default=None, help="override link_prior")
    parser.add_argument("--no-trees", action="store_true", help="skip ExtraTrees (slow)")
    parser.add_argument("--fold-in", action="store_true", help="new models, 5 known scores")
    args = parser.parse_args(argv)
    values, _, benchmark_ids, scales = load_paper_matrix(DEFAULT_MATRIX_PATH)
    side = paper_side_information(DEFAULT_MATRIX_PATH, DEFAULT_REGISTRY_PATH, benchmark_ids)
    params = {"level": 0.9}
    if args.link_prior is not None:
        params["link_prior"] = args.link_prior
    fit_predict = SideAware(side, DEFAULT_USE, params)
    if args.fold_in:
        seeds = FOLD_IN_SEEDS[: args.seeds or len(FOLD_IN_SEEDS)]
        summary = fold_in_summary(folded_in(values, scales, fit_predict, seeds))
    else:
        seeds = SEEDS[: args.seeds or len(SEEDS)]
        summary = paired_summary(held_out(values, scales, fit_predict, seeds, not args.no_trees))
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
