"""`BenchPress` on the snapshot bundled with the package (works right after install)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from predictor import BenchPress, UnknownNameError
from predictor.api import predictions_frame
from predictor.util.paths import bundled_snapshot_dir

SEED_PROBES = {
    "gpqa_diamond": 80,
    "hle": 20,
    "mmlu_pro": 80,
    "arc_agi_1": 60,
    "codeforces_rating": 1800,
}


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=bundled_snapshot_dir())


def test_seed_probe_set_predicts_many_benchmarks(bp: BenchPress) -> None:
    predictions = bp.predict(SEED_PROBES)
    finite = [
        p
        for p in predictions.values()
        if math.isfinite(p.score) and p.low <= p.score <= p.high and not p.observed
    ]
    assert len(finite) >= 50
    assert predictions["gpqa_diamond"].observed and predictions["gpqa_diamond"].score == 80
    for p in predictions.values():
        assert p.confidence == pytest.approx((p.high - p.low) / 2)
    scale = dict(bp.snapshot.benchmarks.select("benchmark_id", "scale").iter_rows())
    assert all(
        0 < p.score < 100
        for b, p in predictions.items()
        if scale[b] == "percent" and not p.observed
    )


def test_every_prediction_carries_a_trust_figure(bp: BenchPress) -> None:
    """P(|error| <= 5 points): 1 for the probes, a probability on percent benchmarks that
    falls as the interval widens, NaN where 5 units mean nothing comparable (Elo, dollars)."""
    predictions = bp.predict(SEED_PROBES)
    scale = dict(bp.snapshot.benchmarks.select("benchmark_id", "scale").iter_rows())
    assert predictions["gpqa_diamond"].p_within_5 == 1.0
    assert predictions["chatbot_arena_elo"].p_within_5 is None
    percent = [p for b, p in predictions.items() if scale[b] == "percent" and not p.observed]
    assert all(0.0 < p.p_within_5 < 1.0 for p in percent)
    widths = np.array([p.high - p.low for p in percent])
    trust = np.array([p.p_within_5 for p in percent])
    assert np.corrcoef(np.argsort(np.argsort(widths)), np.argsort(np.argsort(trust)))[0, 1] < -0.8
    assert bp.predict(SEED_PROBES) == predictions  # comparable: no NaN inside
    frame = predictions_frame(predictions)
    assert frame.filter(pl.col("benchmark") == "chatbot_arena_elo")["p_within_5"].is_null().all()
    assert frame.columns == [
        "benchmark",
        "score",
        "low",
        "high",
        "level",
        "observed",
        "p_within_5",
        "confidence",
    ]


def test_higher_probes_predict_higher_scores(bp: BenchPress) -> None:
    weak = bp.predict({"gpqa_diamond": 35, "mmlu_pro": 50})
    strong = bp.predict({"gpqa_diamond": 85, "mmlu_pro": 85})
    assert strong["aime_2025"].score > weak["aime_2025"].score + 10
    assert strong["chatbot_arena_elo"].score > weak["chatbot_arena_elo"].score


def test_wider_level_gives_wider_interval(bp: BenchPress) -> None:
    narrow = bp.predict(SEED_PROBES, level=0.5)["aime_2025"]
    wide = bp.predict(SEED_PROBES, level=0.95)["aime_2025"]
    assert wide.high - wide.low > narrow.high - narrow.low


def test_unknown_benchmark_lists_close_matches(bp: BenchPress) -> None:
    with pytest.raises(UnknownNameError) as caught:
        bp.predict({"gpqa_diamnd": 80})
    assert "gpqa_diamond" in caught.value.suggestions
    assert "did you mean" in str(caught.value)


@pytest.mark.parametrize(
    ("probes", "error", "message"),
    [
        ({}, ValueError, "empty"),
        ({"gpqa_diamond": float("nan")}, ValueError, "finite"),
        ({"gpqa_diamond": 180}, ValueError, "0-100"),
        ({"gpqa_diamond": "80"}, TypeError, "must be a number"),
        ([("gpqa_diamond", 80)], TypeError, "mapping"),
        ({"gpqa_diamond": 80, "GPQA Diamond": 81}, ValueError, "given twice"),
    ],
)
def test_bad_probe_input_is_a_clear_error(bp, probes, error, message) -> None:
    with pytest.raises(error, match=message):
        bp.predict(probes)


def test_matrix_scores_and_resolution(bp: BenchPress) -> None:
    view = bp.matrix()
    assert view.values.shape == (len(bp.models), len(bp.benchmarks))
    assert len(bp.models) >= 80 and len(bp.benchmarks) >= 100
    assert int(np.sum(~np.isnan(view.values))) == bp.scores().height
    assert set(bp.scores().columns) >= {
        "model_id",
        "benchmark_id",
        "score",
        "source",
        "url",
        "fetched_at",
    }
    assert bp.resolve_benchmark("GPQA Diamond") == "gpqa_diamond"
    assert bp.resolve_model("o3-mini (high)") == "o3-mini-high"
    with pytest.raises(UnknownNameError, match="unknown model"):
        bp.resolve_model("definitely-not-a-model")


def test_pinned_version_and_unknown_version(bp: BenchPress) -> None:
    again = BenchPress.load(bp.version, store=bundled_snapshot_dir())
    assert again.predict(SEED_PROBES)["aime_2025"] == bp.predict(SEED_PROBES)["aime_2025"]
    from predictor import SnapshotError

    with pytest.raises(SnapshotError, match="not found"):
        BenchPress.load("1999.01.01.1", store=bundled_snapshot_dir())
