"""Long fits (`BenchPress.fit` of thousands of models, issue 38): the fast paths give what the
plain ones gave, and the fit reports its progress."""

from __future__ import annotations

import logging

import numpy as np
import polars as pl
import pytest

from predictor import BenchPress
from predictor.evaluation.protocols import DEFAULT_MATRIX_PATH, paper_scores_frame
from predictor.fit.calibration import calibrate_fold_in, fold_in_residuals, reveal_scores
from predictor.fit.calibration_cache import CACHE_ENV
from predictor.fit.own_matrix import ScoresFrameError
from predictor.methods.bayesian import BayesianCompleter
from predictor.transforms import _LINK_STEPS, _learned_link, _row_factors

QUICK = {"n_chains": 2, "n_burn": 4, "n_samples": 4}


def matrix(n: int = 70, m: int = 36, seed: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logit = rng.normal(0, 0.8, (n, 3)) @ rng.normal(0, 0.8, (3, m)) + rng.normal(0, 0.3, (n, m))
    values = 100.0 / (1.0 + np.exp(-logit))
    return np.where(rng.random((n, m)) < 0.15, np.nan, values)


def side(n: int, seed: int = 4) -> dict:
    """Release years (some unknown) and families (some shared, some none) for n models."""
    rng = np.random.default_rng(seed)
    years = rng.uniform(2023.0, 2026.0, (n, 1))
    years[rng.random(n) < 0.2] = np.nan
    families = [None if i % 7 == 0 else f"line-{i % 5}" for i in range(n)]
    return {"row_features": years, "row_groups": families}


class OneByOne(BayesianCompleter):
    """The default method without its batched fold-in: calibration folds in row by row."""

    fold_in_predictive_many = None


@pytest.mark.parametrize("with_side", [True, False])
def test_batched_fold_ins_give_the_one_by_one_predictives(with_side: bool) -> None:
    values = matrix()
    n, m = values.shape
    kwargs = side(n) if with_side else {}
    model = BayesianCompleter(**QUICK).fit(values, ["percent"] * m, **kwargs)
    rng = np.random.default_rng(0)
    rows = np.full((40, m), np.nan)
    for t, row in enumerate(rows):  # 0 to 30 known scores, mixed in one call
        known = rng.choice(m, t % 31 if t else 0, replace=False)
        row[known] = rng.uniform(5.0, 95.0, len(known))
    features = rng.uniform(2023.0, 2026.0, (40, 1))
    features[::3] = np.nan  # unknown dates, inferred with the row
    groups = [None, "line-1", "line-2", "a family the fit never saw"] * 10
    for given in (features, None) if with_side else (None,):
        mean, scale = model.fold_in_predictive_many(rows, features=given, groups=groups)
        for t, row in enumerate(rows):
            about = None if given is None else given[t]
            one_mean, one_scale = model.fold_in_predictive(row, features=about, group=groups[t])
            np.testing.assert_allclose(mean[t], one_mean, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(scale[t], one_scale, rtol=1e-10, atol=0)
    with pytest.raises(ValueError, match="rows must be"):
        model.fold_in_predictive_many(rows[:, :-1])
    empty = model.fold_in_predictive_many(rows[:0])
    assert empty[0].shape == empty[1].shape == (0, m)


def test_calibration_is_the_same_batched_or_one_by_one(monkeypatch) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    values = matrix()
    scales = ["percent"] * values.shape[1]
    kwargs = side(values.shape[0])

    def batched() -> BayesianCompleter:
        return BayesianCompleter(**QUICK)

    def one_by_one() -> BayesianCompleter:
        return OneByOne(**QUICK)

    fast = fold_in_residuals(values, scales, batched, n_splits=3, fit_kwargs=kwargs)
    slow = fold_in_residuals(values, scales, one_by_one, n_splits=3, fit_kwargs=kwargs)
    assert fast.keys() == slow.keys() == {"side", "release"}
    for mode in fast:
        assert fast[mode].keys() == slow[mode].keys()
        for k in fast[mode]:
            np.testing.assert_allclose(fast[mode][k], slow[mode][k], rtol=1e-9, atol=1e-12)
    # the factors a snapshot stores (6 decimals) are the very same
    a = calibrate_fold_in(values, scales, batched, n_splits=3, fit_kwargs=kwargs)
    b = calibrate_fold_in(values, scales, one_by_one, n_splits=3, fit_kwargs=kwargs)
    assert a.as_dict() == b.as_dict()


def test_revealed_scores_leave_the_other_cells_in_order() -> None:
    values = matrix()
    rng, again = np.random.default_rng(3), np.random.default_rng(3)
    for i in range(values.shape[0]):
        cells = np.flatnonzero(np.isfinite(values[i]))
        drawn = reveal_scores(values, i, cells, 5, rng)
        assert drawn is not None
        row, hidden = drawn
        revealed = again.choice(cells, 5, replace=False)  # the same seeded draw
        np.testing.assert_array_equal(hidden, np.setdiff1d(cells, revealed))
        assert np.flatnonzero(np.isfinite(row)).tolist() == sorted(revealed.tolist())


def _link_with_the_hat_matrix(values, is_percent, floor, eps, ridge=1e-3, min_cells=6):
    """`_learned_link` as first written: the cells x cells hat matrix formed."""
    factors = _row_factors(values, is_percent, floor, eps)
    lo_out, hi_out = floor.astype(float).copy(), np.full(values.shape[1], 100.0)
    for j in np.flatnonzero(is_percent):
        rows = np.flatnonzero(np.isfinite(values[:, j]))
        if len(rows) < min_cells:
            continue
        x = values[rows, j]
        design = np.column_stack([np.ones(len(rows)), factors[rows]])
        penalty = ridge * np.eye(design.shape[1])
        penalty[0, 0] = 0.0
        hat = design @ np.linalg.solve(design.T @ design + penalty, design.T)
        leverage = np.clip(np.diag(hat), 0.0, 0.99)
        los = floor[j] + np.asarray(_LINK_STEPS) * (float(x.min()) - floor[j])
        his = 100.0 - np.asarray(_LINK_STEPS) * (100.0 - float(x.max()))
        lo, hi = (grid.reshape(-1) for grid in np.meshgrid(los, his, indexing="ij"))
        usable = hi - lo >= 1e-6
        lo, hi = lo[usable], hi[usable]
        q = np.clip((x[:, None] - lo) / (hi - lo), eps, 1.0 - eps)
        y = np.log(q / (1.0 - q))
        y_loo = y - (y - hat @ y) / (1.0 - leverage)[:, None]
        pred = lo + (hi - lo) / (1.0 + np.exp(-np.clip(y_loo, -30, 30)))
        err = np.mean(np.abs(np.clip(pred, 0.0, 100.0) - x[:, None]), axis=0)
        err = np.where((lo == floor[j]) & (hi == 100.0), err - 1e-9, err)
        lo_out[j], hi_out[j] = lo[np.argmin(err)], hi[np.argmin(err)]
    return lo_out, hi_out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_learned_link_picks_what_the_hat_matrix_picked(seed: int) -> None:
    values = matrix(n=120, m=30, seed=seed)
    # bent columns, so the choice is not always the plain link
    values[:, :10] = 20.0 + 0.6 * values[:, :10]
    is_percent, floor = np.ones(values.shape[1], dtype=bool), np.zeros(values.shape[1])
    new = _learned_link(values, is_percent, floor, 0.002)
    old = _link_with_the_hat_matrix(values, is_percent, floor, 0.002)
    np.testing.assert_array_equal(new[0], old[0])
    np.testing.assert_array_equal(new[1], old[1])


@pytest.fixture(scope="module")
def paper() -> pl.DataFrame:
    return paper_scores_frame(DEFAULT_MATRIX_PATH)


def test_a_fit_reports_each_step_to_the_callback_and_the_log(paper, caplog) -> None:
    heard: list[tuple[str, int, int]] = []
    with caplog.at_level(logging.INFO, logger="predictor.fit"):
        bp = BenchPress.fit(paper, progress=lambda *step: heard.append(step), **QUICK)
    groups = [("calibration fits", g, 8) for g in range(1, 9)]
    folds = [("calibration fold-ins", g, 8) for g in range(1, 9)]
    assert heard == [
        ("checks", 1, 1),
        ("fit", 1, 1),
        *[step for pair in zip(groups, folds, strict=True) for step in pair],
        ("snapshot", 1, 1),
        ("predictor", 1, 1),
    ]
    lines = [r.getMessage() for r in caplog.records if r.name == "predictor.fit"]
    assert len(lines) == len(heard)
    assert lines[0].startswith("checks 1/1 in ") and lines[0].endswith(" s so far)")
    assert bp.snapshot.fit["state"]["fold_in_calibration"]  # the calibration ran


def test_a_callback_can_stop_a_fit_and_must_be_callable(paper) -> None:
    class Stop(Exception):
        pass

    def stop(phase: str, done: int, total: int) -> None:
        if phase == "fit":
            raise Stop

    with pytest.raises(Stop):
        BenchPress.fit(paper, progress=stop, **QUICK)
    with pytest.raises(TypeError, match="progress must be a callable"):
        BenchPress.fit(paper, progress="yes", **QUICK)  # type: ignore[arg-type]


def test_a_bad_release_date_is_named_at_its_first_row() -> None:
    frame = pl.DataFrame(
        {
            "model": ["a", "a", "b", "b", "c"],
            "benchmark": ["x", "y", "x", "y", "x"],
            "score": [10.0, 20.0, 30.0, 40.0, 50.0],
            "release_date": ["2025-01-01", "2025-01-01", "2025-13-01", "2025-13-01", "later"],
        }
    )
    with pytest.raises(ScoresFrameError, match=r"^row 3: release_date '2025-13-01' is not"):
        BenchPress.fit(frame, min_per_model=1, min_per_benchmark=1, **QUICK)
