"""Behaviour of `complete_matrix`, the reference-recipe completer (`LowRankCompleter`), the
scale transform and the paper-protocol helpers. The default method has its own file
(test_bayesian.py)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from predictor.evaluation.protocols import (
    DEFAULT_FOLDS_PATH,
    DEFAULT_MATRIX_PATH,
    Fold,
    column_mean_baseline,
    holdout_errors,
    load_folds,
    load_paper_matrix,
    summarize_errors,
)
from predictor.fit.completion import Completion, LowRankCompleter, complete_matrix
from predictor.methods import als
from predictor.methods.bayesian import BayesianCompleter
from predictor.transforms import ScaleTransform

ALS = {"method": "als"}  # the BenchPress reference recipe


def rank2_percent_matrix(n: int = 60, m: int = 40, seed: int = 7) -> np.ndarray:
    """Percent scores whose logits are column offsets + an exact rank-2 product.

    Column z-scoring keeps such a matrix inside the bias + rank-2 model class.
    """
    rng = np.random.default_rng(seed)
    logit = rng.normal(0, 0.5, (1, m)) + rng.normal(0, 0.8, (n, 2)) @ rng.normal(0, 0.8, (2, m))
    return 100.0 / (1.0 + np.exp(-logit))


def hide(values: np.ndarray, share: float, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    mask = np.random.default_rng(seed).random(values.shape) < share
    observed = values.copy()
    observed[mask] = np.nan
    return observed, mask


@pytest.fixture(scope="module")
def synthetic() -> tuple[np.ndarray, np.ndarray, np.ndarray, Completion]:
    full = rank2_percent_matrix()
    observed, mask = hide(full, 0.3)
    return full, observed, mask, complete_matrix(observed, ["percent"] * full.shape[1], **ALS)


def test_recovers_exact_rank2_logit_matrix(synthetic):
    full, _, mask, completion = synthetic
    err = np.abs(completion.mean[mask] - full[mask])
    assert np.median(err) < 0.2
    assert err.max() < 1.5


def test_observed_cells_come_back_unchanged(synthetic):
    _, observed, mask, completion = synthetic
    known = ~mask
    assert np.array_equal(completion.mean[known], observed[known])
    assert np.array_equal(completion.low[known], observed[known])
    assert np.array_equal(completion.high[known], observed[known])
    assert completion.mean.shape == observed.shape
    assert isinstance(completion.model, LowRankCompleter)


def test_interval_brackets_mean_and_percent_stays_inside_0_100():
    full = rank2_percent_matrix(seed=3)
    full[:5, 0] = 0.0  # saturated scores must not push predictions onto the bounds
    full[5:10, 1] = 100.0
    observed, mask = hide(full, 0.3, seed=2)
    completion = complete_matrix(observed, ["percent"] * full.shape[1], n_seeds=3, **ALS)
    assert np.all(completion.low <= completion.mean)
    assert np.all(completion.mean <= completion.high)
    assert np.all(completion.low[mask] < completion.high[mask])
    for arr in (completion.mean, completion.low, completion.high):
        assert np.all((arr[mask] > 0.0) & (arr[mask] < 100.0))


def test_same_random_state_gives_identical_arrays():
    observed, _ = hide(rank2_percent_matrix(seed=5), 0.3)
    scales = ["percent"] * observed.shape[1]
    first = complete_matrix(observed, scales, random_state=11, **ALS)
    second = complete_matrix(observed, scales, random_state=11, **ALS)
    other = complete_matrix(observed, scales, random_state=12, **ALS)
    for name in ("mean", "low", "high"):
        assert np.array_equal(getattr(first, name), getattr(second, name))
    assert not np.array_equal(first.mean, other.mean)


def test_fold_in_reproduces_a_held_out_row():
    full = rank2_percent_matrix()
    model = LowRankCompleter().fit(full[:-1], ["percent"] * full.shape[1])
    truth = full[-1]
    row = truth.copy()
    unknown = np.arange(len(row)) % 2 == 0
    row[unknown] = np.nan
    pred, z = model.fold_in(row, return_z=True)
    assert z.shape == truth.shape
    assert np.abs(pred[unknown] - truth[unknown]).max() < 1.0
    assert np.array_equal(pred[~unknown], truth[~unknown])
    low, high = model.fold_in_interval(row, level=0.9)
    assert np.all((low[unknown] < pred[unknown]) & (pred[unknown] < high[unknown]))


def test_fold_in_is_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new model is folded in against the stored benchmark factors: the matrix is never
    refitted and the fit is left as it was. (How fast, about a millisecond on the paper
    matrix, is a figure of `benchmarks/foldin_latency.py --method als`, not a clock here.)"""
    full = rank2_percent_matrix(n=84, m=133)
    model = LowRankCompleter(cv_folds=0).fit(hide(full, 0.7)[0], ["percent"] * 133)
    row, _ = hide(full[:1], 0.8, seed=9)
    first = model.fold_in(row[0])
    fitted = {k: v.copy() for k, v in vars(model).items() if isinstance(v, np.ndarray)}

    def refit(*args: object, **kwargs: object) -> None:
        raise AssertionError("fold_in refitted the matrix")

    monkeypatch.setattr(als, "_fit_ensemble", refit)
    for _ in range(20):
        np.testing.assert_array_equal(model.fold_in(row[0]), first)
    for name, value in fitted.items():
        np.testing.assert_array_equal(getattr(model, name), value, err_msg=name)


def test_unbounded_columns_round_trip_and_single_cell_std_is_one():
    values = np.array([[1200.0, 50.0, 7.0], [1300.0, 60.0, np.nan], [1500.0, 99.0, np.nan]])
    tf = ScaleTransform(["unbounded", "percent", "unbounded"]).fit(values)
    z = tf.transform(values)
    np.testing.assert_allclose(tf.inverse(z)[:, :2], values[:, :2])
    np.testing.assert_allclose(np.nanmean(z, axis=0)[:2], 0.0, atol=1e-12)
    assert tf.std_[2] == 1.0
    assert tf.inverse(np.array([[0.0, 1e6, 0.0]]))[0, 1] < 100.0


@pytest.mark.parametrize(
    ("values", "scales", "argument"),
    [
        (np.ones((4, 3)), ["percent"] * 2, "scales"),
        (np.ones((4, 3)), ["percent", "pct", "percent"], "scales"),
        (np.array([[1.0, np.nan], [2.0, np.nan]]), ["percent"] * 2, "values"),
        (np.ones(5), ["percent"] * 5, "values"),
        (np.ones((2, 2, 2)), ["percent"] * 2, "values"),
    ],
    ids=["scales-length", "scale-kind", "all-nan-column", "1-d", "3-d"],
)
def test_bad_input_raises_value_error_naming_the_argument(values, scales, argument):
    with pytest.raises(ValueError, match=argument):
        LowRankCompleter(cv_folds=0).fit(values, scales)


def test_fold_in_rejects_a_row_of_the_wrong_length():
    model = LowRankCompleter(n_seeds=1, cv_folds=0).fit(rank2_percent_matrix(), ["percent"] * 40)
    with pytest.raises(ValueError, match="row"):
        model.fold_in(np.ones(39))


def test_holdout_errors_scores_the_column_mean_baseline():
    full = rank2_percent_matrix(n=30, m=10)
    cells = np.argwhere(np.random.default_rng(4).random(full.shape) < 0.2)
    per_fold = holdout_errors(full, ["percent"] * 10, [Fold(0, 0, cells)], column_mean_baseline)
    train = full.copy()
    train[cells[:, 0], cells[:, 1]] = np.nan
    expected = np.median(np.abs(np.nanmean(train, axis=0)[cells[:, 1]] - full[tuple(cells.T)]))
    assert per_fold["medae"][0] == pytest.approx(expected)
    assert per_fold["n"][0] == len(cells)
    assert 0.0 <= per_fold["coverage"][0] <= 1.0


def test_default_method_is_bayesian_and_als_is_selectable():
    observed, _ = hide(rank2_percent_matrix(n=30, m=12, seed=6), 0.3)
    scales = ["percent"] * 12
    assert isinstance(complete_matrix(observed, scales, n_chains=2).model, BayesianCompleter)
    assert isinstance(complete_matrix(observed, scales, n_seeds=2, **ALS).model, LowRankCompleter)
    with pytest.raises(ValueError, match="method"):
        complete_matrix(observed, scales, method="svd")
    with pytest.raises(ValueError, match="row_features"):
        complete_matrix(observed, scales, row_features=np.ones(30), **ALS)


def test_reference_recipe_on_one_paper_fold():
    values, model_ids, benchmark_ids, scales = load_paper_matrix(DEFAULT_MATRIX_PATH)
    assert values.shape == (len(model_ids), len(benchmark_ids)) == (84, 133)
    assert scales.count("unbounded") == 5
    assert int(np.isfinite(values).sum()) == 2604
    folds = load_folds(DEFAULT_FOLDS_PATH)
    assert len(folds) == 30
    summary = summarize_errors(
        holdout_errors(values, scales, folds[:1], partial(complete_matrix, level=0.9, **ALS))
    )
    assert summary["medae"] < 6.0
    assert 0.8 < summary["coverage"] < 0.97


@pytest.fixture(scope="module")
def metr_matrix() -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray, int]:
    """The bundled snapshot's 33 models with a METR time horizon (minutes, unbounded) and the
    benchmarks at least 20 of them have, with every other METR score hidden."""
    from predictor.api import BenchPress

    bp = BenchPress.load()
    matrix = bp.matrix()
    j = matrix.benchmarks.index("metr_time_horizon")
    rows = np.flatnonzero(np.isfinite(matrix.values[:, j]))
    cols = np.flatnonzero(np.isfinite(matrix.values[rows]).sum(axis=0) >= 20)
    values = matrix.values[np.ix_(rows, cols)]
    table = bp.snapshot.benchmarks.to_pandas().set_index("benchmark_id")
    ids = [matrix.benchmarks[c] for c in cols]
    lower = table.loc[ids, "lower"].to_numpy(dtype=float)
    upper = table.loc[ids, "upper"].to_numpy(dtype=float)
    metr = ids.index("metr_time_horizon")
    hidden = values.copy()
    hidden[::2, metr] = np.nan
    return hidden, [matrix.scales[c] for c in cols], lower, upper, metr


def test_complete_matrix_keeps_predictions_inside_each_valid_range(metr_matrix):
    values, scales, lower, upper, metr = metr_matrix
    assert values.shape == (33, 4) and (lower[metr], upper[metr]) == (0.0, 100000.0)
    open_range = complete_matrix(values, scales)  # no range given: minutes may go negative
    bounded = complete_matrix(values, scales, lower=lower, upper=upper)
    hidden = np.isnan(values[:, metr])
    raw = open_range.mean[hidden, metr]
    assert (raw < 0).sum() == 5  # five models predicted below zero minutes without the range
    # With the registry's range those are exactly 0 minutes and nothing else moves (the same
    # draws: the range only bounds the back-transform).
    np.testing.assert_array_equal(bounded.mean[hidden, metr], np.maximum(raw, 0.0))
    np.testing.assert_array_equal(
        bounded.low[hidden, metr], np.maximum(open_range.low[hidden, metr], 0.0)
    )
    np.testing.assert_array_equal(bounded.high[hidden, metr], open_range.high[hidden, metr])
    assert (bounded.low >= lower).all() and (bounded.high <= upper).all()
    assert np.array_equal(bounded.mean[~np.isnan(values)], values[~np.isnan(values)])
    # The recipe's completion is held to the same range.
    recipe = complete_matrix(values, scales, lower=lower, upper=upper, n_seeds=2, **ALS)
    assert (recipe.mean >= lower).all() and (recipe.low >= lower).all()


def test_a_score_outside_its_stated_range_is_an_error(metr_matrix):
    values, scales, lower, upper, metr = metr_matrix
    bad = values.copy()
    bad[1, metr] = -5.0
    with pytest.raises(
        ValueError, match=r"values\[1, 2\] = -5 lies outside its valid range 0 to 100000"
    ):
        complete_matrix(bad, scales, lower=lower, upper=upper)
    with pytest.raises(ValueError, match=r"lower\[0\] = 9 is above upper\[0\] = 1"):
        complete_matrix(values, scales, lower=[9, 0, 0, 0], upper=[1, 100, 1e5, 100])
    with pytest.raises(ValueError, match="lower has 3 entries but values has 4 columns"):
        complete_matrix(values, scales, lower=[0, 0, 0])


def test_chance_floor_maps_guessing_to_the_bottom_of_the_logit():
    values = np.array([[25.0], [62.5], [100.0], [10.0]])
    tf = ScaleTransform(["percent"], floors=[25.0]).fit(values)
    warped = tf.transform(values)[:, 0] * tf.std_[0] + tf.mean_[0]
    bottom = np.log(0.005 / 0.995)
    # 62.5 is half way from chance (25) to 100: logit 0; at or below chance: the clip
    np.testing.assert_allclose(warped, [bottom, 0.0, -bottom, bottom], atol=1e-12)
    # back-transformed scores lie strictly between the floor and 100
    back = tf.inverse(np.array([[-50.0], [0.0], [50.0]]))[:, 0]
    assert 25.0 < back[0] < 25.001 and back[2] < 100.0
    # scores at or below chance come back as the clip's bottom, 25 + 0.5% of the 75 points
    np.testing.assert_allclose(
        tf.inverse(tf.transform(values))[:, 0], [25.375, 62.5, 99.625, 25.375], atol=1e-9
    )
    with pytest.raises(ValueError, match=r"floors\[0\] = 120; a chance floor lies in 0-100"):
        ScaleTransform(["percent"], floors=[120.0]).fit(values)


def test_complete_matrix_never_predicts_below_a_chance_floor():
    full = rank2_percent_matrix(n=40, m=8, seed=3)
    full[:, 0] = 25.0 + 0.75 * full[:, 0]  # a 4-way multiple-choice column: 25-100
    observed, mask = hide(full, 0.3, seed=2)
    floors = [25.0] + [0.0] * 7
    completion = complete_matrix(observed, ["percent"] * 8, floors=floors, n_chains=2)
    assert (completion.low[:, 0] > 25.0).all() and (completion.mean[:, 0] > 25.0).all()
    with pytest.raises(ValueError, match="floors needs method='bayes'"):
        complete_matrix(observed, ["percent"] * 8, floors=floors, **ALS)
