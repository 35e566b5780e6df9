"""What each fitted model counts in probe selection's expected error.

The expected error of a probe set pools every fitted model's target cells. A leaderboard
that publishes settings of models no other source reports (LiveBench's per-effort rows: 50 of
the 249 fitted rows of snapshot 2026.12.07.3, each with LiveBench's 23 subtasks only) then
holds a fifth of the rows, and a probe that predicts that suite's own subtasks well wins
the search for a reason a new model does not share. So the rows whose fitted cells all come
from one source count together as one model: each of a source's k single-source rows weighs
1/k, every other row 1. On a one-source matrix (the BenchPress paper's) every row is such a
row of the same source, the weights are equal and nothing changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from predictor.fitted_matrix import FittedMatrix


def source_row_weights(bp: FittedMatrix) -> np.ndarray:
    """One weight per fitted model (`bp.fit_models_` order): 1/k for each of the k rows whose
    fitted cells all come from one source (per source), 1 for the others."""
    return row_weights(bp.fit_models_, bp.fit_benchmarks_, bp.snapshot.cells)


def row_weights(
    models: Sequence[str], benchmarks: Sequence[str], cells: pl.DataFrame
) -> np.ndarray:
    """`source_row_weights` of `models` over `benchmarks`, from `cells` (`model_id`,
    `benchmark_id`, `source`): a fit of part of a snapshot is weighed by its parent's
    sources (`benchmarks/probe_budget.py`)."""
    cells = cells.filter(
        pl.col("model_id").is_in(models) & pl.col("benchmark_id").is_in(benchmarks)
    )
    sources = cells.group_by("model_id").agg(pl.col("source").unique())
    only = {m: s[0] for m, s in sources.iter_rows() if len(s) == 1}
    count: dict[str, int] = {}
    for source in only.values():
        count[source] = count.get(source, 0) + 1
    return np.array([1.0 / count[only[m]] if m in only else 1.0 for m in models], dtype=float)
