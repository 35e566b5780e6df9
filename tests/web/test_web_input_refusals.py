"""Issue 38, inputs, over real HTTP: `/api/predict` and `/api/side` refuse a release date
outside the dates the snapshot's fit can use (400, the Python API's message), and a small
model's predicted cells all come back with an interval of positive width."""

from __future__ import annotations

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from tests.web.conftest import BUNDLED_VERSION, RunningApp

RED_TEAM = {"gpqa_diamond": 60.0, "mmlu_pro": 70.0, "hle": 10.0}
LLAMA_1B = {  # Llama 3.2 1B Instruct's published scores
    "gpqa_diamond": 16.57,
    "mmlu_pro": 20.8,
    "ifeval": 52.37,
    "gsm8k": 39.04,
    "math_500": 23.4,
}


def refused(day: str) -> str:
    return (
        f"release_date '{day}' is outside the dates this snapshot's fit can use: 2020-08-05 to "
        "2027-07-01 (its models' release dates, 2021-08-05 to 2026-07-01, and 12 months either "
        "side); further out the trend in release dates would be extrapolated"
    )


def test_predict_refuses_a_date_outside_the_fits_dates(app: RunningApp) -> None:
    for day in ("9999-12-31", "0001-01-01", "2035-01-01"):
        answer = app.post("/api/predict", {"scores": RED_TEAM, "release_date": day})
        assert (answer.status, answer.json()) == (400, {"error": refused(day)})
        query = f"scores=gpqa_diamond=60,mmlu_pro=70,hle=10&release_date={day}"
        answer = app.get(f"/api/predict?{query}")
        assert (answer.status, answer.json()) == (400, {"error": refused(day)})
        answer = app.get(f"/api/side?model=my-model&release_date={day}")
        assert (answer.status, answer.json()) == (400, {"error": refused(day)})
    for day in ("2020-08-05", "2027-07-01"):  # the ends of the range are taken
        answer = app.post("/api/predict", {"scores": RED_TEAM, "release_date": day})
        assert answer.status == 200
        assert answer.json()["side"]["release_date"] == day


def test_no_predicted_cell_comes_back_with_a_zero_width_interval(app: RunningApp) -> None:
    body = app.post("/api/predict", {"scores": LLAMA_1B, "model": "llama-3.2-1b-instruct"}).json()
    bp = BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())
    rows = {row["benchmark"]: row for row in body["predictions"]}
    assert len(rows) == len(bp.fit_benchmarks_)
    predicted = [row for row in rows.values() if not row["observed"]]
    assert [row["benchmark"] for row in predicted if not row["high"] > row["low"]] == []
    vending = rows["vending_bench_2"]
    assert vending["score"] == vending["low"] == 0 and vending["high"] > 1000
    assert vending["confidence"] == (vending["high"] - vending["low"]) / 2
