"""The percent link that can bend per column: learned by the default method, plain in a bare
transform and on exactly logit-linear columns, one transform for fit, fold-in and intervals,
kept through a snapshot state, plain on sparse columns."""

import numpy as np
import pytest

from predictor.methods.bayesian import BayesianCompleter
from predictor.transforms import ScaleTransform


def _matrix(seed: int = 0, n: int = 40, m: int = 6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=(n, 1))
    z = ability @ rng.normal(1.0, 0.3, size=(1, m)) + 0.3 * rng.normal(size=(n, m))
    values = 5.0 + 80.0 / (1.0 + np.exp(-z))  # saturates at 5 and 85, not 0 and 100
    values[rng.random((n, m)) < 0.3] = np.nan
    return values


def _saturating(seed: int = 0, n: int = 80, m: int = 6) -> np.ndarray:
    """Scores that level off at 5 and 85 (widely spread abilities, little noise)."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(0.0, 2.0, (n, 1))
    z = ability @ rng.normal(1.0, 0.2, (1, m)) + rng.normal(0.0, 0.5, (1, m))
    values = 5.0 + 80.0 / (1.0 + np.exp(-(z + 0.05 * rng.normal(size=(n, m)))))
    values[rng.random((n, m)) < 0.3] = np.nan
    return values


def test_a_bare_transform_is_the_plain_logit_and_the_default_method_learns_its_link():
    values = _saturating()
    scales = ["percent"] * values.shape[1]
    low, high = ScaleTransform(scales).fit(values).link()
    assert np.all(low == 0.0) and np.all(high == 100.0)
    fit = BayesianCompleter(n_chains=2, n_burn=5, n_samples=5).fit(values, scales)
    assert (fit.link_prior, fit.link_mode) == (30.0, "learned")
    low, high = fit.transform_.link()
    bent = (low != 0.0) | (high != 100.0)
    assert bent.sum() >= 4, f"only {bent.sum()} of 6 saturating columns bent"
    assert fit.to_state()["transform_link_high"] == pytest.approx(high.tolist(), abs=1e-5)


def test_an_exactly_logit_linear_matrix_keeps_the_plain_link_almost_everywhere():
    rng = np.random.default_rng(7)
    n, m = 60, 40
    logit = rng.normal(0, 0.5, (1, m)) + rng.normal(0, 0.8, (n, 2)) @ rng.normal(0, 0.8, (2, m))
    values = 100.0 / (1.0 + np.exp(-logit))
    values[np.random.default_rng(1).random((n, m)) < 0.3] = np.nan
    low, high = ScaleTransform(["percent"] * m, link_prior=30.0).fit(values).link()
    bent = (low != 0.0) | (high != 100.0)
    # a ridge of 1 in the selection's line bent 39 of these 40 columns
    assert bent.sum() <= 4, f"{bent.sum()} of {m} columns bent"


@pytest.mark.parametrize("mode", ["learned", "range"])
def test_bent_link_round_trips_and_stays_in_range(mode):
    values = _matrix()
    scales = ["percent"] * values.shape[1]
    tf = ScaleTransform(scales, link_prior=10.0, link_mode=mode).fit(values)
    low, high = tf.link()
    assert not (np.all(low == 0.0) and np.all(high == 100.0))
    x = np.array([20.0, 40.0, 60.0, 70.0, 80.0, 30.0])
    inside = (x > low) & (x < high)
    back = tf.inverse(tf.transform(x))
    assert np.allclose(back[inside], x[inside], atol=1e-6)
    out = tf.inverse(np.linspace(-50, 50, 6))
    assert np.all((out >= 0.0) & (out <= 100.0))


def test_sparse_column_keeps_the_plain_link():
    values = _matrix()
    values[3:, 0] = np.nan  # 3 cells: the prior weight is 3 / 1003
    tf = ScaleTransform(["percent"] * values.shape[1], link_prior=1000.0).fit(values)
    low, high = tf.link()
    assert abs(low[0]) < 0.5 and abs(high[0] - 100.0) < 0.5


def test_state_keeps_the_link():
    values = _matrix()
    scales = ["percent"] * values.shape[1]
    fit = BayesianCompleter(n_chains=2, n_burn=5, n_samples=5, link_prior=10.0).fit(values, scales)
    state = fit.to_state()
    assert "transform_link_low" in state
    again = BayesianCompleter.from_state(state, values)
    assert np.allclose(again.transform_.link()[0], fit.transform_.link()[0], atol=1e-6)
    row = values[0].copy()
    row[2:] = np.nan
    assert np.allclose(fit.fold_in(row), again.fold_in(row))
    low, high = fit.fold_in_interval(row)[:2]
    assert np.all(low <= high)
