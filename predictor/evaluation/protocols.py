"""The BenchPress paper's evaluation protocols, as pure functions any completer can plug into.

A completer is a callable (values_with_nans, scales) -> Completion. Protocols:

- held-out cells (`run_holdout`): for each fold of the paper's fold file its test cells are set
  to NaN, the completer fills the matrix, and errors are measured on those cells in original
  units (percent points for most benchmarks); `ranking_accuracy` scores the completed
  leaderboards;
- probes (`run_probe_protocol`): leave one model out with only its probe benchmarks revealed;
- `evaluate_methods` runs both for several completers side by side and `format_table` prints it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import polars as pl

from predictor.fit.completion import Completion, complete_matrix
from predictor.side_information import DEFAULT_USE, SideInformation

FitPredict = Callable[[np.ndarray, Sequence[str]], Completion]

# In-repo copies of the paper matrix and its fold file (see benchmarks/data/README.md).
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MATRIX_PATH = (
    REPO_ROOT / "pipelines" / "replay" / "microsoft.github.io" / "benchpress" / "data.json"
)
DEFAULT_FOLDS_PATH = REPO_ROOT / "benchmarks" / "data" / "folds_s10_f3_bs42_ms1.json"
# The benchmark registry (floors, valid ranges, categories of the paper's benchmark ids).
DEFAULT_REGISTRY_PATH = REPO_ROOT / "pipelines" / "identity" / "benchmarks.csv"

# Columns of the paper matrix that are not 0-100 percentages (see the data's SOURCE.md).
PAPER_UNBOUNDED = frozenset(
    {
        "chatbot_arena_elo",
        "codeforces_rating",
        "gdpval_aa_elo",
        "swelancer_freelance_dollars",
        "vending_bench_2",
    }
)

# |actual| below this is left out of MedAPE, as in the paper's harness.
_APE_MIN_ACTUAL = 1e-6

# Interval levels whose coverage and median width every held-out fold reports.
REPORT_LEVELS = (0.5, 0.8, 0.9, 0.95)


def level_key(level: float) -> str:
    """Column suffix of a level: 0.9 -> "90", 0.95 -> "95"."""
    return f"{round(level * 100):d}"


@dataclass(frozen=True)
class Fold:
    """One held-out split: the (model_index, benchmark_index) cells to hide."""

    seed: int
    fold: int
    test_cells: np.ndarray  # (k, 2) int


def load_paper_matrix(path: str | Path) -> tuple[np.ndarray, list[str], list[str], list[str]]:
    """Read BenchPress `data.json` -> (values with NaN, model ids, benchmark ids, scales)."""
    data = json.loads(Path(path).read_text())
    model_ids = [m["id"] for m in data["models"]]
    benchmark_ids = [b["id"] for b in data["benchmarks"]]
    values = np.array(
        [[np.nan if v is None else float(v) for v in row] for row in data["observed"]],
        dtype=float,
    )
    if values.shape != (len(model_ids), len(benchmark_ids)):
        raise ValueError(f"observed has shape {values.shape}, expected models x benchmarks")
    scales = ["unbounded" if b in PAPER_UNBOUNDED else "percent" for b in benchmark_ids]
    return values, model_ids, benchmark_ids, scales


def load_folds(path: str | Path) -> list[Fold]:
    """Read the paper's fold file (e.g. folds_s10_f3_bs42_ms1.json)."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"fold file {path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("folds"), list):
        raise ValueError(f"fold file {path}: expected an object with a 'folds' list")
    return [
        Fold(
            seed=int(rec["seed"]),
            fold=int(rec["fold"]),
            test_cells=np.asarray(rec["test_cells"], dtype=int).reshape(-1, 2),
        )
        for rec in data["folds"]
    ]


def column_mean_baseline(
    values: np.ndarray, scales: Sequence[str], level: float = 0.9
) -> Completion:
    """Fill each missing cell with its column mean; interval = central quantiles of the column.

    The no-information reference point: anything worth using has to beat it.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"values must be 2-D, got shape {values.shape}")
    if len(scales) != values.shape[1]:
        raise ValueError(f"scales has {len(scales)} entries but values has {values.shape[1]}")
    observed = ~np.isnan(values)
    if not observed.any(axis=0).all():
        raise ValueError("values has columns with no observed cells")
    tail = (1.0 - level) / 2.0
    col_mean = np.nanmean(values, axis=0)
    col_low = np.nanquantile(values, tail, axis=0)
    col_high = np.nanquantile(values, 1.0 - tail, axis=0)
    return Completion(
        mean=np.where(observed, values, col_mean),
        low=np.where(observed, values, col_low),
        high=np.where(observed, values, col_high),
        model=None,
        level=level,
    )


def cell_metrics(
    actual: np.ndarray,
    mean: np.ndarray,
    low: np.ndarray | None = None,
    high: np.ndarray | None = None,
) -> dict[str, float]:
    """Error and interval figures for one set of held-out cells (1-D arrays, original units)."""
    actual = np.asarray(actual, dtype=float)
    mean = np.asarray(mean, dtype=float)
    low = np.full(len(actual), np.nan) if low is None else np.asarray(low, dtype=float)
    high = np.full(len(actual), np.nan) if high is None else np.asarray(high, dtype=float)
    ok = np.isfinite(actual) & np.isfinite(mean)
    actual, mean, low, high = actual[ok], mean[ok], low[ok], high[ok]
    if len(actual) == 0:
        nan = float("nan")
        return dict(n=0, medae=nan, medape=nan, within5=nan, coverage=nan, median_width=nan)
    abs_err = np.abs(mean - actual)
    nonzero = np.abs(actual) > _APE_MIN_ACTUAL
    ape = abs_err[nonzero] / np.abs(actual[nonzero]) * 100.0
    has_interval = np.isfinite(low) & np.isfinite(high)
    if has_interval.all():
        coverage = float(np.mean((actual >= low) & (actual <= high)))
        median_width = float(np.median(high - low))
    else:
        coverage = median_width = float("nan")
    return dict(
        n=int(len(actual)),
        medae=float(np.median(abs_err)),
        medape=float(np.median(ape)) if len(ape) else float("nan"),
        within5=float(np.mean(abs_err <= 5.0)),
        coverage=coverage,
        median_width=median_width,
    )


def _fit_fold(
    values: np.ndarray, scales: Sequence[str], cells: np.ndarray, fit_predict: FitPredict
) -> tuple[Completion, np.ndarray]:
    """Hide `cells`, drop columns left empty, fit; returns the completion and kept columns."""
    train = values.copy()
    train[cells[:, 0], cells[:, 1]] = np.nan
    keep = np.flatnonzero(~np.isnan(train).all(axis=0))
    kept_scales = [scales[j] for j in keep]
    if getattr(fit_predict, "takes_columns", False):  # side information follows the columns
        completion = fit_predict(train[:, keep], kept_scales, columns=keep)
    else:
        completion = fit_predict(train[:, keep], kept_scales)
    return completion, keep


def _predictions_at(
    completion: Completion, keep: np.ndarray, n_columns: int, cells: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, low, high) at `cells` in full-matrix indexes; NaN where the column was dropped."""
    col_pos = np.full(n_columns, -1)
    col_pos[keep] = np.arange(len(keep))
    i, j = cells[:, 0], col_pos[cells[:, 1]]
    scored = j >= 0
    out = []
    for arr in (completion.mean, completion.low, completion.high):
        picked = np.full(len(cells), np.nan)
        picked[scored] = np.asarray(arr, dtype=float)[i[scored], j[scored]]
        out.append(picked)
    return out[0], out[1], out[2]


def _interval_figures(
    completion: Completion,
    keep: np.ndarray,
    values: np.ndarray,
    cells: np.ndarray,
    percent: np.ndarray,
) -> dict[str, float]:
    """Coverage and median width at every `REPORT_LEVELS` level, from the fitted model.

    Coverage counts every scored cell; the width is the median over cells of percent
    benchmarks only (`percent`, one flag per cell), so it is in points: ratings or dollars
    would otherwise mix into the median. NaN when the completion has no fitted `Completer`
    behind it (e.g. the column-mean baseline or the reference loop port): only its own level
    is known.
    """
    figures: dict[str, float] = {}
    model = completion.model
    for level in REPORT_LEVELS:
        key = level_key(level)
        coverage = width = float("nan")
        if model is not None:
            low, high = model.predict_interval(level=level, keep_observed=False)
            mean, lo, hi = _predictions_at(
                Completion(mean=completion.mean, low=low, high=high), keep, values.shape[1], cells
            )
            ok = np.isfinite(mean) & np.isfinite(lo) & np.isfinite(hi)
            actual = values[cells[ok, 0], cells[ok, 1]]
            if ok.any():
                coverage = float(np.mean((actual >= lo[ok]) & (actual <= hi[ok])))
            if (ok & percent).any():
                width = float(np.median(hi[ok & percent] - lo[ok & percent]))
        figures[f"coverage_{key}"] = coverage
        figures[f"median_width_{key}"] = width
    return figures


@dataclass(frozen=True)
class SideAware:
    """`complete_matrix` given the matrix's side information (release dates, families,
    categories, floors, valid ranges: `predictor.side_information`), cut to the columns each
    fit keeps. `use` picks the parts (default: what the default method uses)."""

    side: SideInformation
    use: tuple[str, ...] = DEFAULT_USE
    params: dict = field(default_factory=dict)
    complete: Callable[..., Completion] = complete_matrix
    takes_columns: ClassVar[bool] = True

    def __call__(
        self, values: np.ndarray, scales: Sequence[str], columns: np.ndarray | None = None
    ) -> Completion:
        side = self.side if columns is None else self.side.columns(columns)
        return self.complete(values, scales, **side.fit_kwargs(self.use), **self.params)


@dataclass(frozen=True)
class HoldoutRun:
    """Per-fold figures plus every held-out cell's prediction (for ranking figures)."""

    per_fold: pl.DataFrame
    cells: pl.DataFrame  # fold_index, model, benchmark, actual, mean, low, high
    seconds: float
    cpu_seconds: float = float("nan")


def run_holdout(
    values: np.ndarray,
    scales: Sequence[str],
    folds: Sequence[Fold],
    fit_predict: FitPredict,
    first_index: int = 0,
) -> HoldoutRun:
    """Fit once per fold with its test cells hidden; score the hidden cells.

    Columns with no training cells in a fold are left out of the fit and their test cells are
    not scored (`n_unscored`), as the paper's harness skips cells it cannot predict.
    Coverage and width are NaN when the completer returns no finite interval; `median_width`
    is over all scored cells (as the paper's 27.2), `median_width_<level>` over the cells of
    percent benchmarks (in points; see `_interval_figures`). `seconds` is
    wall time inside the completer, `cpu_seconds` this process's CPU time there; cells are
    numbered by fold from `first_index`.
    """
    values = np.asarray(values, dtype=float)
    percent = np.array([scale == "percent" for scale in scales])
    rows, cell_frames = [], []
    total = total_cpu = 0.0
    for k, fold in enumerate(folds, start=first_index):
        start, start_cpu = time.perf_counter(), time.process_time()
        completion, keep = _fit_fold(values, scales, fold.test_cells, fit_predict)
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - start_cpu
        total += seconds
        total_cpu += cpu_seconds
        cells = fold.test_cells
        actual = values[cells[:, 0], cells[:, 1]]
        mean, low, high = _predictions_at(completion, keep, values.shape[1], cells)
        scored = np.isfinite(mean)
        metrics = cell_metrics(actual[scored], mean[scored], low[scored], high[scored])
        rows.append(
            dict(
                seed=fold.seed,
                fold=fold.fold,
                n_unscored=int((~scored).sum()),
                **metrics,
                **_interval_figures(completion, keep, values, cells, percent[cells[:, 1]]),
                seconds=seconds,
                cpu_seconds=cpu_seconds,
            )
        )
        cell_frames.append(
            pl.DataFrame(
                {
                    "fold_index": np.full(len(cells), k, dtype=np.int32),
                    "model": cells[:, 0].astype(np.int32),
                    "benchmark": cells[:, 1].astype(np.int32),
                    "actual": actual,
                    "mean": mean,
                    "low": low,
                    "high": high,
                }
            )
        )
    cells_frame = pl.concat(cell_frames) if cell_frames else pl.DataFrame()
    return HoldoutRun(
        per_fold=pl.DataFrame(rows), cells=cells_frame, seconds=total, cpu_seconds=total_cpu
    )


def holdout_errors(
    values: np.ndarray,
    scales: Sequence[str],
    folds: Sequence[Fold],
    fit_predict: FitPredict,
) -> pl.DataFrame:
    """Per-fold MedAE, MedAPE, share within 5 points, interval coverage and median width."""
    return run_holdout(values, scales, folds, fit_predict).per_fold


def ranking_accuracy(
    values: np.ndarray, cells: pl.DataFrame, margin: float = 5.0
) -> dict[str, float | int]:
    """Pairwise ranking accuracy of completed leaderboards (BenchPress section 5.2).

    For every fold and benchmark the leaderboard is the benchmark's observed models, with the
    fold's held-out cells replaced by their predictions (cells without a finite prediction are
    left out). A pair is scored when at least one of its cells was held out and the true gap is
    at least `margin` (in the benchmark's own units); it is correct when the predicted order
    agrees (a predicted tie is wrong). Pairs are pooled over folds per benchmark; the figure is
    the median over benchmarks of their accuracy.
    """
    values = np.asarray(values, dtype=float)
    n_bench = values.shape[1]
    pairs = np.zeros(n_bench, dtype=np.int64)
    correct = np.zeros(n_bench, dtype=np.int64)
    if cells.height:
        fold_index = cells["fold_index"].to_numpy()
        model = cells["model"].to_numpy()
        bench = cells["benchmark"].to_numpy()
        pred = cells["mean"].to_numpy()
        order = np.lexsort((bench, fold_index))
        keys = np.stack([fold_index[order], bench[order]], axis=1)
        bounds = np.flatnonzero(np.any(np.diff(keys, axis=0) != 0, axis=1)) + 1
        for group in np.split(order, bounds):
            j = int(bench[group[0]])
            observed = np.flatnonzero(np.isfinite(values[:, j]))
            completed = values[observed, j].copy()
            held = np.zeros(len(observed), dtype=bool)
            pos = np.searchsorted(observed, model[group])
            completed[pos] = pred[group]
            held[pos] = True
            ok = np.isfinite(completed)
            actual, completed, held = values[observed, j][ok], completed[ok], held[ok]
            true_diff = actual[:, None] - actual[None, :]
            pred_diff = completed[:, None] - completed[None, :]
            scored = (
                np.triu(np.ones((len(actual), len(actual)), dtype=bool), k=1)
                & (held[:, None] | held[None, :])
                & (true_diff != 0)
                & (np.abs(true_diff) >= margin)
            )
            pairs[j] += int(scored.sum())
            correct[j] += int((np.sign(true_diff[scored]) == np.sign(pred_diff[scored])).sum())
    has = pairs > 0
    per_benchmark = correct[has] / pairs[has]
    return {
        "accuracy": float(np.median(per_benchmark)) if has.any() else float("nan"),
        "pooled_accuracy": float(correct.sum() / pairs.sum()) if has.any() else float("nan"),
        "n_pairs": int(pairs.sum()),
        "n_benchmarks": int(has.sum()),
        "margin": float(margin),
    }


@dataclass(frozen=True)
class ProbeRun:
    """Leave-one-model-out with probes revealed: every hidden cell's prediction."""

    cells: pl.DataFrame  # model, benchmark, actual, mean, revealed
    seconds: float
    cpu_seconds: float = float("nan")


def run_probe_protocol(
    values: np.ndarray,
    scales: Sequence[str],
    probe_columns: Sequence[int],
    fit_predict: FitPredict,
    models: Sequence[int] | None = None,
) -> ProbeRun:
    """For each model in turn keep only its probe cells, complete the matrix, score its row.

    Every other model stays fully observed (the paper's all-known-cell probe protocol). The
    model's observed probe cells are listed with `revealed=True` and mean == actual; its other
    observed cells are predicted. Columns left empty are dropped and their cells not scored.
    `models` restricts the protocol to those rows (default: every model).
    """
    values = np.asarray(values, dtype=float)
    probe = np.zeros(values.shape[1], dtype=bool)
    probe[list(probe_columns)] = True
    observed = np.isfinite(values)
    frames = []
    total = total_cpu = 0.0
    for i in range(values.shape[0]) if models is None else models:
        hidden_j = np.flatnonzero(observed[i] & ~probe)
        revealed_j = np.flatnonzero(observed[i] & probe)
        if len(hidden_j):
            cells = np.stack([np.full(len(hidden_j), i), hidden_j], axis=1)
            start, start_cpu = time.perf_counter(), time.process_time()
            completion, keep = _fit_fold(values, scales, cells, fit_predict)
            total += time.perf_counter() - start
            total_cpu += time.process_time() - start_cpu
            mean, _, _ = _predictions_at(completion, keep, values.shape[1], cells)
        else:
            mean = np.empty(0)
        both = np.concatenate([hidden_j, revealed_j])
        frames.append(
            pl.DataFrame(
                {
                    "model": np.full(len(both), i, dtype=np.int32),
                    "benchmark": both.astype(np.int32),
                    "actual": values[i, both],
                    "mean": np.concatenate([mean, values[i, revealed_j]]),
                    "revealed": np.arange(len(both)) >= len(hidden_j),
                }
            )
        )
    return ProbeRun(cells=pl.concat(frames), seconds=total, cpu_seconds=total_cpu)


def summarize_probe(run: ProbeRun) -> dict[str, float]:
    """Pooled figures over all models: hidden cells only, and paper style (revealed exact)."""
    cells = run.cells.filter(pl.col("mean").is_finite())
    hidden = cells.filter(~pl.col("revealed"))
    h = cell_metrics(hidden["actual"].to_numpy(), hidden["mean"].to_numpy())
    paper = cell_metrics(cells["actual"].to_numpy(), cells["mean"].to_numpy())
    return {
        "medae_hidden": h["medae"],
        "medape_hidden": h["medape"],
        "within5_hidden": h["within5"],
        "n_hidden": h["n"],
        "medae_paper": paper["medae"],
        "medape_paper": paper["medape"],
        "n_cells": paper["n"],
        "n_unscored": int(run.cells.height - cells.height),
        "seconds": run.seconds,
        "cpu_seconds": run.cpu_seconds,
    }


def summarize_errors(per_fold: pl.DataFrame) -> dict[str, float]:
    """Median over folds of every figure (the paper reports the median fold), total seconds."""
    figures = ["medae", "medape", "within5", "coverage", "median_width"]
    for level in REPORT_LEVELS:
        figures += [f"coverage_{level_key(level)}", f"median_width_{level_key(level)}"]
    summary = {
        name: float(np.median(per_fold[name].to_numpy()))
        for name in figures
        if name in per_fold.columns
    }
    summary["n_folds"] = per_fold.height
    summary["seconds"] = float(per_fold["seconds"].sum())
    if "cpu_seconds" in per_fold.columns:
        summary["cpu_seconds"] = float(per_fold["cpu_seconds"].sum())
    return summary


# ---------------------------------------------------------------------------- side by side
PAPER_PROBES = ("gpqa_diamond", "hle", "codeforces_rating", "mmlu_pro", "arc_agi_1")
RANKING_MARGIN = 5.0


def load_paper_models(path: str | Path) -> pl.DataFrame:
    """Model metadata of BenchPress `data.json`, in matrix row order.

    `release_year` is the release date as a fractional year (a bare year counts as its
    middle, a year-month as the middle of that month); null when the date is missing.
    """
    data = json.loads(Path(path).read_text())
    rows = []
    for m in data["models"]:
        rows.append(
            {
                "model_id": m["id"],
                "provider": m.get("provider"),
                "reasoning": bool(m.get("reasoning")),
                "open_weights": bool(m.get("open_weights")),
                "release_date": m.get("release_date"),
                "release_year": _fractional_year(m.get("release_date")),
            }
        )
    return pl.DataFrame(rows)


def paper_scores_frame(path: str | Path) -> pl.DataFrame:
    """The paper matrix as the long frame a team hands `BenchPress.fit`: model, benchmark,
    score, scale and each model's release date, one row per observed cell."""
    values, models, benchmarks, scales = load_paper_matrix(path)
    dates = dict(load_paper_models(path).select("model_id", "release_date").iter_rows())
    rows, cols = np.nonzero(np.isfinite(values))
    return pl.DataFrame(
        {
            "model": [models[i] for i in rows],
            "benchmark": [benchmarks[j] for j in cols],
            "score": values[rows, cols],
            "scale": [scales[j] for j in cols],
            "release_date": [dates.get(models[i]) for i in rows],
        }
    )


def _fractional_year(date: str | None) -> float | None:
    if not date:
        return None
    parts = [int(p) for p in str(date).split("-")]
    year = parts[0]
    if len(parts) == 1:
        return year + 0.5
    month = parts[1]
    day = parts[2] if len(parts) > 2 else 15
    return year + (month - 1) / 12.0 + (day - 1) / 365.0


@dataclass(frozen=True)
class Method:
    """A completer to evaluate: `name` (JSON key), `label` (table) and the callable."""

    name: str
    label: str
    fit_predict: FitPredict


def evaluate_methods(
    values: np.ndarray,
    scales: Sequence[str],
    benchmark_ids: Sequence[str],
    folds: Sequence[Fold],
    methods: Sequence[Method],
    probes: Sequence[str] = PAPER_PROBES,
    probe_models: Sequence[int] | None = None,
    margin: float = RANKING_MARGIN,
    progress: Callable[[str], None] | None = None,
    on_fit: Callable[[str, str, int, int], None] | None = None,
) -> dict:
    """Run the held-out and probe protocols for every method on the same data, in turn.

    `progress(message)` announces each phase; `on_fit(phase, method, done, total)` is called
    after every completer fit, outside the timed region (`phase` "held-out" or "probes",
    `done` / `total` count the fits of all methods), e.g. to drive a progress bar.

    Held-out figures are medians over folds (the paper's aggregation); ranking accuracy pools
    pairs over folds per benchmark and takes the median over benchmarks; probe figures pool
    all scored cells. Seconds are the time spent inside each completer.
    """
    probe_columns = [list(benchmark_ids).index(b) for b in probes]
    # Interleaved (each fold, then each left-out model, runs every method in turn) so that a
    # change in machine load during the run affects every method's timing alike.
    models = (
        list(range(values.shape[0]) if probe_models is None else probe_models) if probes else []
    )
    total = (len(folds) + len(models)) * len(methods)
    done = 0

    def fitted(phase: str, method: Method) -> None:
        nonlocal done
        done += 1
        if on_fit:
            on_fit(phase, method.name, done, total)

    holdout_runs: dict[str, list[HoldoutRun]] = {m.name: [] for m in methods}
    if progress:
        progress(f"held-out: {len(folds)} folds x {len(methods)} methods")
    for k, fold in enumerate(folds):
        for method in methods:
            holdout_runs[method.name].append(
                run_holdout(values, scales, [fold], method.fit_predict, first_index=k)
            )
            fitted("held-out", method)
    probe_runs: dict[str, list[ProbeRun]] = {m.name: [] for m in methods}
    if probes:
        if progress:
            progress(f"probes: {len(models)} models left out in turn x {len(methods)} methods")
        for i in models:
            for method in methods:
                probe_runs[method.name].append(
                    run_probe_protocol(values, scales, probe_columns, method.fit_predict, [i])
                )
                fitted("probes", method)
    results: dict = {}
    for method in methods:
        runs = holdout_runs[method.name]
        per_fold = pl.concat([r.per_fold for r in runs])
        cells = pl.concat([r.cells for r in runs])
        holdout = summarize_errors(per_fold)
        holdout.update(
            {f"ranking_{k}": v for k, v in ranking_accuracy(values, cells, margin).items()}
        )
        entry: dict = {"label": method.label, "holdout": holdout}
        if probes:
            parts = probe_runs[method.name]
            entry["probe"] = summarize_probe(
                ProbeRun(
                    cells=pl.concat([r.cells for r in parts]),
                    seconds=sum(r.seconds for r in parts),
                    cpu_seconds=sum(r.cpu_seconds for r in parts),
                )
            )
        entry["per_fold"] = per_fold.to_dicts()
        results[method.name] = entry
    return {
        "protocol": {
            "n_models": int(values.shape[0]),
            "n_benchmarks": int(values.shape[1]),
            "n_observed": int(np.isfinite(values).sum()),
            "n_folds": len(folds),
            "holdout_aggregation": "median over folds of each fold's figure",
            "ranking": f"pairs with a held-out cell and a true gap >= {margin:g}, pooled over "
            "folds per benchmark, median over benchmarks",
            "probes": list(probes),
            "probe_models": None if probe_models is None else [int(i) for i in probe_models],
        },
        "methods": results,
    }


def format_table(results: dict, reference: str | None = "reference") -> str:
    """A plain-text table of `evaluate_methods` results; speed-ups are relative to `reference`."""
    methods = results["methods"]
    ref = methods.get(reference) if reference else None
    header = (
        f"{'method':<34} {'MedAE':>6} {'MedAPE%':>7} {'<=5pt':>6} {'rank%':>6} {'cov90':>6} "
        f"{'width':>6} {'probe':>6} {'probe*':>6} {'fit s':>7} {'cpu s':>7} {'probe s':>7} "
        f"{'speed':>6}"
    )
    lines = [header, "-" * len(header)]

    def num(value: float | None, fmt: str) -> str:
        return "-" if value is None or not np.isfinite(value) else format(value, fmt)

    for entry in methods.values():
        h = entry["holdout"]
        p = entry.get("probe", {})
        speed = (
            ref["holdout"]["seconds"] / h["seconds"]
            if ref is not None and h["seconds"] > 0
            else float("nan")
        )
        lines.append(
            f"{entry['label'][:34]:<34} {num(h['medae'], '.2f'):>6} {num(h['medape'], '.2f'):>7} "
            f"{num(h['within5'], '.3f'):>6} {num(100 * h['ranking_accuracy'], '.2f'):>6} "
            f"{num(h['coverage'], '.3f'):>6} {num(h['median_width'], '.1f'):>6} "
            f"{num(p.get('medae_hidden'), '.2f'):>6} {num(p.get('medae_paper'), '.2f'):>6} "
            f"{num(h['seconds'], '.2f'):>7} {num(h.get('cpu_seconds'), '.2f'):>7} "
            f"{num(p.get('seconds'), '.1f'):>7} {num(speed, '.1f'):>6}"
        )
    proto = results["protocol"]
    lines.append("")
    lines.append(
        f"{proto['n_models']} models x {proto['n_benchmarks']} benchmarks, "
        f"{proto['n_observed']} cells; held-out: {proto['n_folds']} folds, median over folds; "
        f"rank% = pairwise ranking accuracy (gap >= 5, median over benchmarks)"
    )
    probe_note = (
        "probe = MedAE of hidden cells with " + ", ".join(proto["probes"]) + " revealed "
        "(leave one model out); probe* = counting revealed cells as exact (paper style); "
        if proto["probes"]
        else "probe protocol not run (--no-probe); "
    )
    lines.append(
        probe_note
        + "fit s / probe s = wall seconds inside the completer (all folds / all left-out models), "
        "cpu s = CPU seconds of the folds; speed = reference fit s / fit s"
    )
    lines += ["", format_interval_table(results)]
    return "\n".join(lines)


def format_interval_table(results: dict) -> str:
    """Held-out coverage / median width at each reported level (median over folds)."""
    header = f"{'intervals: coverage / median width':<34}" + "".join(
        f" {f'{level_key(lv)}%':>13}" for lv in REPORT_LEVELS
    )
    lines = [header, "-" * len(header)]
    for entry in results["methods"].values():
        h = entry["holdout"]
        cells = []
        for lv in REPORT_LEVELS:
            cov = h.get(f"coverage_{level_key(lv)}", float("nan"))
            width = h.get(f"median_width_{level_key(lv)}", float("nan"))
            text = "-" if not np.isfinite(cov) else f"{cov:.3f} / {width:5.1f}"
            cells.append(f" {text:>13}")
        lines.append(f"{entry['label'][:34]:<34}" + "".join(cells))
    lines.append(
        "share of held-out cells inside the interval / its median width in points over the "
        "percent benchmarks; '-' = the method has no model to ask for other levels"
    )
    return "\n".join(lines)


def per_model_folds(
    values: np.ndarray, seeds: Sequence[int], n_folds: int = 3, min_scores: int = 1
) -> list[Fold]:
    """Per-model `n_folds`-fold splits of the observed cells, one set per seed (paper style).

    Each model's observed cells are shuffled and dealt round-robin into the folds, so every fold
    hides about 1 / n_folds of every row. A fold never hides the last `min_scores` training
    cells of a benchmark: those cells move to the next fold (after the last one they are never
    hidden). The same
    construction as the paper's fold file, on seeds of our own: settings are chosen on these
    splits, never on the official folds.
    """
    observed = np.isfinite(np.asarray(values, dtype=float))
    rows, cols = np.nonzero(observed)
    col_count = observed.sum(axis=0)
    folds: list[Fold] = []
    for seed in seeds:
        rng = np.random.default_rng(np.random.SeedSequence(int(seed)))
        order = np.lexsort((rng.random(len(rows)), rows))
        first = np.searchsorted(rows[order], rows[order], side="left")
        assign = np.empty(len(rows), dtype=int)
        assign[order] = (np.arange(len(rows)) - first + rng.integers(n_folds)) % n_folds
        for k in range(n_folds):  # fold k passes its excess on; the last one keeps it out
            hidden = np.bincount(cols[assign == k], minlength=observed.shape[1])
            for j in np.flatnonzero(col_count - hidden < min_scores):
                excess = int(min_scores - (col_count[j] - hidden[j]))
                moved = np.flatnonzero((assign == k) & (cols == j))[:excess]
                assign[moved] = k + 1 if k + 1 < n_folds else -1
        for k in range(n_folds):
            pick = assign == k
            folds.append(Fold(int(seed), k, np.stack([rows[pick], cols[pick]], axis=1)))
    return folds
