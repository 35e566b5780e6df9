"""Fold-in (new-model) interval calibration by the number of known scores."""

from __future__ import annotations

import json

import numpy as np
import pytest

from predictor import BenchPress
from predictor.fit.calibration import (
    MIN_RESIDUALS,
    FoldInCalibration,
    calibrate_fold_in,
    conformal_quantile,
    fold_in_residuals,
)
from predictor.fit.fitted_state import export_state, restore_state
from predictor.methods.bayesian import BayesianCompleter
from predictor.util.paths import bundled_snapshot_dir


def noisy_rank2(n: int = 60, m: int = 24, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logit = rng.normal(0, 0.8, (n, 2)) @ rng.normal(0, 0.8, (2, m)) + rng.normal(0, 0.3, (n, m))
    values = 100.0 / (1.0 + np.exp(-logit))
    return np.where(rng.random((n, m)) < 0.2, np.nan, values)


def small() -> BayesianCompleter:
    return BayesianCompleter(n_chains=2, n_burn=10, n_samples=10)


def test_conformal_quantile_is_the_finite_sample_rank() -> None:
    scores = np.arange(1.0, 10.0)  # 9 scores: rank ceil(10 * 0.9) = 9
    assert conformal_quantile(scores, 0.9) == 9.0
    assert conformal_quantile(scores, 0.5) == 5.0


def test_factors_scale_the_fold_in_half_width_by_known_scores_and_level() -> None:
    values = noisy_rank2()
    scales = ["percent"] * values.shape[1]
    residuals = fold_in_residuals(values, scales, small, n_splits=3)["side"]
    assert set(residuals) == {2, 3, 4, 5, 6, 8, 10, 12, 15, 20}  # 30 needs rows of 33 scores
    assert all(np.all(r >= 0) for r in residuals.values())
    calibration = calibrate_fold_in(values, scales, small, n_splits=3)
    assert calibration == calibrate_fold_in(values, scales, small, n_splits=3)  # seeded
    assert len(calibration.factors) == len(calibration.strata) + 1
    assert calibration.residuals[-1] == 0 and calibration.factors[-1] == (1.0,) * 9
    assert all(0.5 <= f <= 2.0 for row in calibration.factors for f in row)

    model = small().fit(values, scales)
    row = np.full(values.shape[1], np.nan)
    row[:5] = values[0, :5] if np.isfinite(values[0, :5]).all() else 50.0
    raw_low, raw_high = model.fold_in_interval(row, level=0.8, keep_observed=False)
    model.fold_in_calibration_ = calibration
    low, high = model.fold_in_interval(row, level=0.8, keep_observed=False)
    mean, _ = model.fold_in_predictive(row)
    z = model.transform_.transform
    factor = calibration.factor(5, 0.8)
    assert calibration.stratum(5) == 1 and factor != 1.0
    assert np.allclose(z(high) - mean, factor * (z(raw_high) - mean), atol=1e-6)
    assert np.allclose(mean - z(low), factor * (mean - z(raw_low)), atol=1e-6)

    restored = restore_state(json.loads(json.dumps(export_state(model))), model.values_)
    assert restored.fold_in_calibration_ == FoldInCalibration.from_dict(calibration.as_dict())
    assert np.allclose(
        restored.fold_in_interval(row, level=0.8)[1], model.fold_in_interval(row, 0.8)[1]
    )


def test_calibration_doc_is_checked_on_load() -> None:
    doc = FoldInCalibration(((1.0, 1.0), (1.0, 5.0)), (300, 300), (3,), (0.5, 0.9)).as_dict()
    with pytest.raises(ValueError, match="outside its allowed range"):
        FoldInCalibration.from_dict(doc)
    doc["factors"] = [[1.0, 1.0]]
    with pytest.raises(ValueError, match="do not match"):
        FoldInCalibration.from_dict(doc)


def test_the_bundled_snapshot_calibrates_new_model_intervals() -> None:
    bp = BenchPress.load(store=bundled_snapshot_dir())
    calibration = bp.completer_.fold_in_calibration_
    assert calibration is not None and min(calibration.residuals[:4]) >= 1000
    factors90 = bp.manifest["quality"]["fold_in_factor90_by_known"]
    labels = ["1-3", "4-6", "7-10", "11-20", "21+"]
    assert calibration.stratum_labels() == labels
    assert factors90 == {
        label: round(calibration.factor(k, 0.9), 6)
        for label, k in zip(labels, (3, 6, 10, 20, 21), strict=True)
    }
    assert all(0.7 < f < 1.1 for f in factors90.values())
    assert factors90["1-3"] < 1.0  # few known scores: the model-based interval was too wide


def test_factors_are_relative_to_the_completers_own_interval_scale() -> None:
    """The factor multiplies interval_scale x t quantile x sd: a completer whose intervals are
    narrower by construction gets a proportionally larger factor, the same final width."""
    values = noisy_rank2()
    scales = ["percent"] * values.shape[1]
    wide = calibrate_fold_in(
        values,
        scales,
        lambda: BayesianCompleter(n_chains=2, n_burn=10, n_samples=10, interval_scale=1.0),
    )
    narrow = calibrate_fold_in(
        values,
        scales,
        lambda: BayesianCompleter(n_chains=2, n_burn=10, n_samples=10, interval_scale=0.8),
    )
    ratio = np.array(narrow.factors) / np.array(wide.factors)
    calibrated = np.array(wide.residuals) >= MIN_RESIDUALS  # the others keep factor 1
    inside = calibrated[:, None] & (np.array(narrow.factors) < 2.0)  # and none clipped
    assert inside.sum() >= 18
    np.testing.assert_allclose(ratio[inside], 1.25)
    assert (ratio[~calibrated] == 1.0).all()


def dated(n: int = 60) -> np.ndarray:
    return 2024.0 + np.linspace(0.0, 2.0, n)


def test_a_new_release_gets_the_release_table_and_a_described_model_the_other() -> None:
    """With release dates in the fit, a model folded in without one is a new release: its
    factor comes from the time-honest table; given its date, from the held-out-model one.
    Both tables survive a snapshot's state."""
    values = noisy_rank2()
    scales = ["percent"] * values.shape[1]
    years = dated()
    kwargs = {"row_features": years, "new_model_features": np.array([years.max()])}
    residuals = fold_in_residuals(values, scales, small, n_splits=3, fit_kwargs=kwargs)
    assert set(residuals) == {"side", "release"} and residuals["release"][5].size > 0
    calibration = calibrate_fold_in(values, scales, small, n_splits=3, fit_kwargs=kwargs)
    assert calibration.release_factors is not None
    assert calibration.release_factors != calibration.factors
    assert calibration.factor(5, 0.9, release=True) == pytest.approx(
        np.interp(0.9, calibration.levels, calibration.release_factors[1])
    )

    model = small().fit(values, scales, **kwargs)
    model.fold_in_calibration_ = calibration
    row = np.full(values.shape[1], np.nan)
    row[:5] = 50.0
    mean, _ = model.fold_in_predictive(row)
    z = model.transform_.transform
    _, high = model.fold_in_interval(row, level=0.9, keep_observed=False)
    assert z(high)[10] - mean[10] == pytest.approx(
        calibration.factor(5, 0.9, release=True)
        * model.interval_multiplier(0.9)
        * model.fold_in_predictive(row)[1][10],
        rel=1e-6,
    )
    given = np.array([years.max()])
    mean_g, sd_g = model.fold_in_predictive(row, features=given)
    _, high_g = model.fold_in_interval(row, level=0.9, keep_observed=False, features=given)
    assert z(high_g)[10] - mean_g[10] == pytest.approx(
        calibration.factor(5, 0.9) * model.interval_multiplier(0.9) * sd_g[10], rel=1e-6
    )

    restored = restore_state(json.loads(json.dumps(export_state(model))), model.values_)
    assert restored.fold_in_calibration_ == FoldInCalibration.from_dict(calibration.as_dict())
    assert restored.fold_in_calibration_.release_factors is not None


def test_a_calibration_without_the_release_table_still_loads() -> None:
    """States written before the release table: `factors` serve every fold-in."""
    doc = FoldInCalibration(((1.0, 1.0), (0.9, 0.9)), (300, 300), (3,), (0.5, 0.9)).as_dict()
    assert "release_factors" not in doc
    calibration = FoldInCalibration.from_dict(doc)
    assert calibration.factor(5, 0.9, release=True) == calibration.factor(5, 0.9) == 0.9
