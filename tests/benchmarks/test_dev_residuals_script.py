"""`benchmarks/dev_residuals.py`: the nearest-models residual and its paired summary."""

from __future__ import annotations

import numpy as np

from benchmarks.dev_residuals import neighbour_residual, paired_summary


def test_the_correction_is_the_mean_residual_of_the_nearest_models_scored_there() -> None:
    nan = np.nan
    scores = np.array([[0.0], [1.0], [2.0], [10.0]])  # four fitted models on a line
    resid = np.array(
        [
            [1.0, nan],
            [3.0, 4.0],
            [nan, 6.0],
            [9.0, nan],
        ]
    )
    query = np.array([[0.4], [0.4], [9.0]])
    cols = np.array([0, 1, 1])
    # benchmark 0: models 0 and 1 are nearest to 0.4 (model 2 has no residual there)
    # benchmark 1: only models 1 and 2 have one, both are taken for either query
    assert neighbour_residual(resid, scores, query, cols, k=2).tolist() == [2.0, 5.0, 5.0]
    assert neighbour_residual(resid, scores, query, cols, k=1).tolist() == [1.0, 4.0, 6.0]
    empty = np.full((4, 2), nan)
    assert neighbour_residual(empty, scores, query, cols, k=2).tolist() == [0.0, 0.0, 0.0]


def test_summary_pairs_each_variant_with_the_fit_alone_fold_by_fold() -> None:
    summary = paired_summary({"base": [3.0, 4.0, 5.0], "knn": [2.5, 4.5, 4.0]})
    assert summary["base"] == {"median": 4.0, "vs_base": 0.0, "lower": 0, "of": 3}
    assert summary["knn"] == {"median": 4.0, "vs_base": -0.3333, "lower": 2, "of": 3}
