"""Behaviour of the default completion method (`BayesianCompleter`) and its snapshot state."""

from __future__ import annotations

import json

import numpy as np
import pytest

import predictor.methods.bayesian as bayesian
from predictor.fit.completion import LowRankCompleter, complete_matrix
from predictor.fit.fitted_state import export_state, restore_state
from predictor.methods.bayesian import BayesianCompleter
from predictor.methods.common import student_t_cdf, student_t_quantile


def rank2_percent_matrix(n: int = 60, m: int = 40, seed: int = 7) -> np.ndarray:
    """Percent scores whose logits are column offsets + an exact rank-2 product."""
    rng = np.random.default_rng(seed)
    logit = rng.normal(0, 0.5, (1, m)) + rng.normal(0, 0.8, (n, 2)) @ rng.normal(0, 0.8, (2, m))
    return 100.0 / (1.0 + np.exp(-logit))


def hide(values: np.ndarray, share: float, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    mask = np.random.default_rng(seed).random(values.shape) < share
    return np.where(mask, np.nan, values), mask


@pytest.fixture(scope="module")
def fitted() -> tuple[np.ndarray, np.ndarray, np.ndarray, BayesianCompleter]:
    full = rank2_percent_matrix()
    observed, mask = hide(full, 0.3)
    return full, observed, mask, BayesianCompleter().fit(observed, ["percent"] * 40)


def test_recovers_exact_rank2_logit_matrix_with_calibrated_intervals(fitted):
    full, observed, mask, model = fitted
    pred = model.predict()
    err = np.abs(pred[mask] - full[mask])
    assert np.median(err) < 0.05
    # the learned link bends 4 of these 40 columns by chance (`_learned_link`): up to 0.85
    # points on their cells; with the plain logit the largest error is under 0.5
    assert err.max() < 1.0
    assert np.array_equal(pred[~mask], observed[~mask])
    low, high = model.predict_interval(0.9)
    assert np.array_equal(low[~mask], observed[~mask])
    assert np.all(low <= pred) and np.all(pred <= high)
    assert np.mean((full[mask] >= low[mask]) & (full[mask] <= high[mask])) > 0.9
    narrow_low, narrow_high = model.predict_interval(0.5)
    assert np.all(narrow_high[mask] - narrow_low[mask] < high[mask] - low[mask])


def test_same_random_state_gives_identical_arrays():
    observed, _ = hide(rank2_percent_matrix(n=30, m=15, seed=5), 0.3)
    scales = ["percent"] * 15
    first = complete_matrix(observed, scales, random_state=11)
    second = complete_matrix(observed, scales, random_state=11)
    other = complete_matrix(observed, scales, random_state=12)
    for name in ("mean", "low", "high"):
        assert np.array_equal(getattr(first, name), getattr(second, name))
    assert not np.array_equal(first.mean, other.mean)


def test_student_t_noise_shrugs_off_gross_outliers():
    full = rank2_percent_matrix()
    observed, mask = hide(full, 0.3)
    rng = np.random.default_rng(2)
    known = np.argwhere(~mask)
    bad = known[rng.choice(len(known), 30, replace=False)]
    corrupted = observed.copy()
    corrupted[bad[:, 0], bad[:, 1]] = np.where(full[bad[:, 0], bad[:, 1]] > 50, 2.0, 98.0)
    scales = ["percent"] * 40
    robust = BayesianCompleter().fit(corrupted, scales).predict()
    ridge = LowRankCompleter(cv_folds=0).fit(corrupted, scales).predict()
    robust_err = np.median(np.abs(robust[mask] - full[mask]))
    ridge_err = np.median(np.abs(ridge[mask] - full[mask]))
    # 0.12 (the flipped cells bend most columns' learned link), 0.014 with the plain logit,
    # 1.9 for the ridge ALS
    assert robust_err < 0.15
    assert robust_err < ridge_err / 10


def test_side_features_carry_a_column_effect_the_scores_cannot():
    rng = np.random.default_rng(3)
    n, m = 80, 30
    feature = rng.normal(size=n)
    logit = (
        rng.normal(0, 0.5, (1, m))
        + rng.normal(0, 0.8, (n, 1)) @ rng.normal(0, 0.8, (1, m))
        + feature[:, None] * rng.normal(0, 1.0, (1, m))
    )
    full = 100.0 / (1.0 + np.exp(-logit))
    observed, mask = hide(full, 0.8, seed=4)
    scales = ["percent"] * m
    without = BayesianCompleter(rank=1).fit(observed, scales).predict()
    with_f = BayesianCompleter(rank=1).fit(observed, scales, row_features=feature).predict()
    assert np.median(np.abs(with_f[mask] - full[mask])) < 0.25 * np.median(
        np.abs(without[mask] - full[mask])
    )


def test_dense_and_sparse_layouts_agree(monkeypatch):
    observed, _ = hide(rank2_percent_matrix(n=40, m=25), 0.5)
    scales = ["percent"] * 25
    dense = BayesianCompleter(n_chains=3).fit(observed, scales)
    monkeypatch.setattr(bayesian, "_DENSE_MAX_SIZE", 0)
    monkeypatch.setattr(bayesian, "_DENSE_MIN_FILL", 2.0)
    sparse = BayesianCompleter(n_chains=3).fit(observed, scales)
    np.testing.assert_allclose(sparse.z_pred_, dense.z_pred_, atol=1e-4)
    np.testing.assert_allclose(sparse.z_var_, dense.z_var_, atol=1e-4)


def test_chain_count_is_capped_by_the_cell_budget(monkeypatch):
    observed, _ = hide(rank2_percent_matrix(n=30, m=10), 0.3)
    n_cells = int(np.isfinite(observed).sum())
    monkeypatch.setattr(bayesian, "_CHAIN_CELL_BUDGET", 3 * n_cells)
    assert BayesianCompleter(n_chains=8).fit(observed, ["percent"] * 10).n_chains_used_ == 3
    monkeypatch.setattr(bayesian, "_CHAIN_CELL_BUDGET", 1)
    assert BayesianCompleter(n_chains=8).fit(observed, ["percent"] * 10).n_chains_used_ == 2


def test_fold_in_predicts_a_new_model_without_refitting():
    full = rank2_percent_matrix()
    model = BayesianCompleter().fit(full[:-1], ["percent"] * 40)
    truth = full[-1]
    row = truth.copy()
    unknown = np.arange(len(row)) % 2 == 0
    row[unknown] = np.nan
    pred, z = model.fold_in(row, return_z=True)
    assert z.shape == truth.shape
    assert np.abs(pred[unknown] - truth[unknown]).max() < 0.5
    assert np.array_equal(pred[~unknown], truth[~unknown])
    low, high = model.fold_in_interval(row, level=0.9)
    assert np.all((low[unknown] < pred[unknown]) & (pred[unknown] < high[unknown]))
    assert np.array_equal(low[~unknown], truth[~unknown])


def test_fold_in_of_a_fitted_row_matches_its_completed_row(fitted):
    _, observed, _, model = fitted
    for i in (0, 17, 42):
        folded = model.fold_in(observed[i], keep_observed=False)
        completed = model.predict(keep_observed=False)[i]
        assert np.median(np.abs(folded - completed)) < 0.05


def test_fold_in_with_no_known_score_gives_the_population_prediction(fitted):
    _, _, _, model = fitted
    pred = model.fold_in(np.full(40, np.nan))
    assert np.all(np.isfinite(pred)) and np.all((pred > 0) & (pred < 100))


def test_state_round_trips_through_json(fitted):
    _, observed, _, model = fitted
    state = json.loads(json.dumps(export_state(model)))
    assert state["state_version"] == 5 and state["method"] == "bayes"
    restored = restore_state(state, observed)
    assert isinstance(restored, BayesianCompleter)
    np.testing.assert_allclose(restored.predict(), model.predict(), atol=1e-5)
    for a, b in zip(restored.predict_interval(0.8), model.predict_interval(0.8), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)
    row = np.where(np.arange(40) % 3 == 0, observed[5], np.nan)
    np.testing.assert_allclose(restored.fold_in(row), model.fold_in(row), atol=1e-5)
    for a, b in zip(restored.fold_in_interval(row), model.fold_in_interval(row), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)
    with pytest.raises(ValueError, match="shape"):
        restore_state(state, observed[:-1])


def test_reference_recipe_state_still_restores():
    full = rank2_percent_matrix(n=20, m=10)
    model = LowRankCompleter(n_seeds=2).fit(full, ["percent"] * 10)
    state = json.loads(json.dumps(export_state(model)))
    assert state["state_version"] == 1
    restored = restore_state(state, full)
    assert isinstance(restored, LowRankCompleter)
    np.testing.assert_allclose(restored.z_pred_, model.z_pred_, atol=1e-6)
    with pytest.raises(ValueError, match="version"):
        restore_state({**state, "state_version": 9}, full)


@pytest.mark.parametrize(
    ("kwargs", "fit_kwargs", "match"),
    [
        ({"rank": 0}, {}, "rank"),
        ({"nu": 0.0}, {}, "nu"),
        ({"n_burn": -1}, {}, "n_burn"),
        ({"sparse_bias": -1.0}, {}, "sparse_bias"),
        ({"spread_prior": -1.0}, {}, "spread_prior"),
        ({}, {"row_features": np.ones((5, 1))}, "row_features"),
        ({}, {"row_features": np.full(60, np.inf)}, "row_features"),
    ],
)
def test_bad_parameters_raise_value_error(kwargs, fit_kwargs, match):
    observed, _ = hide(rank2_percent_matrix(n=60, m=8), 0.3)
    with pytest.raises(ValueError, match=match):
        BayesianCompleter(**kwargs).fit(observed, ["percent"] * 8, **fit_kwargs)


def test_fold_in_rejects_rows_and_features_of_the_wrong_size(fitted):
    _, _, _, model = fitted
    with pytest.raises(ValueError, match="row"):
        model.fold_in(np.ones(39))
    with pytest.raises(ValueError, match="features"):
        model.fold_in(np.ones(40), features=np.ones(2))


def test_student_t_quantile_matches_tables():
    assert student_t_quantile(0.95, 3.0) == pytest.approx(2.353363, abs=1e-5)
    assert student_t_quantile(0.975, 1.0) == pytest.approx(12.7062, abs=1e-3)
    assert student_t_quantile(0.995, 10.0) == pytest.approx(3.169273, abs=1e-5)
    assert student_t_quantile(0.05, 3.0) == pytest.approx(-2.353363, abs=1e-5)
    assert student_t_quantile(0.5, 4.0) == 0.0


def test_student_t_cdf_matches_the_closed_form_and_inverts_the_quantile():
    t = np.array([-np.inf, -4.0, -1.0, 0.0, 0.3, 2.5, np.inf])
    x = t[1:-1] / np.sqrt(3.0)
    closed = 0.5 + (x / (1.0 + x**2) + np.arctan(x)) / np.pi  # t with 3 dof
    assert student_t_cdf(t, 3.0) == pytest.approx([0.0, *closed, 1.0], abs=1e-9)
    for prob, dof in ((0.95, 3.0), (0.8, 7.5), (0.01, 1.0)):
        assert student_t_cdf(student_t_quantile(prob, dof), dof) == pytest.approx(prob, abs=1e-7)


def test_trust_figure_is_the_interval_mass_of_the_same_predictive():
    """P(|err| <= w) at w = the 90% half-width is 0.9 where the scale is linear (unbounded)."""
    full = rank2_percent_matrix(40, 20, seed=3) / 10.0
    observed, mask = hide(full, 0.3, seed=2)
    model = BayesianCompleter(n_chains=2).fit(observed, ["unbounded"] * 20)
    low, high = model.predict_interval(0.9)
    i, j = np.argwhere(mask)[0]
    half = (high[i, j] - low[i, j]) / 2.0
    assert model.predict_within(half)[i, j] == pytest.approx(0.9, abs=1e-6)
    p5, p1 = model.predict_within(0.5), model.predict_within(0.1)
    assert np.all(p5[~mask] == 1.0)
    assert np.all((p1[mask] > 0) & (p1[mask] < p5[mask]) & (p5[mask] < 1.0))
    row = full[0].copy()
    row[1:] = np.nan
    folded = model.fold_in_within(row, 0.5)
    assert folded[0] == 1.0 and np.all((folded[1:] > 0) & (folded[1:] < 1))
    lo, hi = model.fold_in_interval(row, level=0.8)
    k = 3
    assert model.fold_in_within(row, (hi[k] - lo[k]) / 2.0)[k] == pytest.approx(0.8, abs=1e-6)
    mean, low, high, within = model.fold_in_summary(row, level=0.8, width=0.5)
    assert np.array_equal(mean, model.fold_in(row))
    assert np.array_equal(low, model.fold_in_interval(row, level=0.8)[0])
    assert np.array_equal(high, model.fold_in_interval(row, level=0.8)[1])
    assert np.array_equal(within, folded)
    with pytest.raises(ValueError, match="width must be a positive number"):
        model.predict_within(0.0)


def family_matrix(seed: int = 3) -> tuple[np.ndarray, list[str]]:
    """Percent scores of 12 families x 4 members: members' logit vectors lie close to their
    family's (spread 0.05), families far apart (spread 1)."""
    rng = np.random.default_rng(seed)
    n_fam, per, m = 12, 4, 30
    centre = rng.normal(0, 1.0, (n_fam, 3))
    rows = np.repeat(centre, per, axis=0) + rng.normal(0, 0.05, (n_fam * per, 3))
    cols = rng.normal(0, 1.0, (m, 3))
    logit = rows[:, :1] + rows[:, 1:] @ cols[:, 1:].T + cols[:, 0]
    logit += rng.normal(0, 0.1, logit.shape)
    families = [f"fam{f}" for f in range(n_fam) for _ in range(per)]
    return 100.0 / (1.0 + np.exp(-logit)), families


def test_family_prior_pulls_a_sparse_model_toward_its_siblings():
    full, families = family_matrix()
    observed = hide(full, 0.2, seed=4)[0]
    sparse = np.arange(0, 48, 4)  # one member of every family keeps only 3 scores
    for i in sparse:
        observed[i, 3:] = np.nan
    scales = ["percent"] * full.shape[1]
    plain = BayesianCompleter(n_chains=4).fit(observed, scales)
    grouped = BayesianCompleter(n_chains=4).fit(observed, scales, row_groups=families)
    err = {
        name: np.median(np.abs(model.predict()[sparse, 3:] - full[sparse, 3:]))
        for name, model in (("plain", plain), ("grouped", grouped))
    }
    assert err["grouped"] < 0.7 * err["plain"], err
    assert grouped.model_groups_ == sorted(set(families))
    assert grouped.model_group_mean_.shape == (40, 12, 1 + grouped.rank)
    # New models folded in from 3 scores (one member of every family; the fit saw them with
    # 80% of their scores, but fold-in ignores that): the family's mean is the better prior.
    errors: dict[str, list[float]] = {"family": [], "population": []}
    for f in range(12):
        i = 4 * f + 1
        row = np.full(full.shape[1], np.nan)
        row[[2, 11, 20]] = full[i, [2, 11, 20]]
        hidden = np.isnan(row)
        for name, group in (("family", f"fam{f}"), ("population", None)):
            errors[name] += list(np.abs(grouped.fold_in(row, group=group) - full[i])[hidden])
    assert np.median(errors["family"]) < 0.8 * np.median(errors["population"])
    row = np.where(np.arange(full.shape[1]) < 3, full[5], np.nan)
    # An unknown family folds in like no family: the population prior.
    np.testing.assert_array_equal(grouped.fold_in(row, group="unseen"), grouped.fold_in(row))


def test_category_prior_pulls_a_sparse_benchmark_toward_its_kind():
    full, families = family_matrix(seed=5)
    values = full.T  # benchmarks now come in 12 kinds of 4
    observed = hide(values, 0.2, seed=6)[0]
    sparse = np.arange(0, 48, 4)  # one benchmark of every kind keeps 4 scores
    observed[4:, sparse] = np.nan
    scales = ["percent"] * values.shape[1]
    plain = BayesianCompleter(n_chains=4).fit(observed, scales)
    grouped = BayesianCompleter(n_chains=4).fit(observed, scales, col_groups=families)
    err = [
        np.median(np.abs(model.predict()[4:, sparse] - values[4:, sparse]))
        for model in (plain, grouped)
    ]
    assert err[1] < 0.9 * err[0], err


def test_sparse_column_priors_widen_the_bias_by_cells_and_keep_correlations():
    widen = bayesian._bias_widening(np.array([5, 50]), 50.0, 3)
    np.testing.assert_allclose(widen[0, 0], [1 / 11, 1 / np.sqrt(11), 1 / np.sqrt(11)])
    np.testing.assert_allclose(widen[1, 0, 0], 1 / 2)  # 1 + 50 / 50 = 2 times the variance
    np.testing.assert_allclose(widen[:, 1:, 1:], 1.0)  # loadings keep the population's prior
    assert bayesian._bias_widening(np.array([5, 50]), 0.0, 3) is None


def test_a_sparse_percent_column_spread_is_pooled_with_a_typical_one():
    full = rank2_percent_matrix(n=60, m=12)
    values = full.copy()
    values[5:, 0] = np.nan  # five scores left in column 0
    values[:, 11] = full[:, 11] * 10.0  # an open scale keeps its own spread
    scales = ["percent"] * 11 + ["unbounded"]
    raw = BayesianCompleter(spread_prior=0.0, n_chains=2, n_burn=2, n_samples=2)
    raw.fit(values, scales)
    pooled = BayesianCompleter(n_chains=2, n_burn=2, n_samples=2).fit(values, scales)
    var = raw.transform_.std_**2
    typical = np.median(var[1:11])  # the percent columns with at least 10 scores
    cells = np.array([5] + [60] * 10)
    expected = np.sqrt((4.0 * typical + cells * var[:11]) / (4.0 + cells - 1))
    np.testing.assert_allclose(pooled.transform_.std_[:11], expected)
    assert pooled.transform_.std_[0] / raw.transform_.std_[0] == pytest.approx(
        np.sqrt((4.0 * typical / var[0] + 5) / 8)
    )
    assert pooled.transform_.std_[11] == raw.transform_.std_[11]  # the open scale: untouched


def test_sparse_column_priors_predict_a_five_score_column_better():
    full = rank2_percent_matrix(seed=7)
    rng = np.random.default_rng(7)
    noisy = np.clip(full + rng.normal(0, 2, full.shape), 0.5, 99.5)
    observed, _ = hide(noisy, 0.3)
    sparse = np.arange(0, 40, 5)  # 8 benchmarks with 5 scores each
    for j in sparse:
        keep = rng.choice(60, 5, replace=False)
        observed[:, j] = np.where(np.isin(np.arange(60), keep), noisy[:, j], np.nan)
    hidden = np.isnan(observed[:, sparse])
    err = []
    for kwargs in ({"sparse_bias": 0.0, "spread_prior": 0.0}, {}):
        model = BayesianCompleter(n_chains=4, **kwargs).fit(observed, ["percent"] * 40)
        err.append(np.median(np.abs(model.predict()[:, sparse] - full[:, sparse])[hidden]))
    assert err[1] < 0.75 * err[0], err  # 1.24 against 2.06 points


def test_grouped_fit_with_floors_round_trips_through_json():
    full, families = family_matrix()
    full[:, 0] = 25.0 + 0.75 * full[:, 0]
    observed = hide(full, 0.2, seed=4)[0]
    scales = ["percent"] * full.shape[1]
    floors = [25.0] + [0.0] * (full.shape[1] - 1)
    model = BayesianCompleter(n_chains=2).fit(
        observed, scales, floors=floors, row_groups=families, row_features=np.arange(48.0)
    )
    state = json.loads(json.dumps(export_state(model)))
    assert state["transform_floor"][:2] == [25.0, 0.0]
    assert state["transform_lower"][0] == 0.0 and state["model_groups"][0] == "fam0"
    restored = restore_state(state, observed)
    np.testing.assert_allclose(restored.predict(), model.predict(), atol=1e-5)
    row = np.where(np.arange(30) < 4, full[9], np.nan)
    for kwargs in ({}, {"group": "fam2", "features": np.array([9.0])}):
        np.testing.assert_allclose(restored.fold_in(row, **kwargs), model.fold_in(row, **kwargs))
    assert restored.fold_in(np.full(30, np.nan))[0] > 25.0


def test_state_version_2_still_restores_without_floors_or_families(fitted):
    _, observed, _, _ = fitted
    # fits before state 4 had the plain logit link, and their params no link_prior
    model = BayesianCompleter(link_prior=0.0, n_chains=4).fit(observed, ["percent"] * 40)
    state = json.loads(json.dumps(export_state(model)))
    assert "transform_link_low" not in state
    version_2 = ("method", "params", "scales", "transform_mean", "transform_std")
    old = {
        k: state[k] for k in (*version_2, "new_model_noise", "fold_in_calibration") if k in state
    }
    old["arrays"] = {
        k: v
        for k, v in state["arrays"].items()
        if not k.startswith(("model_group", "model_features", "new_model_features"))
    }
    assert set(old["arrays"]) == {
        "z_pred", "z_var", "model_noise", "benchmark_noise", "mu", "benchmark_params",
        "benchmark_precision", "model_prior_mean", "model_prior_precision", "feature_mean",
        "feature_std",
    }  # fmt: skip
    old["params"] = {
        k: v for k, v in state["params"].items() if not k.startswith(("group_", "link_"))
    }
    old["state_version"] = 2
    restored = restore_state(old, observed)
    np.testing.assert_allclose(restored.predict(), model.predict(), atol=1e-5)
    row = np.where(np.arange(40) % 3 == 0, observed[5], np.nan)
    np.testing.assert_allclose(restored.fold_in(row), model.fold_in(row), atol=1e-5)
    assert restored.model_groups_ == [] and restored.transform_.floor_.tolist() == [0.0] * 40
    assert restored.link_prior == 0.0 and restored.transform_.link()[1].tolist() == [100.0] * 40


def test_a_new_model_without_a_date_is_taken_as_the_newest_release():
    full, _ = family_matrix()
    observed = hide(full, 0.2, seed=4)[0]
    years = np.linspace(2023.0, 2026.0, 48)
    scales = ["percent"] * full.shape[1]
    row = np.where(np.arange(30) < 5, full[40], np.nan)
    newest = BayesianCompleter(n_chains=2).fit(
        observed, scales, row_features=years, new_model_features=[2026.0]
    )
    np.testing.assert_array_equal(newest.fold_in(row), newest.fold_in(row, features=[2026.0]))
    assert not np.array_equal(newest.fold_in(row), newest.fold_in(row, features=[2024.5]))
    average = BayesianCompleter(n_chains=2).fit(observed, scales, row_features=years)
    np.testing.assert_allclose(average.fold_in(row), average.fold_in(row, features=[2024.5]))
    restored = restore_state(json.loads(json.dumps(export_state(newest))), observed)
    np.testing.assert_allclose(restored.fold_in(row), newest.fold_in(row), atol=1e-6)
    with pytest.raises(ValueError, match="new_model_features must have 1 entries, got 2"):
        BayesianCompleter(n_chains=2).fit(
            observed, scales, row_features=years, new_model_features=[1.0, 2.0]
        )


def dated_matrix(seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Percent scores of 80 models whose logits rise with their release year (2023-2026) on
    every column, at column-specific rates, plus a rank-1 term and a little noise."""
    rng = np.random.default_rng(seed)
    n, m = 80, 30
    years = rng.uniform(2023.0, 2026.0, n)
    rate = rng.uniform(0.4, 1.2, m)
    logit = (
        rng.normal(0, 0.5, (1, m))
        + np.outer(years - 2024.5, rate)
        + np.outer(rng.normal(0, 0.4, n), rng.normal(0, 0.8, m))
        + rng.normal(0, 0.05, (n, m))
    )
    return 100.0 / (1.0 + np.exp(-logit)), years


def test_an_unknown_date_is_inferred_from_the_scores():
    full, years = dated_matrix()
    train = hide(full, 0.2, seed=6)[0]
    new = np.arange(70, 80)  # ten models outside the fit
    model = BayesianCompleter(n_chains=2).fit(
        np.delete(train, new, axis=0), ["percent"] * 30, row_features=np.delete(years, new)
    )
    inferred, errors = [], {"nan": [], "true": [], "mean": []}
    for i in new:
        row = np.where(np.arange(30) < 5, full[i], np.nan)  # five known scores
        mean, sd = model.inferred_features(row, features=[np.nan])
        inferred.append((float(mean[0]), float(sd[0]), years[i]))
        for name, features in (("nan", [np.nan]), ("true", [years[i]]), ("mean", None)):
            pred = model.fold_in(row, features=features)
            errors[name].append(np.median(np.abs(pred[5:] - full[i, 5:])))
    # the date comes back within a few months, with a spread that says how sure it is
    gaps = np.array([abs(m - y) for m, _, y in inferred])
    assert np.median(gaps) < 0.25 and all(0.0 < sd < 1.0 for _, sd, _ in inferred)
    # and the answer is as good as with the true date, far better than the fit's average
    assert np.median(errors["nan"]) < 1.25 * np.median(errors["true"])
    assert np.median(errors["nan"]) < 0.75 * np.median(errors["mean"])
    # a known date is not inferred; a fit without dates has nothing to infer
    assert model.inferred_features(row, features=[2025.0]) is None
    # the learned prior of the date given the vector survives the snapshot state
    restored = restore_state(json.loads(json.dumps(export_state(model))), train[:70])
    assert restored.feature_regression_ is not None
    np.testing.assert_allclose(
        restored.fold_in(row, features=[np.nan]), model.fold_in(row, features=[np.nan]), atol=1e-5
    )
    plain = BayesianCompleter(n_chains=2).fit(np.delete(train, new, axis=0), ["percent"] * 30)
    assert plain.inferred_features(row, features=[]) is None


def test_the_draws_of_an_undated_model_follow_its_interval():
    full, years = dated_matrix()
    model = BayesianCompleter(n_chains=2).fit(full[:70], ["percent"] * 30, row_features=years[:70])
    row = np.where(np.arange(30) < 3, full[75], np.nan)
    low, high = model.fold_in_interval(row, features=[np.nan])
    draws = model.fold_in_draws(row, n_draws=4000, features=[np.nan])
    inside = (draws[:, 3:] >= low[3:]) & (draws[:, 3:] <= high[3:])
    assert abs(inside.mean() - 0.9) < 0.02


def test_fitted_models_without_a_date_have_it_inferred_in_the_fit():
    full, years = dated_matrix()
    observed = hide(full, 0.2, seed=6)[0]
    first_seen = np.arange(0, 80, 5)  # 16 models only first seen: no release date
    dates = years.copy()
    dates[first_seen] = np.nan
    model = BayesianCompleter(n_chains=2).fit(observed, ["percent"] * 30, row_features=dates)
    # their dates come back from their scores (standardised units, 1 = the spread of dates)
    inferred = model.model_features_[first_seen, 0] * model.feature_std_[0] + model.feature_mean_[0]
    assert np.median(np.abs(inferred - years[first_seen])) < 0.25
    # and the fit is as good as with every date known, better than with the average date
    truth = BayesianCompleter(n_chains=2).fit(observed, ["percent"] * 30, row_features=years)
    hidden = np.isnan(observed)
    error = np.median(np.abs(model.predict()[hidden] - full[hidden]))
    assert error < 1.2 * np.median(np.abs(truth.predict()[hidden] - full[hidden]))
