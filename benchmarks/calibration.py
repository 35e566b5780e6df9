"""Calibration of the default method's intervals on the paper's held-out folds (measure only).

For each of the 30 folds of `benchmarks/data/folds_s10_f3_bs42_ms1.json` the fold's cells are
hidden, `BayesianCompleter` (defaults) is fitted once with the matrix's side information (release
dates, model families, benchmark categories: what the default method uses; `--plain` without),
and for every held-out cell:

- the 50 / 80 / 90 / 95% intervals (`predict_interval`): coverage and median width, pooled
  over all held-out cells and as the median over folds (the paper's aggregation);
- the trust figure P(|error| <= 5) (`BayesianCompleter.predict_within`, the `p_within_5` of
  every `BenchPress.predict` answer): the predictive probability that the true score lies
  within 5 points of the prediction, from the same Student-t predictive the intervals use.
  Cells are binned by predicted probability into deciles; per decile the mean predicted
  probability is compared with the observed share of cells within 5 points;
- coverage of the 90% interval per evidence stratum (observed cells left in the model's row);
- a new model folded in with only k known scores (k = 3, 5, 15; seeded random choice; 3 model
  folds): 90% coverage and median width of its other cells (the low-evidence case), with the
  model-based intervals and with the fold-in calibration computed without those models;
- alternative calibrations, measured on the same cells: split-conformal intervals
  z_pred +- q * sd, where sd is the predictive scale and q the conformal quantile of
  |z_true - z_pred| / sd over the OTHER 29 folds' held-out cells (pooled, stratified by row
  evidence, or stratified by predictive-sd quintile);
- a floor, not a method: the median width if every benchmark's interval were exactly its own
  90th percentile of held-out |error| (known from the answers), i.e. the best any calibration
  by benchmark could do with these point predictions.

Widths are medians over the cells of percent benchmarks (points); coverage counts every
held-out cell.

Nothing here changes the method.

    python benchmarks/calibration.py [--folds N] [--plain] [--out calibration.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from predictor.evaluation.protocols import (  # noqa: E402
    DEFAULT_FOLDS_PATH,
    DEFAULT_MATRIX_PATH,
    DEFAULT_REGISTRY_PATH,
    load_folds,
    load_paper_matrix,
)
from predictor.fit.calibration import (  # noqa: E402
    calibrate_fold_in,
    conformal_quantile,
    held_out_models,
    reveal_scores,
)
from predictor.methods.bayesian import BayesianCompleter  # noqa: E402
from predictor.side_information import (  # noqa: E402
    DEFAULT_USE,
    SideInformation,
    paper_side_information,
)

LEVELS = (0.5, 0.8, 0.9, 0.95)
WITHIN = 5.0
EVIDENCE_EDGES = (20, 30, 45)  # strata: <= 20, 21-30, 31-45, > 45 observed cells in the row
FOLD_IN_KNOWN = (3, 5, 15)  # known scores of a new model in the fold-in check


def conformal_alternatives(records: list[dict], level: float = 0.9) -> dict[str, dict]:
    """Cross-fold split conformal on |z error| / sd, pooled and stratified (see docstring)."""
    sd_all = np.concatenate([r["sd"] for r in records])
    sd_edges = np.quantile(sd_all, [0.2, 0.4, 0.6, 0.8])
    strata = {
        "split conformal, pooled": lambda r: np.zeros(len(r["sd"]), dtype=int),
        "split conformal by row evidence": lambda r: np.digitize(r["evidence"], EVIDENCE_EDGES),
        "split conformal by sd quintile": lambda r: np.digitize(r["sd"], sd_edges),
    }
    out = {}
    for name, stratum_of in strata.items():
        labels = [stratum_of(r) for r in records]
        scores = [np.abs(r["z_actual"] - r["z_pred"]) / r["sd"] for r in records]
        coverages, widths = [], []
        for k, r in enumerate(records):
            half = np.empty(len(r["sd"]))
            for s in np.unique(labels[k]):
                cal = np.concatenate(
                    [scores[m][labels[m] == s] for m in range(len(records)) if m != k]
                )
                half[labels[k] == s] = conformal_quantile(cal, level) * r["sd"][labels[k] == s]
            low = r["comp"].transform_.inverse_at(r["z_pred"] - half, r["j"])
            high = r["comp"].transform_.inverse_at(r["z_pred"] + half, r["j"])
            coverages.append(float(np.mean((r["actual"] >= low) & (r["actual"] <= high))))
            widths.append(float(np.median((high - low)[r["percent"]])))
        out[name] = {
            "coverage_median_fold": float(np.median(coverages)),
            "median_width_median_fold": float(np.median(widths)),
        }
    return out


def benchmark_oracle(records: list[dict], level: float = 0.9) -> dict[str, float]:
    """Intervals mean +- each benchmark's `level` quantile of |error| over all folds' cells.

    Not a method (it reads the answers): the narrowest intervals any per-benchmark
    calibration of these point predictions could give at this coverage."""
    benchmark = np.concatenate([r["benchmark"] for r in records])
    error = np.abs(np.concatenate([r["actual"] - r["mean"] for r in records]))
    half = np.zeros(len(error))
    for b in np.unique(benchmark):
        half[benchmark == b] = np.quantile(error[benchmark == b], level)
    coverages, widths, start = [], [], 0
    for r in records:
        h = half[start : start + len(r["actual"])]
        e = error[start : start + len(r["actual"])]
        start += len(r["actual"])
        coverages.append(float(np.mean(e <= h)))
        widths.append(float(np.median(2 * h[r["percent"]])))
    return {
        "coverage_median_fold": float(np.median(coverages)),
        "median_width_median_fold": float(np.median(widths)),
    }


def fold_in_check(
    values: np.ndarray,
    scales: list[str],
    known: int,
    side: SideInformation,
    use: tuple[str, ...],
    n_splits: int = 3,
    seed: int = 0,
) -> dict:
    """New models folded in from `known` random scores, model-based and calibrated intervals.

    Models in `n_splits` seeded groups; per group a completer is fitted on the other models
    and its fold-in calibration (`predictor.fit.calibration.calibrate_fold_in`) computed from those
    models only; each held-out model is then folded in (with its release date and family when
    `use` has them) from `known` of its scores and scored on the rest, with and without the
    calibration."""
    rng = np.random.default_rng(seed)
    observed = np.isfinite(values)
    percent = np.array([scale == "percent" for scale in scales])
    out: dict[str, list] = {"raw": [], "calibrated": [], "raw_w": [], "cal_w": []}
    probs, hits = [], []
    kwargs = side.fit_kwargs(use)
    fits = held_out_models(values, scales, BayesianCompleter, n_splits, rng, kwargs)
    for inside, comp in fits:
        calibration = calibrate_fold_in(
            np.where(inside[:, None], np.nan, values), scales, fit_kwargs=kwargs
        )
        for i in np.flatnonzero(inside):
            cells = np.flatnonzero(observed[i])
            if (drawn := reveal_scores(values, i, cells, known, rng)) is None:
                continue
            row, hidden = drawn
            actual = values[i, hidden]
            about = {"features": side.model_features(i, use), "group": side.model_group(i, use)}
            for key, cal in (("raw", None), ("calibrated", calibration)):
                comp.fold_in_calibration_ = cal
                low, high = comp.fold_in_interval(row, level=0.9, keep_observed=False, **about)
                lo, hi = low[hidden], high[hidden]
                out[key].append((actual >= lo) & (actual <= hi))
                out["raw_w" if cal is None else "cal_w"].append((hi - lo)[percent[hidden]])
            mean = comp.fold_in(row, keep_observed=False, **about)[hidden]
            probs.append(comp.fold_in_within(row, WITHIN, **about)[hidden])
            hits.append(np.abs(mean - actual) <= WITHIN)
    return {
        "known": known,
        "n_cells": int(sum(len(c) for c in out["raw"])),
        "coverage": float(np.concatenate(out["raw"]).mean()),
        "median_width": float(np.median(np.concatenate(out["raw_w"]))),
        "coverage_calibrated": float(np.concatenate(out["calibrated"]).mean()),
        "median_width_calibrated": float(np.median(np.concatenate(out["cal_w"]))),
        "within5_predicted": float(np.concatenate(probs).mean()),
        "within5_observed": float(np.concatenate(hits).mean()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_MATRIX_PATH)
    parser.add_argument("--folds-file", type=Path, default=DEFAULT_FOLDS_PATH)
    parser.add_argument("--folds", type=int, help="use only the first N folds (quick run)")
    parser.add_argument("--plain", action="store_true", help="without side information")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)

    values, _, benchmark_ids, scales = load_paper_matrix(args.data)
    side = paper_side_information(args.data, DEFAULT_REGISTRY_PATH, benchmark_ids)
    use: tuple[str, ...] = () if args.plain else DEFAULT_USE
    percent_column = np.array([scale == "percent" for scale in scales])
    folds = load_folds(args.folds_file)[: args.folds]
    start = time.perf_counter()
    per_fold = {lv: {"coverage": [], "width": []} for lv in LEVELS}
    pooled = {lv: {"covered": [], "width": []} for lv in LEVELS}
    probs, hits, errors, records = [], [], [], []
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
        percent = percent_column[cells[:, 1]]
        comp = BayesianCompleter().fit(
            train[:, keep], [scales[c] for c in keep], **side.columns(keep).fit_kwargs(use)
        )
        mean = comp.predict(keep_observed=False)[i, j]
        for lv in LEVELS:
            low, high = comp.predict_interval(level=lv, keep_observed=False)
            covered = (actual >= low[i, j]) & (actual <= high[i, j])
            width = high[i, j] - low[i, j]
            per_fold[lv]["coverage"].append(float(covered.mean()))
            per_fold[lv]["width"].append(float(np.median(width[percent])))
            pooled[lv]["covered"].append(covered)
            pooled[lv]["width"].append(width[percent])
        err = np.abs(mean - actual)
        sd = np.sqrt(comp.z_var_[i, j] + comp.model_noise_[i] * comp.benchmark_noise_[j])
        z_actual = comp.transform_.transform(
            np.where(np.isnan(values[:, keep]), 50.0, values[:, keep])
        )
        low90, high90 = comp.predict_interval(level=0.9, keep_observed=False)
        records.append(
            {
                "comp": comp,
                "j": j,
                "benchmark": cells[:, 1],
                "percent": percent,
                "actual": actual,
                "mean": mean,
                "z_pred": comp.z_pred_[i, j],
                "z_actual": z_actual[i, j],
                "sd": sd,
                "evidence": (~np.isnan(train[:, keep])).sum(axis=1)[i],
                "covered90": (actual >= low90[i, j]) & (actual <= high90[i, j]),
            }
        )
        probs.append(comp.predict_within(WITHIN)[i, j])
        hits.append(err <= WITHIN)
        errors.append(err)
    seconds = time.perf_counter() - start

    results: dict = {"n_folds": len(folds), "seconds": seconds, "levels": {}}
    how = "without side information" if args.plain else "with side information"
    print(
        f"default method {how}, {len(folds)} held-out folds of the paper matrix ({seconds:.1f} s)"
    )
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

    evidence = np.concatenate([r["evidence"] for r in records])
    covered = np.concatenate([r["covered90"] for r in records])
    stratum = np.digitize(evidence, EVIDENCE_EDGES)
    bounds = [0, *EVIDENCE_EDGES, None]
    print("\n90% coverage by evidence (observed cells left in the model's row), pooled:")
    results["coverage90_by_evidence"] = []
    for s in range(len(bounds) - 1):
        sel = stratum == s
        if not sel.any():
            continue
        label = f"{bounds[s] + 1}-{bounds[s + 1]}" if bounds[s + 1] else f"> {bounds[s]}"
        row = {"evidence": label, "n": int(sel.sum()), "coverage": float(covered[sel].mean())}
        results["coverage90_by_evidence"].append(row)
        print(f"  {label:>8} cells: {row['n']:>6}  coverage {row['coverage']:.3f}")

    print(
        "\n90% intervals of a new model folded in from k random known scores (3 model folds, "
        "pooled): model-based | calibrated (conformal by known scores, fitted without them)"
    )
    results["fold_in90"] = []
    for known in FOLD_IN_KNOWN:
        row = fold_in_check(values, scales, known, side, use)
        results["fold_in90"].append(row)
        print(
            f"  k = {known:>2}: {row['n_cells']:>5} cells  coverage {row['coverage']:.3f} "
            f"width {row['median_width']:.1f} | coverage {row['coverage_calibrated']:.3f} "
            f"width {row['median_width_calibrated']:.1f}  P(|err| <= {WITHIN:g}) predicted "
            f"{row['within5_predicted']:.3f}, observed {row['within5_observed']:.3f}"
        )

    print("\n90% intervals, alternatives on the same cells (median over folds):")
    alternatives = {
        "posterior predictive (default)": {
            "coverage_median_fold": results["levels"]["0.9"]["coverage_median_fold"],
            "median_width_median_fold": results["levels"]["0.9"]["median_width_median_fold"],
        },
        **conformal_alternatives(records, 0.9),
        "floor: each benchmark's own q90": benchmark_oracle(records, 0.9),
    }
    for name, figs in alternatives.items():
        print(
            f"  {name:<36} coverage {figs['coverage_median_fold']:.3f}  "
            f"median width {figs['median_width_median_fold']:.1f}"
        )
    results["alternatives90"] = alternatives

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
