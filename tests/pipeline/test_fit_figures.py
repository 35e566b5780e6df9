"""Figures attached to the factorization asset: the suspicious-cells table and the heatmap."""

from __future__ import annotations

import numpy as np
import polars as pl

from pipelines import plots
from pipelines.stages.figures import suspicious_summary


def test_suspicious_table_escapes_leaderboard_strings_and_counts_beyond_threshold() -> None:
    residuals = pl.DataFrame(
        {
            "model_id": ["evil|model](x)<script>", "ok-model", "calm"],
            "benchmark_id": ["b_1", "b2", "b3"],
            "observed": [0.0, 90.0, 50.0],
            "predicted": [80.0, 40.0, 51.0],
            "z": [-9.0, 4.0, 0.2],
            "source": ["livebench", "aider\nnext", "aider"],
        }
    )
    figures, table = suspicious_summary(residuals)
    assert figures == {"suspicious_cells": 2, "suspicious_threshold_z": 3.5}
    lines = table.splitlines()
    assert len(lines) == 4  # header, rule, two flagged rows (|z| > 3.5), most extreme first
    assert lines[2] == (
        "| evil\\|model\\](x)\\<script\\> | b\\_1 | 0.0 | 80.0 | -9.0 | livebench |"
    )
    assert lines[3].endswith("| +4.0 | aider next |")


def test_heatmap_is_a_png_of_both_panels() -> None:
    rng = np.random.default_rng(0)
    predicted = rng.normal(size=(30, 12))
    observed = np.where(rng.random((30, 12)) < 0.4, predicted, np.nan)
    png = plots.matrix_heatmap_plot(observed, predicted)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5_000
    assert plots.matrix_heatmap_plot(observed, predicted) == png  # deterministic bytes
