"""LiveCodeBench: per-problem records -> one pass@1 per model (loopback mirror); hostile input."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pipelines.sources import livecodebench as lcb
from pipelines.sources.base import SCORE_SCHEMA, ParseError
from tests.support.fault_edits import Target, livecodebench_edit
from tests.support.fetching import fetch_via_mirror

# where the fault suite's content faults go (tests/faults/faults.py collects it)
FAULT_TARGET = Target(lcb.SOURCE.urls[0], livecodebench_edit, "models[0]")
URL = lcb.URL
DAY = 86_400_000


@pytest.fixture
def frame(mirror_server) -> pl.DataFrame:
    return lcb.parse(fetch_via_mirror(lcb.SOURCE, mirror_server.base_url))


def one(frame: pl.DataFrame, key: str) -> dict:
    hit = frame.filter(pl.col("model_key") == key)
    assert hit.height == 1, (key, hit.height)
    return hit.row(0, named=True)


def test_one_aggregate_row_per_model(frame: pl.DataFrame) -> None:
    assert frame.schema == SCORE_SCHEMA
    assert frame.height == 16
    assert frame["model_key"].n_unique() == 16 and frame["model_name"].n_unique() == 16
    assert frame["benchmark_key"].unique().to_list() == ["code_generation"]
    assert frame["unit"].unique().to_list() == ["percent"]
    assert frame["value"].null_count() == 0
    for column in ("reasoning_effort", "thinking_budget", "agent"):
        assert frame[column].null_count() == frame.height
    for extra in frame["extra"]:
        facts = json.loads(extra)
        assert facts["problems"] == facts["problems_in_window"] == 1055
        assert (facts["window_start"], facts["window_end"]) == ("2023-05-08", "2025-04-07")
        assert (facts["problems_easy"], facts["problems_medium"], facts["problems_hard"]) == (
            322,
            383,
            350,
        )
        assert facts["problems_by_platform"] == {"atcoder": 602, "codeforces": 9, "leetcode": 444}


def test_exact_values(frame: pl.DataFrame) -> None:
    # sums of the 1,055 per-problem pass@1 values, checked against the raw file
    deepseek = one(frame, "deepseek-chat")
    assert deepseek["model_name"] == "DeepSeek-V3"
    assert deepseek["value"] == pytest.approx(52280 / 1055, abs=1e-9)
    assert deepseek["row_ref"] == "models[0]"
    facts = json.loads(deepseek["extra"])
    assert facts["pass@1_hard"] == pytest.approx(14.2)
    assert facts["cutoff_date"] == "2024-06-30"
    assert facts["contaminated"] is True  # cut-off after the window start
    assert facts["model_style"] == "DeepSeekAPI"
    high = one(frame, "o4-mini__high")
    assert (high["model_name"], high["value"]) == ("O4-Mini (High)", pytest.approx(87800 / 1055))
    assert json.loads(high["extra"])["contaminated"] is False
    assert one(frame, "o3-mini-2025-01-31__medium")["model_name"] == "O3-Mini-2025-01-31 (Med)"
    assert one(frame, "claude-3-haiku-20240307")["value"] == pytest.approx(22.530806, abs=1e-6)


def _doc(performances: list, models: list | None = None) -> bytes:
    models = models if models is not None else [{"model_name": "a-1", "model_repr": "A"}]
    return json.dumps({"performances": performances, "models": models}).encode()


def _rec(model: str, question: str, value: object, date: object = 0, **more: object) -> dict:
    return {"model": model, "question_id": question, "date": date, "pass@1": value, **more}


def test_window_and_edge_cases() -> None:
    payload = _doc(
        [
            _rec("A", "q1", 100.0, 5 * DAY, difficulty="easy", platform="leetcode"),
            _rec("A", "q2", 50.0, 9 * DAY, difficulty="hard"),
            _rec("A", "q2", 50.0, 9 * DAY, difficulty="hard"),  # identical repeat counted once
            _rec("Z", "q1", 10.0, 7 * DAY),
        ],
        [
            {"model_name": "a-1", "model_repr": "A", "release_date": 6 * DAY},
            {"model_name": "b-1", "model_repr": "B"},
        ],
    )
    frame = lcb.parse({URL: payload})
    assert frame["model_key"].to_list() == ["a-1", "b-1", "Z"]
    assert frame["value"].to_list() == [75.0, None, 10.0]
    a, b, z = (json.loads(e) for e in frame["extra"])
    assert (a["problems"], a["pass@1_easy"], a["pass@1_hard"], a["problems_medium"]) == (
        2,
        100.0,
        50.0,
        0,
    )
    assert "pass@1_medium" not in a  # no medium problems: no mean
    assert (a["window_start"], a["window_end"], a["contaminated"]) == (
        "1970-01-06",
        "1970-01-10",
        True,
    )
    assert a["problems_by_platform"] == {"leetcode": 1, "unknown": 1}
    assert b["rejected"] == "no performance records for this model"
    assert z["note"] == "model has records but no entry in 'models'"


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        (_doc([_rec("A", "q1", 1.0)])[:-20], "invalid JSON"),
        (b'{"performances": [{"pass@1": NaN}], "models": []}', "non-finite"),
        (b'{"performances": [], "models": [{"model_repr": "\xff"}]}', "not UTF-8"),
        (b"<!DOCTYPE html>\n<html></html>", "HTML page"),
        (b'{"models": []}', "missing keys ['performances']"),
        (_doc([{"model": "A", "question_id": "q1", "date": 0}]), "missing keys ['pass@1']"),
        (_doc([_rec("A", "q1", 150.0)]), "outside 0-100"),
        (_doc([_rec("A", "q1", "x")]), "not a number"),
        (_doc([_rec("A", "q1", 1.0, date="2024-01-01")]), "not epoch milliseconds"),
        (_doc([_rec("A", "q1", 1.0), _rec("A", "q1", 2.0)]), "conflicting pass@1"),
        (_doc([], [{"model_repr": "A"}, {"model_repr": "A"}]), "listed twice"),
        (_doc([_rec("", "q1", 1.0)]), "empty model name"),
    ],
)
def test_hostile_payloads(payload: bytes, needle: str) -> None:
    with pytest.raises(ParseError, match="livecodebench") as caught:
        lcb.parse({URL: payload})
    assert needle in str(caught.value)


def test_error_names_the_record() -> None:
    payload = _doc([_rec("A", "q1", 1.0), _rec("A", "q2", -3.0)])
    with pytest.raises(ParseError, match=r"at performances\[1\]"):
        lcb.parse({URL: payload})
