"""Figures and plots that describe a fit, and its drift against the last published snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from pipelines import plots
from pipelines.stages.fit import FitParams, FitResult
from pipelines.stages.quality import (
    GuardThresholds,
    cell_move_figures,
    complete_submatrix_shares,
    holdout_error,
    md_text,
    source_row_changes,
)
from predictor.drift import benchmark_loadings, drift_figures
from predictor.snapshots.reader import SnapshotError, list_versions, load_snapshot
from predictor.trust.suspicious import DEFAULT_THRESHOLD, above_threshold
from warehouse.snapshots import SnapshotTables

SUSPICIOUS_SHOWN = 15  # rows of the suspicious-cells table in the asset metadata
# Figures that are settings, not measurements: the same in every materialization, so a plot
# of them over time (the Dagster UI's Plots tab draws one for every number) says nothing.
CONSTANT_FIGURES = frozenset({"suspicious_threshold_z"})


def scalar_metadata(figures: dict[str, Any]) -> dict[str, int | float | str]:
    """The figures an asset's metadata shows as plain values: measurements as numbers (the UI
    plots each over the materializations), constants as text (no one-point-per-run plot of
    a setting); lists and tables are left to the caller."""
    out: dict[str, int | float | str] = {}
    for key, value in figures.items():
        if not isinstance(value, int | float | str):
            continue
        constant = key in CONSTANT_FIGURES and not isinstance(value, bool | str)
        out[key] = f"{value:g}" if constant else value
    return out


def fit_figures_and_plots(
    fit: FitResult, params: FitParams
) -> tuple[dict[str, Any], dict[str, str]]:
    """Quality figures (JSON-able) and markdown-embedded PNG plots for asset metadata."""

    def refit(values: np.ndarray, scales: list[str]) -> np.ndarray:
        return params.completer().fit(values, scales).predict(keep_observed=False)

    holdout = holdout_error(fit.values, fit.scales, refit)
    actual, predicted = holdout.pop("holdout_pairs")
    figures = {**fit.figures, **complete_submatrix_shares(fit.values, fit.scales), **holdout}
    loadings = benchmark_loadings(fit.completer.z_pred_)
    observed_z = np.where(
        fit.completer.observed_, fit.completer.transform_.transform(fit.values), np.nan
    )
    pictures = {
        "plot_matrix_heatmap": plots.markdown_image(
            plots.matrix_heatmap_plot(observed_z, fit.completer.z_pred_), "score matrix heatmap"
        ),
        "plot_spectrum": plots.markdown_image(
            plots.spectrum_plot(fit.figures["singular_values"]), "spectrum"
        ),
        "plot_benchmark_loadings": plots.markdown_image(
            plots.loadings_plot(loadings, fit.benchmark_ids), "benchmark loadings"
        ),
        "plot_predicted_vs_observed": plots.markdown_image(
            plots.predicted_vs_observed_plot(actual, predicted), "predicted vs observed"
        ),
    }
    return figures, pictures


def suspicious_summary(residuals: pl.DataFrame) -> tuple[dict[str, Any], str]:
    """Count of cells beyond the default |z| threshold and a markdown table of the worst ones.

    Leaderboard strings are escaped for markdown (pipes, brackets, backticks, newlines) since
    Dagster renders this table.
    """
    flagged = above_threshold(residuals, DEFAULT_THRESHOLD)
    figures = {
        "suspicious_cells": flagged.height,
        "suspicious_threshold_z": DEFAULT_THRESHOLD,
    }
    lines = [
        "| model | benchmark | observed | leave-one-out prediction | z | source |",
        "|---|---|---:|---:|---:|---|",
    ]
    for row in flagged.head(SUSPICIOUS_SHOWN).iter_rows(named=True):
        lines.append(
            f"| {md_text(row['model_id'])} | {md_text(row['benchmark_id'])} | "
            f"{row['observed']:.1f} | {row['predicted']:.1f} | {row['z']:+.1f} | "
            f"{md_text(row.get('source') or '')} |"
        )
    if flagged.height > SUSPICIOUS_SHOWN:
        lines.append(f"\n{flagged.height - SUSPICIOUS_SHOWN} more in the snapshot's residuals")
    return figures, "\n".join(lines)


def add_guard_figures(
    drift: dict[str, Any] | None,
    store: Path,
    tables: SnapshotTables,
    fit: FitResult,
    scale_of: dict[str, str],
    parses_now: dict[str, tuple[int, int]],
    parses_then: dict[str, tuple[int, int | None]] | None,
    thresholds: GuardThresholds,
) -> None:
    """Add to `drift` (in place) how the previous published cells moved (`cell_moves`) and
    which sources lost rows since the last publish (`source_rows`): the corrupt-payload
    guards of `cells_not_lost`. Nothing to compare without a readable previous snapshot."""
    if drift is None or "error" in drift:
        return
    previous = pl.read_parquet(store / drift["against"] / "cells.parquet")
    drift["cell_moves"] = cell_move_figures(
        previous, tables.cells, tables.residuals, fit, scale_of, thresholds
    )
    current = pl.DataFrame(
        [(s, pid, rows) for s, (pid, rows) in parses_now.items()],
        schema=["source", "parse_id", "n_rows"],
        orient="row",
    )
    drift["source_rows"] = source_row_changes(current, parses_then)


def staged_drift(staged: Path, store: Path) -> dict[str, Any] | None:
    """Drift of a staged snapshot against the newest published one (None if none exists)."""
    versions = list_versions(store)
    if not versions:
        return None
    try:
        previous = load_snapshot(store / versions[-1])
    except SnapshotError as exc:
        return {"against": versions[-1], "error": str(exc)}
    new = load_snapshot(staged)
    return drift_figures(previous, new)
