"""Calibration of the default method's intervals on the paper's held-out folds (measure only).

For each of the 30 folds of `benchmarks/data/folds_s10_f3_bs42_ms1.json` the fold's cells are
hidden, `BayesianCompleter` (defaults) is fitted once, and for every held-out cell:

- the 50 / 80 / 90 / 95% intervals (`predict_interval`): coverage and median width, pooled
  over all held-out cells and as the median over folds (the paper's aggregation);
- the trust figure P(|error| <= 5): the predictive probability that the true score lies within
  5 points (original units) of the prediction, from the same Student-t(3) predictive in z-space
  that the intervals use (interval_scale x t3 scale, mapped through the column's transform).
  Cells are binned by predicted probability into deciles; per decile the mean predicted
  probability is compared with the observed share of cells within 5 points.

Nothing here changes the method.

    python benchmarks/calibration.py [--folds N] [--out calibration.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from predictor.evaluation import (  # noqa: E402
    DEFAULT_FOLDS_PATH,
    DEFAULT_MATRIX_PATH,
    load_folds,
    load_paper_matrix,
)
from predictor.methods.bayesian import BayesianCompleter  # noqa: E402

LEVELS = (0.5, 0.8, 0.9, 0.95)
WITHIN = 5.0


def t3_cdf(t: np.ndarray) -> np.ndarray:
    """CDF of Student-t with 3 degrees of freedom (closed form)."""
    x = np.asarray(t, dtype=float) / math.sqrt(3.0)
    finite = np.isfinite(x)
    xf = np.where(finite, x, 0.0)
    out = 0.5 + (xf / (1.0 + xf**2) + np.arctan(xf)) / math.pi
    return np.where(finite, out, np.where(x > 0, 1.0, 0.0))


def p_within(comp: BayesianCompleter, i: np.ndarray, j: np.ndarray, width: float) -> np.ndarray:
    """Predictive P(|true - predicted| <= width) at cells (i, j), original units."""
    if float(comp.nu) != 3.0:
        raise ValueError("p_within uses the closed-form t3 CDF; the default nu is 3")
    tf = comp.transform_
    zp = comp.z_pred_[i, j]
    noise = comp.model_noise_[i] * comp.benchmark_noise_[j]
    scale = comp.interval_scale * np.sqrt(comp.z_var_[i, j] + noise)
    mean = tf.inverse(comp.z_pred_)[i, j]
    n_cols = comp.z_pred_.shape[1]

    def to_z(v: np.ndarray) -> np.ndarray:
        full = np.full((len(v), n_cols), 50.0)
        full[np.arange(len(v)), j] = v
        z = tf.transform(full)[np.arange(len(v)), j]
        return z

    pct = tf.is_percent_[j]
    lo = np.where(pct, np.clip(mean - width, 0.0, 100.0), mean - width)
    hi = np.where(pct, np.clip(mean + width, 0.0, 100.0), mean + width)
    z_lo = np.where(pct & (lo <= 0.0), -np.inf, to_z(lo))
    z_hi = np.where(pct & (hi >= 100.0), np.inf, to_z(hi))
    return t3_cdf((z_hi - zp) / scale) - t3_cdf((z_lo - zp) / scale)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_MATRIX_PATH)
    parser.add_argument("--folds-file", type=Path, default=DEFAULT_FOLDS_PATH)
    parser.add_argument("--folds", type=int, help="use only the first N folds (quick run)")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)

    values, _, _, scales = load_paper_matrix(args.data)
    folds = load_folds(args.folds_file)[: args.folds]
    start = time.perf_counter()
    per_fold = {lv: {"coverage": [], "width": []} for lv in LEVELS}
    pooled = {lv: {"covered": [], "width": []} for lv in LEVELS}
    probs, hits, errors = [], [], []
    for fold in folds:
        cells = fold.test_cells
        train = values.copy()
        train[cells[:, 0], cells[:, 1]] = np.nan
        keep = np.flatnonzero(~np.isnan(train).all(axis=0))
        pos = np.full(values.shape[1], -1)
        pos[keep] = np.arange(len(keep))
        cells = cells[pos[cells[:, 1]] >= 0]  # columns emptied by the fold are not scored
        i, j = cells[:, 0], pos[cells[:, 1]]
        actual = values[cells[:, 0], cells[:, 1]]
        comp = BayesianCompleter().fit(train[:, keep], [scales[c] for c in keep])
        mean = comp.predict(keep_observed=False)[i, j]
        for lv in LEVELS:
            low, high = comp.predict_interval(level=lv, keep_observed=False)
            covered = (actual >= low[i, j]) & (actual <= high[i, j])
            width = high[i, j] - low[i, j]
            per_fold[lv]["coverage"].append(float(covered.mean()))
            per_fold[lv]["width"].append(float(np.median(width)))
            pooled[lv]["covered"].append(covered)
            pooled[lv]["width"].append(width)
        err = np.abs(mean - actual)
        probs.append(p_within(comp, i, j, WITHIN))
        hits.append(err <= WITHIN)
        errors.append(err)
    seconds = time.perf_counter() - start

    results: dict = {"n_folds": len(folds), "seconds": seconds, "levels": {}}
    print(f"default method, {len(folds)} held-out folds of the paper matrix ({seconds:.1f} s)")
    print(f"{'level':>6} {'coverage (median fold)':>23} {'pooled':>7} {'median width':>13}")
    for lv in LEVELS:
        cov_med = float(np.median(per_fold[lv]["coverage"]))
        cov_pool = float(np.concatenate(pooled[lv]["covered"]).mean())
        width_med = float(np.median(per_fold[lv]["width"]))
        results["levels"][str(lv)] = {
            "coverage_median_fold": cov_med,
            "coverage_pooled": cov_pool,
            "median_width_median_fold": width_med,
            "median_width_pooled": float(np.median(np.concatenate(pooled[lv]["width"]))),
        }
        print(f"{lv:>6.2f} {cov_med:>23.3f} {cov_pool:>7.3f} {width_med:>13.1f}")
    cov90 = results["levels"]["0.9"]["coverage_median_fold"]
    verdict = "inside" if 0.88 <= cov90 <= 0.92 else "OUTSIDE"
    print(f"90% coverage {cov90:.3f} is {verdict} the 0.88-0.92 band")
    results["coverage90_in_band"] = verdict == "inside"

    p = np.concatenate(probs)
    h = np.concatenate(hits)
    edges = np.quantile(p, np.linspace(0, 1, 11))
    bins = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, 9)
    print(f"\nP(|error| <= {WITHIN:g}) calibration, deciles of the predicted probability:")
    print(f"{'decile':>6} {'n':>6} {'predicted':>10} {'observed':>9}")
    rows = []
    for d in range(10):
        sel = bins == d
        if not sel.any():
            continue
        row = {
            "decile": d + 1,
            "n": int(sel.sum()),
            "predicted": float(p[sel].mean()),
            "observed": float(h[sel].mean()),
        }
        rows.append(row)
        print(f"{d + 1:>6} {row['n']:>6} {row['predicted']:>10.3f} {row['observed']:>9.3f}")
    brier = float(np.mean((p - h) ** 2))
    print(f"overall: predicted {p.mean():.3f}, observed {h.mean():.3f}, Brier {brier:.4f}")
    results["within5"] = {
        "deciles": rows,
        "mean_predicted": float(p.mean()),
        "observed": float(h.mean()),
        "brier": brier,
        "n_cells": int(len(p)),
    }
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
