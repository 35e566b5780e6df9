"""The scikit-learn peers of `benchmarks/peers.py` fill every cell, keep observed ones and
stay in range; the per-column comparison keeps only columns with enough held-out cells."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from benchmarks.peers import column_comparison, extra_trees_imputer, knn_imputer


def matrix(n: int = 30, m: int = 8, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logit = rng.normal(0, 1, (n, 2)) @ rng.normal(0, 1, (2, m))
    values = 100.0 / (1.0 + np.exp(-logit))
    return np.where(rng.random((n, m)) < 0.25, np.nan, values)


@pytest.mark.parametrize("peer", [extra_trees_imputer, knn_imputer])
def test_a_peer_fills_the_matrix_in_range_and_keeps_observed_cells(peer) -> None:
    values = matrix()
    done = peer(values, ["percent"] * values.shape[1])
    assert np.isfinite(done.mean).all()
    assert ((done.mean >= 0) & (done.mean <= 100)).all()
    observed = np.isfinite(values)
    np.testing.assert_array_equal(done.mean[observed], values[observed])
    again = peer(values, ["percent"] * values.shape[1])
    np.testing.assert_array_equal(again.mean, done.mean)  # seeded


def test_column_comparison_keeps_columns_with_enough_cells_worst_first() -> None:
    def cells(errors: dict[int, list[float]]) -> pl.DataFrame:
        rows = [(j, 50.0, 50.0 + e) for j, es in errors.items() for e in es]
        return pl.DataFrame(rows, schema=["benchmark", "actual", "mean"], orient="row")

    ours = cells({0: [2.0] * 30, 1: [1.0] * 30, 2: [9.0] * 5})
    peer = cells({0: [1.0] * 30, 1: [2.0] * 30, 2: [1.0] * 5})
    table = column_comparison(ours, peer, ["a", "b", "c"])
    assert table["benchmark_id"].to_list() == ["a", "b"]
    assert table["ratio"].to_list() == [2.0, 0.5]
