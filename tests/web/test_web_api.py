"""The JSON API over real HTTP: same answers and messages as the Python API."""

from __future__ import annotations

import dataclasses
from urllib.parse import quote

import pytest

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from tests.web.conftest import BUNDLED_VERSION, HOSTILE_MODELS, HOSTILE_VERSION, RunningApp

PROBES = {"gpqa_diamond": 80.0, "mmlu_pro": 80.0}
PREDICTION_FIELDS = {
    "benchmark",
    "score",
    "low",
    "high",
    "level",
    "observed",
    "p_within_5",
    "confidence",
}


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


def test_versions_lists_the_bundled_snapshot(app: RunningApp, bp: BenchPress) -> None:
    answer = app.get("/api/versions")
    assert answer.status == 200
    assert answer.headers["Content-Type"] == "application/json; charset=utf-8"
    doc = answer.json()
    assert doc["latest"] == BUNDLED_VERSION
    (only,) = doc["versions"]
    counts = bp.manifest["counts"]
    assert only == {
        "version": BUNDLED_VERSION,
        "published_at": bp.manifest["published_at"],
        "content_hash": bp.manifest["content_hash"],
        "parent": bp.manifest["parent"],
        "models": counts["models"],
        "benchmarks": counts["benchmarks"],
        "cells": counts["cells"],
        "store": "bundled",
    }


def test_snapshot_summary_models_and_benchmarks(app: RunningApp, bp: BenchPress) -> None:
    doc = app.get(f"/api/snapshot?version={BUNDLED_VERSION}").json()
    assert doc["version"] == BUNDLED_VERSION
    assert doc["manifest"]["content_hash"] == bp.manifest["content_hash"]
    assert doc["manifest"]["quality"] == bp.manifest["quality"]
    assert [m["model_id"] for m in doc["models"]] == bp.models
    assert [b["benchmark_id"] for b in doc["benchmarks"]] == bp.benchmarks
    gpqa = next(b for b in doc["benchmarks"] if b["benchmark_id"] == "gpqa_diamond")
    assert gpqa["name"] == "GPQA Diamond" and gpqa["scale"] == "percent" and gpqa["probe"] is True
    assert set(doc["models"][0]) == {
        "model_id",
        "name",
        "n_cells",
        "n_sources",
        "in_fit",
        "release_date",
        "family",
        "date_source",
        "date_sources",
    }


def test_predict_get_equals_the_python_api(app: RunningApp, bp: BenchPress) -> None:
    doc = app.get("/api/predict?scores=gpqa_diamond=80,mmlu_pro=80&level=0.8").json()
    expected = bp.predict(PROBES, level=0.8)
    assert doc["version"] == BUNDLED_VERSION and doc["level"] == 0.8
    assert doc["probes"] == PROBES
    assert [row["benchmark"] for row in doc["predictions"]] == sorted(expected)
    for row in doc["predictions"]:
        assert set(row) == PREDICTION_FIELDS
        assert row == expected[row["benchmark"]].as_dict()  # exact floats, through JSON


def test_predict_targets_as_in_python(app: RunningApp, bp: BenchPress) -> None:
    query = "scores=gpqa_diamond=80,mmlu_pro=80&targets=swe_bench_verified,AIME%202025"
    doc = app.get(f"/api/predict?{query}").json()
    expected = bp.predict(PROBES, targets=["swe_bench_verified", "AIME 2025"])
    assert (
        [row["benchmark"] for row in doc["predictions"]]
        == sorted(expected)
        == [
            "aime_2025",
            "swe_bench_verified",
        ]
    )
    profile = app.get("/api/predict?scores=gpqa_diamond=80&targets=coding_assistant").json()
    assert "swe_bench_verified" in {row["benchmark"] for row in profile["predictions"]}
    typo = app.get("/api/predict?scores=gpqa_diamond=80&targets=reasonin")
    assert typo.status == 400 and "unknown profile or benchmark 'reasonin'" in typo.json()["error"]


def test_predict_post_json_and_form(app: RunningApp, bp: BenchPress) -> None:
    expected = bp.predict({"GPQA Diamond": 70, "hle": 12.5})
    posted = app.post("/api/predict", {"scores": {"GPQA Diamond": 70, "hle": 12.5}})
    assert posted.status == 200
    doc = posted.json()
    assert doc["probes"] == {"gpqa_diamond": 70.0, "hle": 12.5}  # names resolved as in Python
    assert {r["benchmark"]: r for r in doc["predictions"]} == {
        b: p.as_dict() for b, p in expected.items()
    }
    form = app.post(
        "/api/predict",
        b"scores=gpqa_diamond%3D70%2Chle%3D12.5&level=0.9",
        content_type="application/x-www-form-urlencoded",
    )
    assert form.status == 200 and form.json()["predictions"] == doc["predictions"]


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        (
            "scores=gpqa_diamnd=80",
            400,
            "unknown benchmark 'gpqa_diamnd'; did you mean: gpqa_diamond, gpqa_main, gaia?",
        ),
        ("scores=gpqa_diamond=abc", 400, "score for 'gpqa_diamond' must be a number, got 'abc'"),
        (
            "scores=gpqa_diamond=180",
            400,
            "score for 'gpqa_diamond' must lie in 0-100 (percent), got 180",
        ),
        ("scores=gpqa_diamond=nan", 400, "score for 'gpqa_diamond' must be finite, got nan"),
        ("scores=gpqa_diamond", 400, "scores: expected name=value, got 'gpqa_diamond'"),
        ("scores=", 400, "scores is empty: give at least one benchmark=score pair"),
        (
            "scores=gpqa_diamond=80,GPQA%20Diamond=70",
            400,
            "benchmark 'gpqa_diamond' is given twice (as 'GPQA Diamond')",
        ),
        (
            "scores=gpqa_diamond=80&level=1.5",
            400,
            "level must lie strictly between 0 and 1, got 1.5",
        ),
        ("scores=gpqa_diamond=80&level=high", 400, "level must be a number, got 'high'"),
        (
            "scores=gpqa_diamond=80&levle=0.8",
            400,
            "unknown parameter 'levle' for /api/predict; expected: base, family, level, "
            "model, release_date, scores, targets, version",
        ),
        (
            "scores=gpqa_diamond=80&version=2020.01.01.1",
            404,
            f"snapshot 2020.01.01.1 not found; published versions: ['{BUNDLED_VERSION}']",
        ),
        (
            "scores=gpqa_diamond=80&version=../../etc",
            400,
            "not a snapshot version: '../../etc' (expected e.g. 2026.11.30.1)",
        ),
        (
            "scores=gpqa_diamond=80&scores=hle=20",
            400,
            "parameter 'scores' is given more than once",
        ),
    ],
)
def test_predict_errors_carry_the_python_messages(
    app: RunningApp, bp: BenchPress, query: str, status: int, message: str
) -> None:
    answer = app.get(f"/api/predict?{query}")
    assert answer.status == status
    assert answer.headers["Content-Type"] == "application/json; charset=utf-8"
    assert answer.json() == {"error": message}


def test_python_api_raises_the_same_messages(bp: BenchPress) -> None:
    """The messages above are the Python API's own, not look-alikes."""
    with pytest.raises(KeyError) as unknown:
        bp.predict({"gpqa_diamnd": 80})
    assert str(unknown.value) == (
        "unknown benchmark 'gpqa_diamnd'; did you mean: gpqa_diamond, gpqa_main, gaia?"
    )
    with pytest.raises(TypeError, match="must be a number, got 'abc'"):
        bp.predict({"gpqa_diamond": "abc"})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=r"must lie in 0-100 \(percent\), got 180"):
        bp.predict({"gpqa_diamond": 180})


def test_model_with_provenance_and_suggested_probes(app: RunningApp, bp: BenchPress) -> None:
    doc = app.get("/api/models/gpt-5.2").json()
    facts = bp.snapshot.models.filter(bp.snapshot.models["model_id"] == "gpt-5.2").row(
        0, named=True
    )
    assert doc["model"] == {
        "model_id": "gpt-5.2",
        "name": "GPT-5.2",
        "n_cells": facts["n_cells"],
        "n_sources": facts["n_sources"],
        "in_fit": True,
        "release_date": "2025-12-11",
        "family": "gpt5.2",
        "date_source": "catalogue",
        "date_sources": "arc_prize 2025-12-11; benchpress_matrix 2025-12-11; epoch_ai 2025-12-11",
    }
    cells = bp.scores().filter(bp.scores()["model_id"] == "gpt-5.2")
    assert [s["benchmark_id"] for s in doc["scores"]] == sorted(cells["benchmark_id"].to_list())
    gpqa = next(s for s in doc["scores"] if s["benchmark_id"] == "gpqa_diamond")
    row = cells.filter(cells["benchmark_id"] == "gpqa_diamond").row(0, named=True)
    expected = {k: v for k, v in row.items() if k != "model_id"}
    expected["fetched_at"] = row["fetched_at"].isoformat()
    assert gpqa == {**expected, "probe": True}
    assert (
        gpqa["source"] and gpqa["url"].startswith("https://") and len(gpqa["payload_sha256"]) == 64
    )
    # the five most widely reported of its observed, fitted benchmarks, most reported first
    reported = dict(bp.snapshot.benchmarks.select("benchmark_id", "n_cells").iter_rows())
    usable = sorted(
        (b for b in cells["benchmark_id"].to_list() if b in bp.fit_benchmarks_),
        key=lambda b: (-reported[b], b),
    )
    assert doc["suggested_probes"] == usable[:5]


def test_unknown_model_is_404_with_close_matches(app: RunningApp, bp: BenchPress) -> None:
    answer = app.get("/api/models/gpt-5.3-typo")
    assert answer.status == 404
    with pytest.raises(KeyError) as raised:
        bp.resolve_model("gpt-5.3-typo")
    assert answer.json() == {"error": str(raised.value)}
    assert "did you mean" in answer.json()["error"]


def test_matrix_observed_and_predicted(app: RunningApp, bp: BenchPress) -> None:
    doc = app.get("/api/matrix").json()
    view = bp.matrix()
    assert doc["models"] == bp.fit_models_ and doc["benchmarks"] == bp.fit_benchmarks_
    assert doc["models_outside_fit"] == len(view.models) - len(bp.fit_models_)
    i, j = doc["models"].index("gpt-5.2"), doc["benchmarks"].index("gpqa_diamond")
    vi, vj = view.models.index("gpt-5.2"), view.benchmarks.index("gpqa_diamond")
    assert doc["observed"][i][j] == round(view.values[vi, vj], 4)
    assert doc["scales"][j] == view.scales[vj]
    observed = sum(v is not None for row in doc["observed"] for v in row)
    in_block = bp.scores().filter(
        bp.scores()["model_id"].is_in(bp.fit_models_)
        & bp.scores()["benchmark_id"].is_in(bp.fit_benchmarks_)
    )
    assert observed == in_block.height
    assert all(v is not None for row in doc["predicted"] for v in row)  # every cell is fitted


def test_cell_provenance_fit_and_conflicts(app: RunningApp, bp: BenchPress) -> None:
    doc = app.get("/api/cell?model=deepseek-r1-0528&benchmark=GPQA%20Diamond").json()
    assert doc["model"]["model_id"] == "deepseek-r1-0528"
    assert doc["benchmark"]["benchmark_id"] == "gpqa_diamond"
    observation = doc["observation"]
    assert observation["score"] == 81.0 and observation["source"] == "benchpress_matrix"
    assert observation["url"].startswith("https://")
    assert len(observation["payload_sha256"]) == 64
    assert observation["fetched_at"].startswith("20")
    fitted = doc["fitted"]
    assert fitted["low"] <= fitted["score"] <= fitted["high"] and fitted["level"] == 0.9
    (conflict,) = doc["conflicts"]  # Epoch's own GPQA run disagrees by more than 3 points
    assert conflict["chosen_score"] == 81.0 and conflict["chosen_source"] == "benchpress_matrix"
    assert conflict["other_source"] == "epoch_ai"
    assert conflict["other_score"] == pytest.approx(76.32575757575758)
    assert conflict["difference"] == pytest.approx(4.674242424242422)
    assert conflict["other_row_ref"] == "gpqa_diamond.csv line 55"
    missing = app.get("/api/cell?model=deepseek-r1-0528&benchmark=no_such_benchmark")
    assert missing.status == 404 and missing.json()["error"].startswith("unknown benchmark")
    lacking = app.get("/api/cell?model=deepseek-r1-0528")
    assert lacking.status == 400 and lacking.json() == {
        "error": "parameter 'benchmark' is required"
    }


def test_compare_known_models(app: RunningApp, bp: BenchPress) -> None:
    doc = app.get("/api/compare?models=gpt-5.2,Claude%20Opus%204.5&benchmarks=gpqa_diamond").json()
    assert [m["model_id"] for m in doc["models"]] == ["gpt-5.2", "claude-opus-4.5"]
    assert [b["benchmark_id"] for b in doc["benchmarks"]] == ["gpqa_diamond"]
    (row,) = doc["rows"]
    assert row["benchmark"] == "gpqa_diamond"
    assert row["values"] == [
        {"score": 92.4, "low": 92.4, "high": 92.4, "observed": True},
        {"score": 87.0, "low": 87.0, "high": 87.0, "observed": True},
    ]
    every = app.get("/api/compare?models=gpt-5.2,gemini-3-pro").json()
    assert [b["benchmark_id"] for b in every["benchmarks"]] == bp.fit_benchmarks_
    predicted = [v for r in every["rows"] for v in r["values"] if not v["observed"]]
    assert predicted and all(v["low"] <= v["score"] <= v["high"] for v in predicted)
    # an unknown name is listed with its close matches, the others compared; alone, refused
    partly = app.get("/api/compare?models=gpt-5.2,nobody").json()
    assert [m["model_id"] for m in partly["models"]] == ["gpt-5.2"]
    assert [u["name"] for u in partly["unknown"]] == ["nobody"]
    bad = app.get("/api/compare?models=nobody")
    assert bad.status == 400 and bad.json()["error"].startswith("unknown model 'nobody'")
    assert app.get("/api/compare").json() == {
        "error": "parameter 'models' is required (comma-separated names)"
    }


def test_plots_spectrum_loadings_and_no_holdout(app: RunningApp, bp: BenchPress) -> None:
    from predictor.drift import benchmark_loadings, completed_z

    doc = app.get("/api/plots").json()
    values = bp.manifest["quality"]["singular_values"]
    assert doc["spectrum"]["singular_values"] == values
    assert doc["spectrum"]["cumulative_share"][-1] == pytest.approx(1.0)
    loadings = benchmark_loadings(completed_z(bp.snapshot)[0])
    points = doc["loadings"]["benchmarks"]
    assert [p["benchmark_id"] for p in points] == bp.fit_benchmarks_
    assert points[0]["x"] == pytest.approx(loadings[0, 0], abs=1e-6)
    assert points[0]["y"] == pytest.approx(loadings[0, 1], abs=1e-6)
    # the bundled manifest records no held-out pairs: its residuals.parquet's are served
    # (issue 16; pinned in test_web_first_hour.py)
    assert doc["holdout"]["cells"] == bp.manifest["quality"]["holdout_cells"]


def test_hostile_names_are_plain_json_strings(hostile_app: RunningApp) -> None:
    versions = hostile_app.get("/api/versions").json()
    assert [v["version"] for v in versions["versions"]] == [HOSTILE_VERSION, "2026.11.30.1"]
    doc = hostile_app.get("/api/models/gpt-5.2").json()
    assert doc["model"]["name"] == HOSTILE_MODELS["gpt-5.2"]
    older = hostile_app.get("/api/models/gpt-5.2?version=2026.11.30.1").json()
    assert older["model"]["name"] == "GPT-5.2"


def test_models_outside_the_fit_are_folded_in(bp: BenchPress) -> None:
    """A compare column for a model the fit lacks: its observed scores folded in as probes,
    with its own family and release date."""
    from predictor.web.api import _folded_cells

    own = bp.scores().filter(bp.scores()["model_id"] == "claude-haiku-4.5")
    probes = dict(own.select("benchmark_id", "score").iter_rows())
    cells = _folded_cells(bp, "claude-haiku-4.5", 0.9)
    expected = bp.predict(probes, level=0.9, model="claude-haiku-4.5")
    assert expected.side.known_model == "claude-haiku-4.5"
    assert cells.keys() == expected.keys()
    for benchmark, cell in cells.items():
        p = expected[benchmark]
        assert cell == {"score": p.score, "low": p.low, "high": p.high, "observed": p.observed}


@pytest.mark.parametrize(
    "recorded",
    [
        [[50.0, 70.0, 90.0], [55.0, 66.0, float("nan")]],  # the pipeline's (actual, predicted)
        {"actual": [50.0, 70.0, 90.0], "predicted": [55.0, 66.0, float("nan")]},
    ],
)
def test_holdout_pairs_from_the_manifest(recorded: object) -> None:
    from predictor.web.figures import holdout

    manifest = {"quality": {"holdout_pairs": recorded, "holdout_medae": 4.5}}
    assert holdout(manifest) == {"pairs": [[50.0, 55.0], [70.0, 66.0]], "medae": 4.5, "cells": 2}
    assert holdout({"quality": {"holdout_pairs": [[1.0], [2.0, 3.0]]}}) is None
    assert holdout({"quality": {}}) is None


# --------------------------------------------------------------------------- probe picking
SELECTION_FIELDS = {"benchmarks", "columns", "expected_medae", "costs", "total_cost"}
PROBE_FIELDS = {
    "version",
    "k",
    "budget",
    "profile",
    "targets",
    "allowlist",
    "cost_unit",
    *SELECTION_FIELDS,
    "baseline_medae",
    "steps",
}
STEP_FIELDS = {
    "step",
    "benchmark",
    "column",
    "expected_medae",
    "cost",
    "cumulative_cost",
    "lm_eval_task",
    "inspect_task",
}


def test_profiles_and_costs(app: RunningApp, bp: BenchPress) -> None:
    from predictor.trust.next_benchmark import benchmark_costs
    from predictor.trust.profiles import PROFILES

    doc = app.get("/api/profiles").json()
    assert set(doc) == {
        "version",
        "profiles",
        "default_targets",
        "default_k",
        "max_k",
        "cost_unit",
        "cost_note",
        "costs",
    }
    assert doc["version"] == BUNDLED_VERSION
    assert [p["name"] for p in doc["profiles"]] == list(PROFILES)
    for entry in doc["profiles"]:
        members = PROFILES[entry["name"]]
        assert entry["benchmarks"] == [b for b in members if b in bp.fit_benchmarks_]
        assert entry["missing"] == [b for b in members if b not in bp.fit_benchmarks_]
    assert doc["default_targets"] in PROFILES and doc["default_k"] == 5 and doc["max_k"] == 20
    assert doc["cost_unit"] == "standard benchmark runs"
    assert doc["cost_note"].startswith("1 = one typical multiple-choice or short-answer suite")
    assert list(doc["costs"]) == bp.fit_benchmarks_
    assert list(doc["costs"].values()) == benchmark_costs(bp).tolist()
    assert doc["costs"]["swe_bench_verified"] == 4.0 and doc["costs"]["gpqa_diamond"] == 1.0
    bad = app.get("/api/profiles?k=5")
    assert bad.status == 400
    assert bad.json() == {"error": "unknown parameter 'k' for /api/profiles; expected: version"}


def test_probes_equal_the_python_api(app: RunningApp, bp: BenchPress) -> None:
    from predictor.trust.profiles import profile

    answer = app.get("/api/probes?k=5&budget=6&targets=coding_assistant")
    assert answer.status == 200
    doc = answer.json()
    assert set(doc) == PROBE_FIELDS
    expected = bp.select_probes(k=5, budget=6, targets="coding_assistant")
    assert {key: doc[key] for key in SELECTION_FIELDS} == {
        key: value for key, value in expected.as_dict().items() if key in SELECTION_FIELDS
    }
    assert doc["baseline_medae"] == expected.baseline_error
    assert doc["steps"] == expected.to_frame().to_dicts()
    assert all(set(step) == STEP_FIELDS for step in doc["steps"])
    assert doc["version"] == BUNDLED_VERSION
    assert doc["k"] == 5 and doc["budget"] == 6.0 and doc["profile"] == "coding_assistant"
    assert doc["targets"] == profile("coding_assistant", bp.fit_benchmarks_)
    assert doc["allowlist"] is None and doc["cost_unit"] == "standard benchmark runs"
    assert doc["total_cost"] <= 6.0 and len(doc["benchmarks"]) == len(expected.columns) >= 1


def test_probes_names_resolve_and_smaller_k_is_a_prefix(app: RunningApp, bp: BenchPress) -> None:
    """Benchmark names as typed; a cached longer run answers a smaller k exactly."""
    allow = ["GPQA Diamond", "hle", "mmlu_pro", "aime_2025", "ifeval", "mmlu"]
    ids = [bp.resolve_benchmark(a) for a in allow]
    query = "targets=livecodebench,SWE-bench%20Verified&allowlist=" + quote(
        ",".join(allow), safe=","
    )
    two = app.get(f"/api/probes?k=2&{query}").json()
    one = app.get(f"/api/probes?k=1&{query}").json()
    targets = ["livecodebench", "swe_bench_verified"]
    for doc, k in ((two, 2), (one, 1)):
        expected = bp.select_probes(k=k, targets=targets, allowlist=ids)
        assert doc["benchmarks"] == expected.benchmarks and len(doc["benchmarks"]) == k
        assert doc["expected_medae"] == expected.errors
        assert doc["steps"] == expected.to_frame().to_dicts()
        assert doc["targets"] == targets and doc["profile"] is None
        assert doc["allowlist"] == ids
    assert one["benchmarks"] == two["benchmarks"][:1]


def test_probes_budget_allows_fewer_than_k(app: RunningApp, bp: BenchPress) -> None:
    doc = app.get("/api/probes?k=5&budget=3&targets=Coding%20assistant").json()
    expected = bp.select_probes(k=5, budget=3, targets="coding_assistant")
    assert doc["profile"] == "coding_assistant"  # the profile's name as people write it
    assert doc["benchmarks"] == expected.benchmarks and len(expected.benchmarks) < 5
    assert doc["total_cost"] == expected.total_cost <= 3


def test_probes_picker_cache_serves_smaller_k_without_searching(bp: BenchPress) -> None:
    from predictor.web import picker

    calls: list[object] = []

    def run(**kwargs: object) -> object:
        calls.append(kwargs["k"])
        return bp.select_probes(**kwargs)  # type: ignore[arg-type]

    def pick(k: int) -> object:
        wanted = picker.request(bp, {"targets": "chat", "k": str(k), "budget": "2"})
        return picker.select(bp, wanted, run=run)

    picker.clear_cache()
    first = pick(3)
    assert first == bp.select_probes(k=3, budget=2, targets="chat")
    assert len(first.columns) == 2  # two probes of cost 1: the budget stops the search
    one = pick(1)
    assert one.benchmarks == first.benchmarks[:1] and (one.requested, one.stopped) == (1, None)
    # the run stopped short of k: a larger k picks nothing more, and says the budget stopped it
    assert pick(6) == dataclasses.replace(first, requested=6)
    assert first.stopped == "budget"
    assert calls == [3]
    assert picker.request(bp, {"targets": "all"}).targets is None
    assert picker.request(bp, {}).targets is None and picker.request(bp, {}).k == 5


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "targets=chat&budget=0.1",
            "budget 0.1 is too small: the cheapest allowed probe costs 0.25 standard benchmark "
            "runs (e.g. aider_code_editing_whole)",
        ),
        (
            "targets=chat&budget=3&allowlist=swe_bench_verified,chatbot_arena_elo",
            "budget 3 is too small: the cheapest allowed probe costs 4 standard benchmark runs "
            "(e.g. swe_bench_verified)",
        ),
        ("targets=chat&budget=0", "budget must be a positive number, got '0'"),
        ("targets=chat&budget=-2", "budget must be a positive number, got '-2'"),
        ("targets=chat&budget=cheap", "budget must be a number, got 'cheap'"),
        ("targets=chat&budget=inf", "budget must be a positive number, got 'inf'"),
        ("targets=chat&k=0", "k must be >= 1, got 0"),
        ("targets=chat&k=2.5", "k must be a whole number, got '2.5'"),
        ("targets=chat&k=21", "k must be at most 20, got 21"),
        ("targets=chat&k=five", "k must be a number, got 'five'"),
        (
            "targets=codng",
            "targets: unknown profile or benchmark 'codng'; profiles: coding_assistant, chat, "
            "reasoning, general_assistant; did you mean: coding_assistant, scicode, "
            "facts_grounding?",
        ),
        (
            "targets=gpqa_diamnd,hle",
            "targets: unknown benchmark 'gpqa_diamnd'; did you mean: gpqa_diamond, gpqa_main, "
            "gaia?",
        ),
        ("targets=chat,hle", "targets: give a profile ('chat') alone, not in a list of benchmarks"),
        (
            "targets=chat&allowlist=hle,gpqa_diamnd",
            "allowlist: unknown benchmark 'gpqa_diamnd'; did you mean: gpqa_diamond, gpqa_main, "
            "gaia?",
        ),
        (
            "targets=chat&kk=5",
            "unknown parameter 'kk' for /api/probes; expected: allowlist, budget, k, targets, "
            "version",
        ),
    ],
)
def test_probes_errors_name_the_parameter(app: RunningApp, query: str, message: str) -> None:
    answer = app.get(f"/api/probes?{query}")
    assert answer.status == 400
    assert answer.headers["Content-Type"] == "application/json; charset=utf-8"
    assert answer.json() == {"error": message}


def test_probes_outside_the_fit_are_named(app: RunningApp, bp: BenchPress) -> None:
    outside = next(b for b in bp.benchmarks if b not in bp.fit_benchmarks_)
    for query, parameter, role in (
        (f"targets={outside}", "targets", "target"),
        (f"targets=chat&allowlist=hle,{outside}", "allowlist", "probe"),
    ):
        answer = app.get(f"/api/probes?{query}")
        assert answer.status == 400
        assert answer.json() == {
            "error": f"{parameter}: benchmark {outside!r} has too few observations in snapshot "
            f"{BUNDLED_VERSION} to be used as a {role}"
        }
    assert app.post("/api/probes", {"targets": "chat"}).status == 405
