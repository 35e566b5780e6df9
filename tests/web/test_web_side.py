"""`/api/side` and the side information of `/api/predict` over real HTTP: the family and
release date a new model is folded in with, and why, as `BenchPress.side_for` decides them."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from predictor import BenchPress
from predictor.names.resolve import UnknownNameError
from predictor.util.paths import bundled_snapshot_dir
from tests.web.conftest import BUNDLED_VERSION, RunningApp

PROBES = {"gpqa_diamond": 80.0, "hle": 20.0, "mmlu_pro": 80.0}

GPT_4O = {
    "version": BUNDLED_VERSION,
    "model": "gpt-4o",
    "family": "gpt4o",
    "family_known": True,
    "release_date": "2024-11-20",
    "release_date_source": "catalogue",
    "basis": "known model",
    "known_model": "gpt-4o",
    "base_model": None,
    "derivation": None,
    "release_date_sd_months": None,
    "note": None,
    "reason": "known model gpt-4o: family gpt4o, release date 2024-11-20 (catalogue)",
}
QWEN3_32B = {  # what a model derived from qwen3-32b is folded in with
    "family": "qwen3",
    "family_known": True,
    "release_date": "2025-04-29",
    "release_date_source": "catalogue",
    "basis": "base model",
    "known_model": None,
    "base_model": "qwen3-32b",
    "release_date_sd_months": None,
    "note": None,
}


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


def side(app: RunningApp, query: str) -> tuple[int, Any]:
    answer = app.get(f"/api/side?{query}")
    assert answer.headers["Content-Type"] == "application/json; charset=utf-8"
    return answer.status, answer.json()


def test_a_known_model_keeps_its_own_date_and_family(app: RunningApp, bp: BenchPress) -> None:
    status, body = side(app, "model=gpt-4o")
    assert status == 200
    assert body == GPT_4O
    assert body == {"version": bp.version, **bp.side_for("gpt-4o")[0].as_dict()}
    pinned = side(app, f"model=gpt-4o&version={BUNDLED_VERSION}")
    assert pinned == (200, GPT_4O)


def test_a_provider_qualified_name_is_the_known_model(app: RunningApp, bp: BenchPress) -> None:
    try:
        bp.resolve_model("openai/gpt-4o")
    except UnknownNameError:
        pytest.skip("provider-qualified names do not resolve in this checkout yet")
    assert side(app, "model=" + quote("openai/gpt-4o", safe="")) == (
        200,
        {**GPT_4O, "model": "openai/gpt-4o"},
    )


def test_a_fine_tune_takes_its_bases_side_information(app: RunningApp) -> None:
    named = side(app, "model=qwen3-32b-sft-v2")
    assert named == (
        200,
        {
            "version": BUNDLED_VERSION,
            "model": "qwen3-32b-sft-v2",
            **QWEN3_32B,
            "derivation": "fine-tune, from the name",
            "reason": "base qwen3-32b (fine-tune, from the name): family qwen3, release date "
            "2025-04-29 (catalogue)",
        },
    )
    given = side(app, "model=acme-merge&base=qwen3-32b")
    assert given == (
        200,
        {
            "version": BUNDLED_VERSION,
            "model": "acme-merge",
            **QWEN3_32B,
            "derivation": "given",
            "reason": "base qwen3-32b (given): family qwen3, release date 2025-04-29 (catalogue)",
        },
    )


def test_an_unknown_name_gives_a_family_and_a_date_to_infer(app: RunningApp) -> None:
    """No probes yet, so the date to infer from them has no value."""
    assert side(app, "model=my-model") == (
        200,
        {
            "version": BUNDLED_VERSION,
            "model": "my-model",
            "family": "my-model",
            "family_known": False,
            "release_date": None,
            "release_date_source": "inferred from the probes",
            "basis": "name",
            "known_model": None,
            "base_model": None,
            "derivation": None,
            "release_date_sd_months": None,
            "note": None,
            "reason": "family my-model (not in the fit: population prior), release date "
            "inferred from the scores",
        },
    )
    status, nameless = side(app, "")
    assert status == 200
    assert nameless["basis"] == "no name" and nameless["family"] is None
    assert nameless["reason"] == (
        "no family (no model name given), release date inferred from the scores"
    )


def test_given_family_and_date_win(app: RunningApp) -> None:
    status, body = side(app, "model=gpt-4o&family=qwen3&release_date=2024-05-13")
    assert status == 200
    assert body == {
        **GPT_4O,
        "family": "qwen3",
        "release_date": "2024-05-13",
        "release_date_source": "given",
        "reason": "known model gpt-4o: family qwen3, release date 2024-05-13 (given)",
    }


def test_a_private_models_name_is_read_without_its_prefix(app: RunningApp) -> None:
    status, body = side(app, "model=private:qwen3-32b-sft")
    assert status == 200
    assert body["model"] == "qwen3-32b-sft" and body["base_model"] == "qwen3-32b"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("model=x&release_date=soon", "release_date must be a date (YYYY-MM-DD), got 'soon'"),
        (
            "model=x&release_date=2025-13-01",
            "release_date must be a date (YYYY-MM-DD), got '2025-13-01'",
        ),
        (
            "model=x&base=qwen9-32b",
            "unknown model 'qwen9-32b'; did you mean: qwen3-32b, qwen2.5-32b, qwen1.5-32b, "
            "qwen2-72b, qwen-2.5-32b? (parameter 'base')",
        ),
        ("model=" + "x" * 201, "parameter 'model' is longer than 200 characters"),
        ("base=" + "q" * 201, "parameter 'base' is longer than 200 characters"),
        (
            "model=x&scores=hle=20",
            "unknown parameter 'scores' for /api/side; expected: base, family, model, "
            "release_date, version",
        ),
        ("model=x&model=y", "parameter 'model' is given more than once"),
        (
            "model=x&version=../../etc",
            "not a snapshot version: '../../etc' (expected e.g. 2026.11.30.1)",
        ),
    ],
)
def test_bad_side_requests_are_400_with_the_reason(
    app: RunningApp, query: str, message: str
) -> None:
    assert side(app, query) == (400, {"error": message})


def test_side_is_get_only(app: RunningApp) -> None:
    answer = app.post("/api/side", {"model": "gpt-4o"})
    assert answer.status == 405
    assert answer.json() == {"error": "/api/side accepts GET only"}


# --------------------------------------------------------------------------- /api/predict
def test_predict_uses_and_reports_a_known_models_side(app: RunningApp, bp: BenchPress) -> None:
    body = app.post("/api/predict", {"scores": PROBES, "model": "gpt-4o"}).json()
    expected = bp.predict(PROBES, model="gpt-4o")
    assert body["side"] == {key: value for key, value in GPT_4O.items() if key != "version"}
    assert body["side"] == expected.side.as_dict()
    swe = {row["benchmark"]: row for row in body["predictions"]}["swe_bench_verified"]
    assert swe["score"] == expected["swe_bench_verified"].score


def test_predict_takes_a_base(app: RunningApp, bp: BenchPress) -> None:
    body = app.post(
        "/api/predict", {"scores": PROBES, "model": "acme-merge", "base": "qwen3-32b"}
    ).json()
    expected = bp.predict(PROBES, model="acme-merge", base="qwen3-32b")
    assert body["side"] == {
        "model": "acme-merge",
        **QWEN3_32B,
        "derivation": "given",
        "reason": "base qwen3-32b (given): family qwen3, release date 2025-04-29 (catalogue)",
    }
    got = {row["benchmark"]: row["score"] for row in body["predictions"]}
    assert got == {b: p.score for b, p in expected.items()}
    # the same as a GET with the query string
    query = "scores=gpqa_diamond=80,hle=20,mmlu_pro=80&model=acme-merge&base=qwen3-32b"
    assert app.get(f"/api/predict?{query}").json()["side"] == body["side"]


def test_predict_reports_an_inferred_date_with_its_spread(app: RunningApp, bp: BenchPress) -> None:
    body = app.post("/api/predict", {"scores": PROBES, "model": "my-model"}).json()
    expected = bp.predict(PROBES, model="my-model").side
    assert body["side"]["release_date_source"] == "inferred from the probes"
    assert body["side"]["release_date"] == expected.release_date
    assert body["side"]["release_date_sd_months"] == pytest.approx(expected.release_date_sd_months)
    assert body["side"]["reason"] == expected.describe()
    assert "inferred from the probes: " in body["side"]["reason"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"release_date": "soon"}, "release_date must be a date (YYYY-MM-DD), got 'soon'"),
        (
            {"base": "qwen9-32b"},
            "unknown model 'qwen9-32b'; did you mean: qwen3-32b, qwen2.5-32b, qwen1.5-32b, "
            "qwen2-72b, qwen-2.5-32b? (parameter 'base')",
        ),
        ({"base": "b" * 201}, "parameter 'base' is longer than 200 characters"),
        ({"base": 7}, "parameter 'base' must be a string, got int"),
    ],
)
def test_predict_refuses_bad_side_information(
    app: RunningApp, extra: dict[str, Any], message: str
) -> None:
    answer = app.post("/api/predict", {"scores": PROBES, "model": "x", **extra})
    assert answer.status == 400
    assert answer.json() == {"error": message}
