"""Time-honest evaluation: predict models released after a cut date from a fit that never saw
them, as a user predicts a new release (`benchpress evaluate --protocol future`).

For each cut date T (the start of a calendar quarter) with enough models on both sides:

- the completer is fitted on the models released before T only (their cells; benchmarks they
  never scored are left out), with the side information of those models;
- each model released in the quarter starting at T is folded in from `n_probes` of its scores
  (its benchmarks most often scored by the training models, ties in column order: what a team
  runs first) and its other scores are predicted;
- MedAE, coverage and median width of the `level` intervals (width over percent benchmarks,
  in points) are reported per quarter and pooled over all quarters, per method.

Release dates are fractional years (`predictor.side_information`); models without one take
part in neither side. Everything is deterministic given the seeds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from predictor.fit.calibration import calibrate_fold_in
from predictor.methods.registry import make_completer
from predictor.side_information import DEFAULT_USE, SideInformation, unknown_features

# A fitted method's prediction for one new model: (row of known scores, the model's side
# information) -> (mean, low, high) over the fitted columns.
RowPredictor = Callable[[np.ndarray, SideInformation], tuple[np.ndarray, np.ndarray, np.ndarray]]
# (training values, scales, their side information, level) -> RowPredictor
FitForFuture = Callable[[np.ndarray, list[str], SideInformation, float], RowPredictor]

MIN_TRAIN_MODELS = 20
MIN_TEST_MODELS = 3
N_PROBES = 5


@dataclass(frozen=True)
class FutureMethod:
    """A method of the future protocol: `name` (JSON key), `label` (table), `fit`."""

    name: str
    label: str
    fit: FitForFuture


@dataclass(frozen=True)
class Cut:
    """A cut date and the quarter after it: train on year < start, test on start <= year < end."""

    label: str  # "2025Q2"
    start: float
    end: float


def quarter_label(year: float) -> str:
    whole = math.floor(year + 1e-9)
    return f"{whole}Q{int(round((year - whole) * 4)) + 1}"


def quarter_cuts(
    release_year: np.ndarray,
    min_train: int = MIN_TRAIN_MODELS,
    min_test: int = MIN_TEST_MODELS,
) -> list[Cut]:
    """Every quarter start T with at least `min_train` models released before T and
    `min_test` released in [T, T + 1/4)."""
    years = np.asarray(release_year, dtype=float)
    years = years[np.isfinite(years)]
    if len(years) == 0:
        return []
    first = math.floor(years.min() * 4) / 4 + 0.25
    last = math.floor(years.max() * 4) / 4
    cuts = []
    for k in range(int(round((last - first) * 4)) + 1):
        start = first + k / 4
        end = start + 0.25
        n_train = int((years < start - 1e-9).sum())
        n_test = int(((years >= start - 1e-9) & (years < end - 1e-9)).sum())
        if n_train >= min_train and n_test >= min_test:
            cuts.append(Cut(quarter_label(start), start, end))
    return cuts


def probe_columns(observed_row: np.ndarray, train_counts: np.ndarray, n_probes: int) -> np.ndarray:
    """The `n_probes` columns of a model most often scored by the training models (ties by
    column order); fewer when the model has fewer scored columns with training data."""
    candidates = np.flatnonzero(observed_row & (train_counts > 0))
    order = np.lexsort((candidates, -train_counts[candidates]))
    return np.sort(candidates[order[:n_probes]])


def _metrics(actual: np.ndarray, mean: np.ndarray, low: np.ndarray, high: np.ndarray, percent):
    if len(actual) == 0:
        nan = float("nan")
        return {"n_cells": 0, "medae": nan, "coverage": nan, "median_width": nan}
    has = np.isfinite(low) & np.isfinite(high)
    return {
        "n_cells": int(len(actual)),
        "medae": float(np.median(np.abs(mean - actual))),
        "coverage": float(np.mean((actual >= low) & (actual <= high))) if has.all() else math.nan,
        "median_width": float(np.median((high - low)[percent]))
        if has.all() and percent.any()
        else math.nan,
    }


def run_future_protocol(
    values: np.ndarray,
    scales: Sequence[str],
    side: SideInformation,
    methods: Sequence[FutureMethod],
    level: float = 0.9,
    n_probes: int = N_PROBES,
    min_train: int = MIN_TRAIN_MODELS,
    min_test: int = MIN_TEST_MODELS,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Run the protocol (module doc) for every method on the same cuts, probes and cells.

    Returns {"protocol": ..., "quarters": frame (one row per cut and method),
    "pooled": frame (one row per method, all quarters' cells together)}."""
    values = np.asarray(values, dtype=float)
    if side.release_year is None:
        raise ValueError("the future protocol needs a release date per model")
    years = np.asarray(side.release_year, dtype=float)
    observed = np.isfinite(values)
    percent = np.array([s == "percent" for s in scales])
    cuts = quarter_cuts(years, min_train, min_test)
    rows: list[dict] = []
    pooled: dict[str, list[np.ndarray]] = {m.name: [] for m in methods}
    seconds = {m.name: 0.0 for m in methods}
    for cut in cuts:
        train_rows = np.flatnonzero(years < cut.start - 1e-9)
        test_rows = np.flatnonzero((years >= cut.start - 1e-9) & (years < cut.end - 1e-9))
        counts = observed[train_rows].sum(axis=0)
        keep = np.flatnonzero(counts > 0)
        train = values[np.ix_(train_rows, keep)]
        train_scales = [scales[j] for j in keep]
        train_side = side.rows(train_rows).columns(keep)
        if progress:
            progress(f"{cut.label}: {len(train_rows)} models before, {len(test_rows)} in it")
        tasks = []  # (model index, probe columns, scored columns), in kept-column indexes
        for i in test_rows:
            row_obs = observed[i, keep]
            probes = probe_columns(row_obs, counts[keep], n_probes)
            scored = np.setdiff1d(np.flatnonzero(row_obs), probes)
            if len(probes) == n_probes and len(scored):
                tasks.append((int(i), probes, scored))
        for method in methods:
            start = time.perf_counter()
            predict = method.fit(train, train_scales, train_side, level)
            parts = []
            for i, probes, scored in tasks:
                row = np.full(len(keep), np.nan)
                row[probes] = values[i, keep[probes]]
                mean, low, high = predict(row, side.rows([i]).columns(keep))
                parts.append(
                    np.stack(
                        [
                            values[i, keep[scored]],
                            mean[scored],
                            low[scored],
                            high[scored],
                            percent[keep[scored]].astype(float),
                        ]
                    )
                )
            seconds[method.name] += time.perf_counter() - start
            cells = np.concatenate(parts, axis=1) if parts else np.empty((5, 0))
            pooled[method.name].append(cells)
            rows.append(
                {
                    "quarter": cut.label,
                    "method": method.name,
                    "label": method.label,
                    "n_train_models": int(len(train_rows)),
                    "n_test_models": len(tasks),
                    **_metrics(cells[0], cells[1], cells[2], cells[3], cells[4] > 0),
                }
            )
    pooled_rows = []
    for method in methods:
        parts = pooled[method.name]
        cells = np.concatenate(parts, axis=1) if parts else np.empty((5, 0))
        pooled_rows.append(
            {
                "method": method.name,
                "label": method.label,
                "n_quarters": len(cuts),
                **_metrics(cells[0], cells[1], cells[2], cells[3], cells[4] > 0),
                "seconds": seconds[method.name],
            }
        )
    return {
        "protocol": {
            "name": "future",
            "n_models": int(values.shape[0]),
            "n_benchmarks": int(values.shape[1]),
            "n_dated_models": int(np.isfinite(years).sum()),
            "level": level,
            "n_probes": n_probes,
            "min_train_models": min_train,
            "min_test_models": min_test,
            "probes": "the new model's benchmarks most often scored by the training models",
        },
        "quarters": pl.DataFrame(rows),
        "pooled": pl.DataFrame(pooled_rows),
    }


# ------------------------------------------------------------------------------ the methods
def ours_future(
    use: Sequence[str] = DEFAULT_USE,
    random_state: int = 0,
    calibrate: bool = True,
    family_at_fold_in: bool = False,
) -> FitForFuture:
    """The default method as a snapshot serves it: fitted on the training models with their
    side information, new-model intervals calibrated on held-out training models, each new
    model folded in from its probes as `BenchPress.predict` does (no release date given:
    inferred from the probes; no family). `family_at_fold_in` also gives the fold-in the new model's
    family, when the fit knows it."""

    def fit(values, scales, side, level):
        kwargs = side.fit_kwargs(use)
        completer = make_completer("bayes", random_state=random_state).fit(values, scales, **kwargs)
        if calibrate:
            completer.fold_in_calibration_ = calibrate_fold_in(
                values,
                scales,
                lambda: make_completer("bayes", random_state=random_state),
                random_state=random_state,
                fit_kwargs=kwargs,
            )

        def predict(row, model_side):
            group = model_side.model_group(0, use) if family_at_fold_in else None
            features = unknown_features(completer)  # no date given: inferred
            mean, low, high, _ = completer.fold_in_summary(
                row, level, features=features, group=group
            )
            return mean, low, high

        return predict

    return fit


def recipe_future(random_state: int = 0) -> FitForFuture:
    """The BenchPress recipe (vectorised ALS) fitted on the training models; new models by
    its ridge fold-in, intervals from its cross-validated residual quantiles."""

    def fit(values, scales, side, level):
        completer = make_completer("als", random_state=random_state).fit(values, scales)
        bottom = np.nan_to_num(side.lower, nan=-np.inf) if side.lower is not None else None
        top = np.nan_to_num(side.upper, nan=np.inf) if side.upper is not None else None

        def predict(row, model_side):
            mean = completer.fold_in(row)
            low, high = completer.fold_in_interval(row, level)
            if bottom is not None and top is not None:
                mean, low, high = (np.clip(a, bottom, top) for a in (mean, low, high))
            return mean, low, high

        return predict

    return fit


def column_mean_future() -> FitForFuture:
    """Each benchmark's mean over the training models; interval: its central quantiles."""

    def fit(values, scales, side, level):
        tail = (1.0 - level) / 2.0
        mean = np.nanmean(values, axis=0)
        low = np.nanquantile(values, tail, axis=0)
        high = np.nanquantile(values, 1.0 - tail, axis=0)

        def predict(row, model_side):
            return mean, low, high

        return predict

    return fit


def format_future(results: dict) -> str:
    """Per-quarter and pooled figures of `run_future_protocol`, one line per quarter."""
    quarters: pl.DataFrame = results["quarters"]
    pooled: pl.DataFrame = results["pooled"]
    methods = pooled["method"].to_list()
    labels = dict(zip(pooled["method"], pooled["label"], strict=True))

    def num(value: float | None, fmt: str) -> str:
        return "-" if value is None or not np.isfinite(value) else format(value, fmt)

    level = round(100 * results["protocol"]["level"])
    head = f"{'quarter':<8} {'train':>5} {'new':>4} {'cells':>5}" + "".join(
        f" | {name[:22]:>22}" for name in methods
    )
    sub = " " * 26 + "".join(f" | {'MedAE':>6} {'cov':>6} {'width':>8}" for _ in methods)
    lines = [head, sub, "-" * len(head)]
    for quarter in quarters["quarter"].unique(maintain_order=True).to_list():
        part = quarters.filter(pl.col("quarter") == quarter)
        first = part.row(0, named=True)
        cells = f"{quarter:<8} {first['n_train_models']:>5} {first['n_test_models']:>4} "
        cells += f"{first['n_cells']:>5}"
        for name in methods:
            r = part.filter(pl.col("method") == name).row(0, named=True)
            cells += (
                f" | {num(r['medae'], '.2f'):>6} {num(r['coverage'], '.3f'):>6} "
                f"{num(r['median_width'], '.1f'):>8}"
            )
        lines.append(cells)
    total = pooled.row(0, named=True)
    cells = f"{'all':<8} {'':>5} {'':>4} {total['n_cells']:>5}"
    for name in methods:
        r = pooled.filter(pl.col("method") == name).row(0, named=True)
        cells += (
            f" | {num(r['medae'], '.2f'):>6} {num(r['coverage'], '.3f'):>6} "
            f"{num(r['median_width'], '.1f'):>8}"
        )
    lines += ["-" * len(head), cells, ""]
    lines.append(
        "methods: "
        + "; ".join(f"{name} = {labels[name]}" for name in methods)
        + f". Fitted on the models released before each quarter, each model released in it "
        f"folded in from its {results['protocol']['n_probes']} benchmarks most scored by the "
        f"earlier models; MedAE in points over its other scores, cov = share inside the "
        f"{level}% interval, width = median {level}% width over percent benchmarks."
    )
    return "\n".join(lines)
