"""The development figures settings are chosen on: our own splits of the paper matrix, never
its fold file.

- held-out: per-model 3-fold splits on seeds 1000-1009 (`predictor.evaluation.per_model_folds`,
  the construction of the paper's folds: 30 fits); median over folds of MedAE, the pairwise
  ranking accuracy (gap >= 5), 90% coverage and median width over percent benchmarks, and the
  width with the intervals scaled to exactly 0.90 coverage in each fold (so widths compare at
  equal coverage);
- probe: leave each model out with 5 of its scores drawn at random (seeded per model) instead
  of the paper's five probes; MedAE of its hidden cells, pooled;
- new benchmark (`--new-benchmark`): the thinned-column protocol of
  `benchmarks/new_benchmark.py` through `complete_matrix`, k = 5, draws 1000-1004: MedAE and
  its ratio to the best-correlated-benchmark baseline.

The default method runs with the matrix's side information (release dates, families,
categories), as `benchpress evaluate` runs it; `--set name=value` overrides a
`BayesianCompleter` parameter (repeatable), `--plain` drops the side information.

    python benchmarks/dev_splits.py [--new-benchmark] [--set interval_scale=1.0] [--json]
        [--columns [ID ...]]   # also per-column pooled MedAE (30 folds, and the 9 of peers.py)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.new_benchmark import baseline, eligible, kept_models  # noqa: E402
from predictor.evaluation.protocols import (  # noqa: E402
    DEFAULT_MATRIX_PATH,
    DEFAULT_REGISTRY_PATH,
    SideAware,
    load_paper_matrix,
    per_model_folds,
    ranking_accuracy,
    run_holdout,
    run_probe_protocol,
)
from predictor.fit.completion import Completion, complete_matrix  # noqa: E402
from predictor.methods.common import student_t_quantile  # noqa: E402
from predictor.side_information import DEFAULT_USE, paper_side_information  # noqa: E402

SEEDS = tuple(range(1000, 1010))
NEW_BENCHMARK_DRAWS = range(1000, 1005)
N_PROBES = 5
LEVEL = 0.9


def exact_coverage_width(
    completion: Completion, values: np.ndarray, cells: np.ndarray, percent: np.ndarray
) -> tuple[float, float]:
    """Median 90% width (percent columns) with the half-widths scaled so that exactly 90% of
    the fold's held-out cells are covered, and the `interval_scale` that does it."""
    model = completion.model
    rows, cols = cells[:, 0], cells[:, 1]
    z_hat = model.z_pred_[rows, cols]
    noise = model.model_noise_[rows] * model.benchmark_noise_[cols]
    q = student_t_quantile(0.5 + LEVEL / 2.0, float(model.nu))
    half = model.interval_scale * q * np.sqrt(model.z_var_[rows, cols] + noise)
    tf = model.transform_
    z_true = tf.transform(_scatter(values, cells))[rows, cols]
    factor = float(np.quantile(np.abs(z_true - z_hat) / half, LEVEL))
    low = tf.inverse_at(z_hat - factor * half, cols)
    high = tf.inverse_at(z_hat + factor * half, cols)
    pct = percent[cols]
    return float(np.median((high - low)[pct])), factor * float(model.interval_scale)


def _scatter(values: np.ndarray, cells: np.ndarray) -> np.ndarray:
    out = np.full(values.shape, np.nan)
    out[cells[:, 0], cells[:, 1]] = values[cells[:, 0], cells[:, 1]]
    return out


class Recorder:
    """A fit_predict that also keeps each fold's completion (for the equal-coverage width)."""

    def __init__(self, fit_predict) -> None:
        self.fit_predict = fit_predict
        self.last: Completion | None = None
        self.takes_columns = getattr(fit_predict, "takes_columns", False)

    def __call__(self, values, scales, **kwargs) -> Completion:
        self.last = self.fit_predict(values, scales, **kwargs)
        return self.last


def column_medae(cells: pl.DataFrame, benchmark_ids, names, n_folds: int | None = None) -> dict:
    """Pooled held-out MedAE of the named columns (over the first `n_folds` folds: 9 = the
    three seeds `benchmarks/peers.py` compares with ExtraTrees on)."""
    if n_folds is not None:
        cells = cells.filter(pl.col("fold_index") < n_folds)
    out = {}
    for name in names:
        j = list(benchmark_ids).index(name)
        col = cells.filter(pl.col("benchmark") == j)
        out[name] = float((col["actual"] - col["mean"]).abs().median())
    return out


def holdout(values, scales, fit_predict, benchmark_ids=None, columns=()) -> dict:
    percent = np.array([s == "percent" for s in scales])
    folds = per_model_folds(values, SEEDS)
    rec = Recorder(fit_predict)
    medae, cover, width, exact, scale, cells = [], [], [], [], [], []
    seconds = 0.0
    for k, fold in enumerate(folds):
        run = run_holdout(values, scales, [fold], rec, first_index=k)
        row = run.per_fold.row(0, named=True)
        seconds += run.seconds
        medae.append(row["medae"])
        cover.append(row["coverage_90"])
        width.append(row["median_width_90"])
        # every column keeps a training cell on these splits, so indexes are the full matrix's
        assert rec.last is not None and rec.last.mean.shape == values.shape
        fold_width, fold_scale = exact_coverage_width(rec.last, values, fold.test_cells, percent)
        exact.append(fold_width)
        scale.append(fold_scale)
        cells.append(run.cells)
    pooled = pl.concat(cells)
    ranking = ranking_accuracy(values, pooled)["accuracy"]
    per_column = {}
    if columns:
        per_column = {
            "columns_30": column_medae(pooled, benchmark_ids, columns),
            "columns_9": column_medae(pooled, benchmark_ids, columns, n_folds=9),
        }
    return {
        **per_column,
        "medae": float(np.median(medae)),
        "ranking": float(ranking),
        "coverage_90": float(np.median(cover)),
        "width_90": float(np.median(width)),
        "width_at_090": float(np.median(exact)),
        "scale_at_090": float(np.median(scale)),
        "seconds": seconds,
    }


def random_probes(values, scales, fit_predict) -> dict:
    """Leave each model out with N_PROBES random scores revealed: hidden-cell MedAE."""
    errors = []
    for i in range(values.shape[0]):
        observed = np.flatnonzero(np.isfinite(values[i]))
        if len(observed) <= N_PROBES:
            continue
        rng = np.random.default_rng([1000, i])
        probes = rng.choice(observed, N_PROBES, replace=False)
        run = run_probe_protocol(values, scales, probes, fit_predict, [i])
        hidden = run.cells.filter(~run.cells["revealed"])
        errors.append(np.abs(hidden["actual"].to_numpy() - hidden["mean"].to_numpy()))
    return {"probe_medae": float(np.median(np.concatenate(errors)))}


def new_benchmark(values, scales, params, k: int = 5) -> dict:
    """The thinned-column protocol through complete_matrix (no side information, as there)."""
    ours, base = [], []
    for j in eligible(values, scales):
        for draw in NEW_BENCHMARK_DRAWS:
            kept = kept_models(values, j, k, draw)
            hidden = np.setdiff1d(np.flatnonzero(np.isfinite(values[:, j])), kept)
            thinned = values.copy()
            thinned[hidden, j] = np.nan
            done = complete_matrix(thinned, scales, level=LEVEL, **params)
            ours.append(np.abs(done.mean[hidden, j] - values[hidden, j]))
            base.append(np.abs(baseline(values, j, kept, hidden) - values[hidden, j]))
    a, b = float(np.median(np.concatenate(ours))), float(np.median(np.concatenate(base)))
    return {"new_benchmark_medae": a, "new_benchmark_ratio": a / b}


def parse_value(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def parse_settings(items: list[str]) -> dict:
    """`--set NAME=VALUE` options as keyword arguments of the method."""
    params = {}
    for item in items:
        name, _, value = item.partition("=")
        params[name] = parse_value(value)
    return params


def print_figures(out: dict, as_json: bool) -> None:
    """One line of `name=value` figures, or the JSON object (`--json`)."""
    if as_json:
        print(json.dumps(out))
    else:
        shown = (f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in out.items())
        print(" ".join(shown))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--plain", action="store_true", help="no side information")
    parser.add_argument("--new-benchmark", action="store_true")
    parser.add_argument("--only-new-benchmark", action="store_true")
    parser.add_argument("--no-probe", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--columns",
        nargs="*",
        default=None,
        metavar="ID",
        help="also the pooled MedAE of these benchmarks (no ids: the peers' named columns)",
    )
    args = parser.parse_args(argv)
    params = parse_settings(args.set)
    values, _, benchmark_ids, scales = load_paper_matrix(DEFAULT_MATRIX_PATH)
    side = paper_side_information(DEFAULT_MATRIX_PATH, DEFAULT_REGISTRY_PATH, benchmark_ids)
    use = () if args.plain else DEFAULT_USE
    fit_predict = SideAware(side, use, {"level": LEVEL, **params})
    start = time.perf_counter()
    out: dict = {"params": params, "plain": args.plain}
    if not args.only_new_benchmark:
        columns = args.columns
        if columns is not None and not columns:
            from benchmarks.peers import NAMED_COLUMNS, OVER_LIMIT_COLUMNS

            columns = list(dict.fromkeys([*NAMED_COLUMNS, *OVER_LIMIT_COLUMNS]))
        out.update(holdout(values, scales, fit_predict, benchmark_ids, columns or ()))
        if not args.no_probe:
            out.update(random_probes(values, scales, fit_predict))
    if args.new_benchmark or args.only_new_benchmark:
        out.update(new_benchmark(values, scales, params))
    out["wall_seconds"] = time.perf_counter() - start
    print_figures(out, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
