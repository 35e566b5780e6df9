"""Long score rows to the dense models x benchmarks matrix every method fits.

One conversion for the pipeline's fit, `BenchPress` (its snapshot's cells) and `BenchPress.fit`
(a team's own frame): rows and columns sorted by id unless an order is given, NaN where no
score is known.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl


def dense_matrix(
    cells: pl.DataFrame,
    rows: str = "model_id",
    columns: str = "benchmark_id",
    value: str = "score",
    row_ids: Sequence[str] | None = None,
    column_ids: Sequence[str] | None = None,
) -> tuple[np.ndarray, list[str], list[str]]:
    """(values, row ids, column ids) of long `cells`. Without `row_ids` / `column_ids` every
    id of the cells, sorted (the same order on every run); with them, that order, and cells
    outside it are left out."""
    row_ids = sorted(cells[rows].unique().to_list()) if row_ids is None else list(row_ids)
    column_ids = (
        sorted(cells[columns].unique().to_list()) if column_ids is None else list(column_ids)
    )
    row = {r: i for i, r in enumerate(row_ids)}
    col = {c: j for j, c in enumerate(column_ids)}
    values = np.full((len(row_ids), len(column_ids)), np.nan)
    for r, c, score in cells.select(rows, columns, value).iter_rows():
        if r in row and c in col:
            values[row[r], col[c]] = score
    return values, row_ids, column_ids
