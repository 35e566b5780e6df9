"""The BenchPress paper's held-out protocol, as pure functions any completer can plug into.

A completer is a callable (values_with_nans, scales) -> Completion. For each fold its test
cells are set to NaN, the completer fills the matrix, and errors are measured on those cells in
original units (percent points for most benchmarks).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from predictor.completion import Completion

FitPredict = Callable[[np.ndarray, Sequence[str]], Completion]

# In-repo copies of the paper matrix and its fold file (see benchmarks/data/README.md).
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MATRIX_PATH = REPO_ROOT / "pipelines" / "replay" / "microsoft.github.io" / "benchpress" / "data.json"
DEFAULT_FOLDS_PATH = REPO_ROOT / "benchmarks" / "data" / "folds_s10_f3_bs42_ms1.json"

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
    data = json.loads(Path(path).read_text())
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
    actual: np.ndarray, mean: np.ndarray, low: np.ndarray, high: np.ndarray
) -> dict[str, float]:
    """Error and interval figures for one set of held-out cells (1-D arrays, original units)."""
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
    completion = fit_predict(train[:, keep], [scales[j] for j in keep])
    return completion, keep


def holdout_errors(
    values: np.ndarray,
    scales: Sequence[str],
    folds: Sequence[Fold],
    fit_predict: FitPredict,
) -> pl.DataFrame:
    """Per-fold MedAE, MedAPE, share within 5 points, interval coverage and median width.

    Columns with no training cells in a fold are left out of the fit and their test cells are
    not scored (`n_unscored`), as the paper's harness skips cells it cannot predict.
    Coverage and width are NaN when the completer returns no finite interval.
    """
    values = np.asarray(values, dtype=float)
    rows = []
    for fold in folds:
        start = time.perf_counter()
        completion, keep = _fit_fold(values, scales, fold.test_cells, fit_predict)
        seconds = time.perf_counter() - start
        col_pos = np.full(values.shape[1], -1)
        col_pos[keep] = np.arange(len(keep))
        i, j = fold.test_cells[:, 0], col_pos[fold.test_cells[:, 1]]
        scored = j >= 0
        i, j = i[scored], j[scored]
        metrics = cell_metrics(
            values[fold.test_cells[scored, 0], fold.test_cells[scored, 1]],
            completion.mean[i, j],
            completion.low[i, j],
            completion.high[i, j],
        )
        rows.append(
            dict(
                seed=fold.seed,
                fold=fold.fold,
                n_unscored=int((~scored).sum()),
                **metrics,
                seconds=seconds,
            )
        )
    return pl.DataFrame(rows)


def summarize_errors(per_fold: pl.DataFrame) -> dict[str, float]:
    """Median over folds of every figure (the paper reports the median fold), total seconds."""
    figures = ["medae", "medape", "within5", "coverage", "median_width"]
    summary = {name: float(np.median(per_fold[name].to_numpy())) for name in figures}
    summary["n_folds"] = per_fold.height
    summary["seconds"] = float(per_fold["seconds"].sum())
    return summary
