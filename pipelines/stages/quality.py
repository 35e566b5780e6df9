"""Structure and error figures of a fit, computed from the cells it was given (no peeking).

- Variance shares on the largest complete submatrix (greedy: drop the sparsest row or column
  until nothing is missing), so the rank-2 claim is also checked on purely observed data.
- Held-out error on a fixed internal protocol: per-model 3-fold split with a fixed seed, the
  same completer refitted on two folds and scored on the third, percent benchmarks only.
- Guards against corrupt payloads (end of the module): single published cells that jumped to
  a value the rest of their model's row does not support, benchmarks where many cells jumped,
  and sources whose parse lost rows since the last publish.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from pipelines.stages.fit import FitResult, variance_shares
from predictor.side_information import unknown_features
from predictor.transforms import ScaleTransform

HOLDOUT_SEED = 20261130
HOLDOUT_FOLDS = 3
# The publish gate's drift checks (`pipelines.checks`): each compares the staged snapshot with
# the last published one; `--accept-drift` names them (`pipelines.settings.parse_accepted`).
DRIFT_CHECKS = (
    "loading_subspace_stable",
    "holdout_error_stable",
    "cells_not_lost",
    "predictions_stable",
)


def largest_complete_submatrix(
    observed: np.ndarray, min_rows: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of a (greedily) large fully observed submatrix."""
    rows = np.arange(observed.shape[0])
    cols = np.arange(observed.shape[1])
    block = observed.copy()
    while block.size and not block.all():
        row_missing = (~block).sum(axis=1) / max(block.shape[1], 1)
        col_missing = (~block).sum(axis=0) / max(block.shape[0], 1)
        if row_missing.max() >= col_missing.max() and block.shape[0] > min_rows:
            drop = int(np.argmax(row_missing))
            rows, block = np.delete(rows, drop), np.delete(block, drop, axis=0)
        else:
            drop = int(np.argmax(col_missing))
            cols, block = np.delete(cols, drop), np.delete(block, drop, axis=1)
    return rows, cols


def complete_submatrix_shares(values: np.ndarray, scales: Sequence[str]) -> dict[str, object]:
    rows, cols = largest_complete_submatrix(~np.isnan(values))
    if len(rows) < 3 or len(cols) < 3:
        return {"submatrix_models": int(len(rows)), "submatrix_benchmarks": int(len(cols))}
    block = values[np.ix_(rows, cols)]
    z = ScaleTransform([scales[j] for j in cols]).fit(block).transform(block)
    singular, shares = variance_shares(z)
    return {
        "submatrix_models": int(len(rows)),
        "submatrix_benchmarks": int(len(cols)),
        "submatrix_singular_values": [round(s, 6) for s in singular[:10]],
        "submatrix_variance_share_top1": round(shares[0], 6),
        "submatrix_variance_share_top2": round(shares[1], 6),
        "submatrix_variance_share_top3": round(shares[2], 6),
    }


def per_model_folds(observed: np.ndarray, n_folds: int, seed: int) -> np.ndarray:
    """Fold number of each observed cell (row-major order), about 1/n of every row per fold."""
    rng = np.random.default_rng(seed)
    folds = np.full(observed.shape, -1)
    for i in range(observed.shape[0]):
        cells = np.flatnonzero(observed[i])
        order = rng.permutation(len(cells))
        folds[i, cells[order]] = np.arange(len(cells)) % n_folds
    return folds


FitPredict = Callable[[np.ndarray, Sequence[str]], np.ndarray]


def holdout_error(
    values: np.ndarray, scales: Sequence[str], fit_predict: FitPredict
) -> dict[str, object]:
    """Median absolute error on held-out percent cells, plus (actual, predicted) pairs."""
    observed = ~np.isnan(values)
    folds = per_model_folds(observed, HOLDOUT_FOLDS, HOLDOUT_SEED)
    percent = np.array([s == "percent" for s in scales])
    actual: list[float] = []
    predicted: list[float] = []
    for k in range(HOLDOUT_FOLDS):
        test = folds == k
        train = np.where(test, np.nan, values)
        keep = ~np.isnan(train).all(axis=0)  # a column with no training cell cannot be scored
        completed = fit_predict(
            train[:, keep], [s for s, kept in zip(scales, keep, strict=True) if kept]
        )
        full = np.full(values.shape, np.nan)
        full[:, keep] = completed
        mask = test & percent[None, :] & keep[None, :]
        actual += values[mask].tolist()
        predicted += full[mask].tolist()
    errors = np.abs(np.array(actual) - np.array(predicted))
    return {
        "holdout_medae": round(float(np.median(errors)), 6) if len(errors) else None,
        "holdout_within5": round(float(np.mean(errors <= 5.0)), 6) if len(errors) else None,
        "holdout_cells": int(len(errors)),
        "holdout_pairs": (actual, predicted),
    }


# ------------------------------------------------------------- guards against corrupt payloads
# A truncated or mangled payload can still parse: Aider's YAML cut mid-number turned 83.1 into 8
# while every drift figure stayed near 0. These figures compare the staged snapshot with the
# previous published one cell by cell, and each source's parse with the one current at the last
# publish; the `cells_not_lost` check fails on them.
MIN_JUMPS_FOR_SHARE = 3  # a benchmark's share of jumped cells counts from this many jumps on
MIN_CHANGED_FOR_RESCORED = 10  # a benchmark counts as re-scored from this many changed cells on
MAX_FOLD_INS = 2000  # jumps checked by fold-in at most (more fail the per-benchmark share)
MIN_KNOWN_FOR_FOLD_IN = 3  # other fitted cells a model needs for a fold-in z
CELLS_LISTED = 25  # jumped cells kept in the figures (most suspicious first)


@dataclass(frozen=True)
class GuardThresholds:
    cell_move_points: float = 20.0  # a percent cell moved this far is a jump
    cell_move_ratio: float = 0.5  # other scales: a move of this share of the old value
    cell_move_z: float = 3.5  # a jump whose new value has |leave-one-out z| >= this is suspect
    rescored_share: float = 0.5  # a benchmark with this share of its cells changed was re-scored
    max_suspicious_moves: int = 0  # suspicious jumps tolerated
    max_benchmark_moved_share: float = 0.25  # of a benchmark's previously published cells
    max_source_rows_drop: float = 0.20  # fewer rows in a source's parse than at the last publish


def cell_jumps(
    previous: pl.DataFrame,
    current: pl.DataFrame,
    scale_of: dict[str, str],
    t: GuardThresholds,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(jumps, per benchmark counts) between two snapshots' cells.

    A jump is a cell present in both whose score moved by at least `cell_move_points` (percent
    benchmarks) or by `cell_move_ratio` of its old value (other scales). The per-benchmark frame
    has `compared` (cells in both), `changed` (by any amount) and `jumps` for every benchmark
    with a jump."""
    key = ["model_id", "benchmark_id"]
    both = previous.select(*key, pl.col("score").alias("old"), pl.col("source").alias("old_source"))
    both = both.join(
        current.select(*key, pl.col("score").alias("new"), pl.col("source").alias("new_source")),
        on=key,
        how="inner",
    ).with_columns(
        pl.col("benchmark_id").replace_strict(scale_of, default="unknown").alias("scale"),
        (pl.col("new") - pl.col("old")).alias("delta"),
    )
    moved = pl.when(pl.col("scale") == "percent").then(pl.col("delta").abs() >= t.cell_move_points)
    moved = moved.otherwise(
        pl.col("delta").abs() >= t.cell_move_ratio * pl.max_horizontal(pl.col("old").abs(), 1e-9)
    )
    both = both.with_columns(moved.alias("jump"))
    per_benchmark = (
        both.group_by("benchmark_id")
        .agg(
            pl.len().alias("compared"),
            (pl.col("delta").abs() > 1e-9).sum().alias("changed"),
            pl.col("jump").sum().alias("jumps"),
        )
        .filter(pl.col("jumps") > 0)
        .sort("benchmark_id")
    )
    return both.filter(pl.col("jump")).drop("jump"), per_benchmark


def foldin_z(
    fit: FitResult, cells: pl.DataFrame, model_id: str, benchmark_id: str, value: float
) -> float | None:
    """z of `value` for a model outside the fit: the model folded in from its other cells on
    fitted benchmarks (as the leave-one-out check does for fitted models). None when the
    benchmark is not fitted or the model has fewer than MIN_KNOWN_FOR_FOLD_IN other cells."""
    if benchmark_id not in fit.benchmark_ids:
        return None
    column = {b: j for j, b in enumerate(fit.benchmark_ids)}
    row = np.full(len(fit.benchmark_ids), np.nan)
    for benchmark, score in (
        cells.filter(pl.col("model_id") == model_id).select("benchmark_id", "score").iter_rows()
    ):
        if benchmark in column and benchmark != benchmark_id:
            row[column[benchmark]] = score
    if int((~np.isnan(row)).sum()) < MIN_KNOWN_FOR_FOLD_IN:
        return None
    j = column[benchmark_id]
    mean, scale = fit.completer.fold_in_predictive(row, features=unknown_features(fit.completer))
    probe = np.full((1, len(fit.benchmark_ids)), np.nan)
    probe[0, j] = value
    observed = fit.completer.transform_.transform(probe)[0, j]
    return float((observed - mean[j]) / scale[j])


def cell_move_figures(
    previous: pl.DataFrame,
    current: pl.DataFrame,
    residuals: pl.DataFrame | None,
    fit: FitResult,
    scale_of: dict[str, str],
    t: GuardThresholds,
) -> dict[str, object]:
    """How previously published cells moved, and which jumps look like corrupt values.

    Each jump gets the z of its new value: the snapshot's leave-one-out z for fitted cells, a
    fold-in z for models outside the fit, none when the benchmark is not fitted ("unverified").
    A jump with |z| >= `cell_move_z` is suspicious (the rest of the model's row does not
    support the new value) unless its benchmark was re-scored: at least `rescored_share` of
    its published cells, and MIN_CHANGED_FOR_RESCORED, changed (a source's new method, e.g.
    the Open LLM Leaderboard's MATH and IFEval columns between its 2024 and 2025 files); such
    a benchmark is judged by its share of jumps. JSON-able."""
    jumps, per_benchmark = cell_jumps(previous, current, scale_of, t)
    key = ["model_id", "benchmark_id"]
    if residuals is not None and residuals.height:
        jumps = jumps.join(residuals.select(*key, pl.col("z").alias("loo_z")), on=key, how="left")
    else:
        jumps = jumps.with_columns(pl.lit(None, pl.Float64).alias("loo_z"))
    fitted = set(fit.model_ids)
    z_values: list[float | None] = []
    kinds: list[str | None] = []
    fold_ins = 0
    for row in jumps.iter_rows(named=True):
        z, kind = row["loo_z"], "leave-one-out" if row["loo_z"] is not None else None
        if z is None and row["model_id"] not in fitted and fold_ins < MAX_FOLD_INS:
            fold_ins += 1
            z = foldin_z(fit, current, row["model_id"], row["benchmark_id"], row["new"])
            kind = "fold-in" if z is not None else None
        z_values.append(None if z is None else round(float(z), 3))
        kinds.append(kind)
    jumps = jumps.with_columns(
        pl.Series("z", z_values, dtype=pl.Float64), pl.Series("z_kind", kinds, dtype=pl.String)
    ).drop("loo_z")
    is_rescored = (pl.col("changed") >= t.rescored_share * pl.col("compared")) & (
        pl.col("changed") >= MIN_CHANGED_FOR_RESCORED
    )
    rescored = per_benchmark.filter(is_rescored)["benchmark_id"].to_list()
    suspect = (pl.col("z").abs() >= t.cell_move_z) & ~pl.col("benchmark_id").is_in(rescored)
    jumps = jumps.with_columns(suspect.fill_null(False).alias("suspicious"))
    listed = jumps.sort(
        pl.col("suspicious"),
        pl.col("z").abs(),
        pl.col("delta").abs(),
        *key,
        descending=[True, True, True, False, False],
        nulls_last=True,
    ).head(CELLS_LISTED)
    return {
        "compared": int(previous.join(current, on=key, how="semi").height),
        "jumps": jumps.height,
        "suspicious": int(jumps["suspicious"].sum()),
        "unverified": int(jumps["z"].is_null().sum()),
        "thresholds": {
            "points": t.cell_move_points,
            "ratio": t.cell_move_ratio,
            "z": t.cell_move_z,
            "rescored_share": t.rescored_share,
        },
        "rescored_benchmarks": sorted(rescored),
        "cells": [
            {
                k: row[k]
                for k in (
                    *key,
                    "old",
                    "new",
                    "delta",
                    "z",
                    "z_kind",
                    "suspicious",
                    "old_source",
                    "new_source",
                )
            }
            for row in listed.iter_rows(named=True)
        ],
        "benchmarks": {
            b: {
                "jumps": int(n),
                "changed": int(changed),
                "compared": int(c),
                "share": round(n / c, 4),
            }
            for b, c, changed, n in per_benchmark.select(
                "benchmark_id", "compared", "changed", "jumps"
            ).iter_rows()
        },
    }


def source_row_changes(
    current: pl.DataFrame, reference: dict[str, tuple[int, int | None]] | None
) -> dict[str, dict[str, object]]:
    """Each source whose current parse is not the one current at the last publish: its rows
    against that parse's. `current` has source, parse_id, n_rows (`warehouse.scores.
    current_parses` plus n_rows); `reference` maps source -> (parse_id, n_rows) at the last
    publish (None: nothing was published from this warehouse, nothing to compare)."""
    if not reference:
        return {}
    out: dict[str, dict[str, object]] = {}
    for source, parse_id, n_rows in current.select("source", "parse_id", "n_rows").iter_rows():
        if source not in reference or reference[source][0] == parse_id:
            continue
        before = reference[source][1]
        ratio = round(n_rows / before, 4) if before and n_rows is not None else None
        out[source] = {
            "parse_id": parse_id,
            "rows": n_rows,
            "published_parse_id": reference[source][0],
            "published_rows": before,
            "ratio": ratio,
        }
    return out


def md_text(text: object) -> str:
    """Plain text for a markdown table cell (leaderboard strings are rendered by Dagster)."""
    out = str(text).replace("\\", "\\\\").replace("\n", " ").replace("\r", " ")
    for ch in "|[]`*_<>":
        out = out.replace(ch, "\\" + ch)
    return out


def frame_markdown(frame: pl.DataFrame, limit: int = 30) -> str:
    """The first `limit` rows of `frame` as a markdown table for asset metadata: leaderboard
    strings escaped (`md_text`), floats to 6 significant digits (not 92.30000000000001)."""

    def cell(value: object) -> str:
        if value is None:
            return ""
        return md_text(f"{value:.6g}" if isinstance(value, float) else value)

    head = frame.head(limit)
    lines = ["| " + " | ".join(md_text(c) for c in head.columns) + " |"]
    lines.append("|" + "---|" * len(head.columns))
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in head.iter_rows()]
    if frame.height > limit:
        lines.append(f"\n... {frame.height - limit} more rows")
    return "\n".join(lines)


def jumps_markdown(cells: list[dict[str, object]]) -> str:
    """The jumped cells of `cell_move_figures` as an escaped markdown table."""
    lines = [
        "| model | benchmark | published | now | z | source | suspicious |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for c in cells:
        z = "n/a" if c["z"] is None else f"{c['z']:+.1f} ({c['z_kind']})"
        source = str(c["new_source"])
        if c["old_source"] != c["new_source"]:
            source = f"{c['old_source']} -> {c['new_source']}"
        lines.append(
            f"| {md_text(c['model_id'])} | {md_text(c['benchmark_id'])} | {c['old']:g} | "
            f"{c['new']:g} | {md_text(z)} | {md_text(source)} | "
            f"{'yes' if c['suspicious'] else ''} |"
        )
    return "\n".join(lines)
