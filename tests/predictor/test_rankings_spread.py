"""The rankings' spread pinned to numbers: a prediction's sd is its half-width over the normal
quantile z((1 + level) / 2), and P(A better than B) is Phi of the difference over the
combined sd. Quantiles are the textbook values (z 0.95 = 1.6448536, z 0.75 = 0.6744898,
z 0.975 = 1.9599640), Phi is taken from math.erf, so a wrong quantile (e.g. z(level) instead
of z((1 + level) / 2), which makes the 90% sd 12.83 instead of 10) fails here."""

from __future__ import annotations

import math

import pytest

from predictor.api import Prediction
from predictor.trust.rankings import Entry, p_better, rank_entries, sd_of

Z_95, Z_75, Z_975 = 1.6448536269514722, 0.6744897501960817, 1.959963984540054


def prediction(score: float, half: float, level: float, observed: bool = False) -> Prediction:
    return Prediction("gpqa_diamond", score, score - half, score + half, level, observed)


def phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


@pytest.mark.parametrize(
    ("level", "half_width", "sd"),
    [
        (0.9, 10 * Z_95, 10.0),  # 16.4485 points either side at 90% is an sd of 10
        (0.9, 16.45, 16.45 / Z_95),  # 10.00089
        (0.5, 10 * Z_75, 10.0),
        (0.95, 19.6, 19.6 / Z_975),  # 10.00018
    ],
)
def test_sd_is_the_half_width_over_the_central_quantile(level, half_width, sd) -> None:
    assert sd_of(prediction(60.0, half_width, level)) == pytest.approx(sd, rel=1e-12, abs=1e-9)


def test_sd_of_pinned_values() -> None:
    assert sd_of(prediction(60.0, 16.45, 0.9)) == pytest.approx(10.000890, abs=1e-6)
    assert sd_of(prediction(60.0, 19.6, 0.95)) == pytest.approx(10.000184, abs=1e-6)
    assert sd_of(prediction(60.0, 5.0, 0.9, observed=True)) == 0.0  # a probe is known
    assert sd_of(prediction(60.0, 0.0, 0.9)) == 0.0  # no interval, no spread


def test_p_better_fed_by_the_spread_of_two_predictions() -> None:
    """A: 60 with sd 10, B: 50 with sd 5, both from 90% intervals: P(A > B) =
    Phi(10 / sqrt(10^2 + 5^2)) = Phi(0.894427) = 0.814453."""
    a, b = prediction(60.0, 10 * Z_95, 0.9), prediction(50.0, 5 * Z_95, 0.9)
    expected = phi(10.0 / math.sqrt(125.0))
    assert expected == pytest.approx(0.8144533, abs=1e-7)
    entries = [Entry(n, p.score, sd_of(p), p.low, p.high) for n, p in (("a", a), ("b", b))]
    ranking = rank_entries("gpqa_diamond", entries)
    assert [e.name for e in ranking.order] == ["a", "b"]
    assert ranking.p_matrix[("a", "b")] == pytest.approx(expected, abs=1e-9)
    assert ranking.p_matrix[("b", "a")] == pytest.approx(1.0 - expected, abs=1e-9)
    assert ranking.tie_groups == [1, 2]  # 10 points apart, P 0.81: not within noise
    lower = rank_entries("gpqa_diamond", entries, higher_is_better=False)
    assert [e.name for e in lower.order] == ["b", "a"]
    assert lower.p_matrix[("b", "a")] == pytest.approx(expected, abs=1e-9)
    assert p_better(60.0, sd_of(a), 50.0, sd_of(b)) == pytest.approx(expected, abs=1e-9)
