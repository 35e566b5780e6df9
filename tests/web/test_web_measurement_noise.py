"""`/api/predict` takes a probe's standard error (`mmlu_pro=74±1.5`, or `[74, 1.5]` in JSON)
over real HTTP and answers as the Python API does."""

from __future__ import annotations

from datetime import date
from urllib.parse import quote

import pytest

from predictor import BenchPress
from predictor.api import _year_to_day
from predictor.util.paths import bundled_snapshot_dir
from tests.web.conftest import BUNDLED_VERSION, RunningApp

PROBES = {"gpqa_diamond": (90.0, 5.0), "hle": 20.0}


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


def test_a_probe_with_its_standard_error_predicts_as_in_python(
    app: RunningApp, bp: BenchPress
) -> None:
    expected = {b: p.as_dict() for b, p in bp.predict(PROBES).items()}
    exact = {b: p.as_dict() for b, p in bp.predict({"gpqa_diamond": 90.0, "hle": 20.0}).items()}
    assert expected["mmlu_pro"] != exact["mmlu_pro"]  # the standard error counts
    for written in ("gpqa_diamond=90\u00b15,hle=20", "gpqa_diamond=90%2B-5,hle=20"):
        doc = app.get(f"/api/predict?scores={quote(written, safe='=,%')}").json()
        assert doc["probes"] == {"gpqa_diamond": 90.0, "hle": 20.0}
        assert doc["stderr"] == {"gpqa_diamond": 5.0}
        assert {r["benchmark"]: r for r in doc["predictions"]} == expected
    posted = app.post("/api/predict", {"scores": {"GPQA Diamond": [90, 5], "hle": 20}}).json()
    assert posted["stderr"] == {"gpqa_diamond": 5.0}
    assert {r["benchmark"]: r for r in posted["predictions"]} == expected
    plain = app.get("/api/predict?scores=gpqa_diamond=90,hle=20").json()
    assert plain["stderr"] == {}
    assert {r["benchmark"]: r for r in plain["predictions"]} == exact


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        (
            "gpqa_diamond=90\u00b1-1",
            "standard error for 'gpqa_diamond' must be a finite number >= 0, got -1",
        ),
        (
            "gpqa_diamond=90\u00b1wide",
            "standard error for 'gpqa_diamond' must be a number, got text",
        ),
        (
            "gpqa_diamond=90\u00b1nan",
            "standard error for 'gpqa_diamond' must be a finite number >= 0, got nan",
        ),
        (
            "gpqa_diamond=90\u00b175",
            "standard error for 'gpqa_diamond' must be at most 50 points on a percent "
            "benchmark, got 75",
        ),
        ("gpqa_diamond=abc\u00b12", "score for 'gpqa_diamond' must be a number, got 'abc'"),
    ],
)
def test_a_bad_standard_error_is_a_400_naming_the_benchmark(
    app: RunningApp, scores: str, message: str
) -> None:
    answer = app.get(f"/api/predict?scores={quote(scores, safe='=,')}")
    assert answer.status == 400
    assert answer.json() == {"error": message}


def test_the_page_s_score_boxes_may_hold_a_standard_error(app: RunningApp, bp: BenchPress) -> None:
    """The page posts each box's text as it was typed (`90±5`, `90+-5`): read as in a link,
    not refused as a score that is not a number."""
    expected = {b: p.as_dict() for b, p in bp.predict(PROBES).items()}
    for typed in ("90\u00b15", "90+-5", " 90 +/- 5 "):
        doc = app.post("/api/predict", {"scores": {"gpqa_diamond": typed, "hle": "20"}}).json()
        assert doc["stderr"] == {"gpqa_diamond": 5.0}
        assert {r["benchmark"]: r for r in doc["predictions"]} == expected


def test_an_inferred_release_date_is_a_day_of_the_calendar() -> None:
    """A date inferred in February once read `2025-02-31`: the day stays within its month."""
    days = [_year_to_day(2024 + k / 2400) for k in range(4800)]
    assert all(date.fromisoformat(d) for d in days)
    assert _year_to_day(2025 + 1.99 / 12) == "2025-02-28"
