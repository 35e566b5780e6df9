"""Development figures of new-model intervals: the fold-in at k known scores and the
time-honest protocol, with the calibration the pipeline computes (measure only).

- fold-in: per seed of `SEEDS` (never seed 0, which `benchmarks/calibration.py` reports),
  the models are split into 3 seeded groups; per group a completer is fitted without them and
  its fold-in calibration computed from the other models only (`calibrate_fold_in`, as
  `predictor.fit.fitting.fit_calibrated`); each held-out model is folded in (with its release
  date and family) from k random known scores, k in `KNOWN`, and its other cells scored:
  90% coverage and median width (percent benchmarks) pooled over groups and seeds;
- future (`--future`): the time-honest protocol of `predictor.evaluation.future` with the
  default method only, its cuts moved to the middle of each quarter (every release date
  shifted by `FUTURE_SHIFT` years: the fit standardises dates, so only the cuts move) so
  that the protocol itself is not what settings are chosen on: pooled 90% coverage, width
  and MedAE over the new models of every cut; `--future-shift 0` gives the protocol's own
  quarters.

`--set name=value` overrides a `BayesianCompleter` parameter (repeatable).

    python benchmarks/dev_fold_in.py [--future] [--set interval_scale=0.9] [--json]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.dev_splits import parse_settings, print_figures  # noqa: E402
from predictor.evaluation.future import FutureMethod, run_future_protocol  # noqa: E402
from predictor.evaluation.protocols import (  # noqa: E402
    DEFAULT_MATRIX_PATH,
    DEFAULT_REGISTRY_PATH,
    load_paper_matrix,
)
from predictor.fit.calibration import calibrate_fold_in, held_out_models, reveal_scores  # noqa: E402
from predictor.methods.bayesian import BayesianCompleter  # noqa: E402
from predictor.side_information import (  # noqa: E402
    DEFAULT_USE,
    SideInformation,
    paper_side_information,
)

SEEDS = (1000, 1001)
KNOWN = (3, 5, 15)
N_SPLITS = 3
LEVEL = 0.9
FUTURE_SHIFT = 0.125  # half a quarter


def fold_in_coverage(
    values: np.ndarray,
    scales: list[str],
    side: SideInformation,
    params: dict,
    use: tuple[str, ...] = DEFAULT_USE,
    seeds: tuple[int, ...] = SEEDS,
) -> dict:
    """Pooled 90% coverage and median width of held-out models folded in from k scores."""
    observed = np.isfinite(values)
    percent = np.array([s == "percent" for s in scales])
    kwargs = side.fit_kwargs(use)
    make = partial(BayesianCompleter, **params)
    covered: dict[int, list] = {k: [] for k in KNOWN}
    widths: dict[int, list] = {k: [] for k in KNOWN}
    errors: dict[int, list] = {k: [] for k in KNOWN}
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for inside, comp in held_out_models(values, scales, make, N_SPLITS, rng, kwargs):
            comp.fold_in_calibration_ = calibrate_fold_in(
                np.where(inside[:, None], np.nan, values), scales, make, fit_kwargs=kwargs
            )
            for i in np.flatnonzero(inside):
                cells = np.flatnonzero(observed[i])
                about = {"features": side.model_features(i, use), "group": side.model_group(i, use)}
                for k in KNOWN:
                    if (drawn := reveal_scores(values, i, cells, k, rng)) is None:
                        continue
                    row, hidden = drawn
                    mean, low, high, _ = comp.fold_in_summary(row, LEVEL, **about)
                    actual = values[i, hidden]
                    covered[k].append((actual >= low[hidden]) & (actual <= high[hidden]))
                    widths[k].append((high - low)[hidden][percent[hidden]])
                    errors[k].append(np.abs(mean[hidden] - actual))
    out = {}
    for k in KNOWN:
        out[f"fold_in_cov_k{k}"] = float(np.concatenate(covered[k]).mean())
        out[f"fold_in_width_k{k}"] = float(np.median(np.concatenate(widths[k])))
        out[f"fold_in_medae_k{k}"] = float(np.median(np.concatenate(errors[k])))
    return out


def future_coverage(values, scales, side, params, use=DEFAULT_USE, shift=FUTURE_SHIFT) -> dict:
    """Pooled figures of the default method on the time-honest protocol, dates + `shift`."""
    side = replace(side, release_year=side.release_year + shift)
    make = partial(BayesianCompleter, **params)

    def fit(train, train_scales, train_side, level):
        kwargs = train_side.fit_kwargs(use)
        comp = make().fit(train, train_scales, **kwargs)
        comp.fold_in_calibration_ = calibrate_fold_in(train, train_scales, make, fit_kwargs=kwargs)

        def predict(row, model_side):
            mean, low, high, _ = comp.fold_in_summary(row, level)
            return mean, low, high

        return predict

    results = run_future_protocol(values, scales, side, [FutureMethod("ours", "ours", fit)], LEVEL)
    pooled = results["pooled"].row(0, named=True)
    return {
        "future_shift": shift,
        "future_cov": pooled["coverage"],
        "future_width": pooled["median_width"],
        "future_medae": pooled["medae"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--future", action="store_true", help="also the time-honest protocol")
    parser.add_argument("--only-future", action="store_true")
    parser.add_argument("--future-shift", type=float, default=FUTURE_SHIFT)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    params = parse_settings(args.set)
    values, _, benchmark_ids, scales = load_paper_matrix(DEFAULT_MATRIX_PATH)
    side = paper_side_information(DEFAULT_MATRIX_PATH, DEFAULT_REGISTRY_PATH, benchmark_ids)
    start = time.perf_counter()
    out: dict = {"params": params}
    if not args.only_future:
        out.update(fold_in_coverage(values, scales, side, params, seeds=tuple(args.seeds)))
    if args.future or args.only_future:
        out.update(future_coverage(values, scales, side, params, shift=args.future_shift))
    out["wall_seconds"] = time.perf_counter() - start
    print_figures(out, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
