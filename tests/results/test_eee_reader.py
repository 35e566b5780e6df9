"""Every Eval Ever records: every vendored record read (rows pinned per leaderboard folder),
validated against its own schema version, and every kind of bad record refused by name."""

from __future__ import annotations

import copy
import csv
import hashlib
import json
from pathlib import Path

import polars as pl
import pytest

from predictor.results import ResultsError, eee, probe_scores, read_results
from predictor.results.mapping import LOWER_IS_BETTER_NOTE, load_map, parse_overrides

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "eval_formats"
RECORDS = FIXTURES / "eee" / "records"
BENCHMARKS_CSV = REPO / "pipelines" / "identity" / "benchmarks.csv"
COLUMNS = ("model", "task", "metric", "raw_score", "unit", "score", "status", "benchmark_id")

MATTER = RECORDS / "hfopenllm_v2/0-hero/Matter-0.2-7B-DPO/0d7928c3-c769-474e-8249-7a5c70c4c559.json"
GAIA_HIGH = (
    RECORDS
    / "hal-gaia/anthropic/claude-3-7-sonnet-20250219/101c697f-6b90-41dc-8d00-30481e0ab429.json"
)
GAIA_HIGH_DEEP_RESEARCH = (
    RECORDS
    / "hal-gaia/anthropic/claude-3-7-sonnet-20250219/2905b072-b13a-4585-bdc9-ad2b8ed213bf.json"
)


def rows(frame: pl.DataFrame, columns: tuple[str, ...] = COLUMNS) -> list[tuple]:
    """The frame's rows with floats rounded off their last binary digits."""
    return [
        tuple(round(v, 9) if isinstance(v, float) else v for v in row)
        for row in frame.select(columns).iter_rows()
    ]


@pytest.fixture(scope="module")
def everything() -> pl.DataFrame:
    """All 360 vendored records, read once (validation makes this the slow part)."""
    frame = read_results(RECORDS)
    return frame.with_columns(
        pl.col("file")
        .map_elements(lambda p: Path(p).relative_to(RECORDS).parts[0], pl.String)
        .alias("board")
    )


def record(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def write(tmp_path: Path, doc: dict, name: str = "record.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- the whole folder
def test_every_record_in_the_folder_is_read(everything: pl.DataFrame) -> None:
    files = sorted(RECORDS.rglob("*.json"))
    assert len(files) == 360
    # read_results refuses all or nothing: a frame means no record was refused, and each
    # record contributes its rows (none is dropped)
    assert sorted(everything["file"].unique().to_list()) == sorted(str(f) for f in files)
    per_board = dict(
        everything.group_by("board")
        .agg(pl.col("file").n_unique(), pl.len())
        .select("board", pl.struct("file", "len"))
        .iter_rows()
    )
    assert {b: (v["file"], v["len"]) for b, v in per_board.items()} == {
        "global-mmlu-lite": (24, 24 * 19),
        "hal-assistantbench": (15, 15),
        "hal-corebench-hard": (49, 49),
        "hal-gaia": (32, 32 * 4),
        "hal-online-mind2web": (22, 22),
        "hal-scicode": (33, 33),
        "hal-scienceagentbench": (23, 23),
        "hal-swebench-verified-mini": (33, 33),
        "hal-taubench-airline": (26, 26),
        "hal-usaco": (13, 13),
        "hfopenllm_v2": (61, 61 * 6),
        "livecodebenchpro": (29, 29 * 3),
    }


def test_status_and_benchmark_counts_over_the_folder(everything: pl.DataFrame) -> None:
    counts = everything.group_by("board", "status", "benchmark_id").len()
    got = {(b, s, i): n for b, s, i, n in counts.iter_rows()}
    assert got == {
        ("global-mmlu-lite", "mapped", "global_mmlu_lite"): 24,
        ("global-mmlu-lite", "unmapped", None): 24 * 18,
        ("hal-assistantbench", "unmapped", None): 15,
        ("hal-corebench-hard", "unmapped", None): 49,
        ("hal-gaia", "mapped", "gaia"): 32,
        ("hal-gaia", "unmapped", None): 32 * 3,
        ("hal-online-mind2web", "unmapped", None): 22,
        ("hal-scicode", "unmapped", None): 33,
        ("hal-scienceagentbench", "unmapped", None): 23,
        ("hal-swebench-verified-mini", "unmapped", None): 33,
        ("hal-taubench-airline", "mapped", "tau_bench_airline"): 26,
        ("hal-usaco", "unmapped", None): 13,
        **{
            ("hfopenllm_v2", "mapped", f"open_llm_{b}"): 61
            for b in ("ifeval", "bbh", "math_lvl5", "gpqa", "musr", "mmlu_pro")
        },
        ("livecodebenchpro", "unmapped", None): 29 * 3,
    }
    assert everything.filter(pl.col("status") == "mapped")["score"].null_count() == 0
    assert set(everything["unit"]) == {"fraction"}
    assert set(everything["format"]) == {"eee"}


def test_each_record_is_validated_against_its_own_schema_version(
    everything: pl.DataFrame,
) -> None:
    versions = everything.group_by("board").agg(pl.col("tool_version").unique())
    got = {b: v for b, v in versions.iter_rows()}
    assert got == {b: (["0.2.2"] if b.startswith("hal-") else ["0.2.0"]) for b in got}
    # the 0.2.2 records pass the published 0.2.2 schema and fail 0.3.0 (which requires
    # deployment facts they predate): each version really gets its own schema
    doc = record(GAIA_HIGH)
    assert not list(eee._validator("0.2.2").iter_errors(doc))
    assert list(eee._validator("0.3.0").iter_errors(doc))


# ----------------------------------------------------------------------------- pinned rows
PINNED = {
    "global-mmlu-lite/c8ab4e94": [
        (
            "alibaba/qwen3-235b-a22b-instruct-2507",
            "global-mmlu-lite/Global MMLU Lite",
            "score",
            0.8798,
            "fraction",
            87.98,
            "mapped",
            "global_mmlu_lite",
        ),
        (
            "alibaba/qwen3-235b-a22b-instruct-2507",
            "global-mmlu-lite/Culturally Sensitive",
            "score",
            0.8522,
            "fraction",
            None,
            "unmapped",
            None,
        ),
        (
            "alibaba/qwen3-235b-a22b-instruct-2507",
            "global-mmlu-lite/English",
            "score",
            0.89,
            "fraction",
            None,
            "unmapped",
            None,
        ),
    ],
    "hal-assistantbench/1972de5d": [
        (
            "Claude-3.7 Sonnet (February 2025) (Browser-Use)",
            "hal-assistantbench/AssistantBench",
            "score",
            0.1669,
            "fraction",
            None,
            "unmapped",
            None,
        ),
    ],
    "hal-corebench-hard/13cd311f": [
        (
            "Claude-3.7 Sonnet (February 2025) (CORE-Agent)",
            "hal-corebench-hard/CORE-Bench Hard",
            "score",
            0.3556,
            "fraction",
            None,
            "unmapped",
            None,
        ),
    ],
    "hal-gaia/101c697f": [
        (
            "Claude-3.7 Sonnet High (February 2025) (HAL Generalist Agent)",
            "hal-gaia/GAIA",
            "score",
            0.6424,
            "fraction",
            64.24,
            "mapped",
            "gaia",
        ),
        (
            "Claude-3.7 Sonnet High (February 2025) (HAL Generalist Agent)",
            "hal-gaia/GAIA - GAIA Level 1",
            "score",
            0.6792,
            "fraction",
            None,
            "unmapped",
            None,
        ),
        (
            "Claude-3.7 Sonnet High (February 2025) (HAL Generalist Agent)",
            "hal-gaia/GAIA - GAIA Level 2",
            "score",
            0.6395,
            "fraction",
            None,
            "unmapped",
            None,
        ),
        (
            "Claude-3.7 Sonnet High (February 2025) (HAL Generalist Agent)",
            "hal-gaia/GAIA - GAIA Level 3",
            "score",
            0.5769,
            "fraction",
            None,
            "unmapped",
            None,
        ),
    ],
    "hal-online-mind2web/64e650c5": [
        (
            "Claude-3.7 Sonnet (February 2025) (Browser-Use)",
            "hal-online-mind2web/Online Mind2Web",
            "score",
            0.3833,
            "fraction",
            None,
            "unmapped",
            None,
        ),
    ],
    "hal-scicode/1d197010": [
        (
            "Claude-3.7 Sonnet High (February 2025) (Scicode Tool Calling Agent)",
            "hal-scicode/Scicode",
            "score",
            0.0462,
            "fraction",
            None,
            "unmapped",
            None,
        ),
    ],
    "hal-scienceagentbench/0a3944a4": [
        (
            "Claude-3.7 Sonnet (February 2025) (SAB Self-Debug)",
            "hal-scienceagentbench/ScienceAgentBench",
            "score",
            0.2255,
            "fraction",
            None,
            "unmapped",
            None,
        ),
    ],
    "hal-swebench-verified-mini/215a7369": [
        (
            "Claude-3.7 Sonnet (February 2025) (HAL Generalist Agent)",
            "hal-swebench-verified-mini/SWE-bench Verified Mini",
            "score",
            0.26,
            "fraction",
            None,
            "unmapped",
            None,
        ),
    ],
    "hal-taubench-airline/257e1c66": [
        (
            "Claude-3.7 Sonnet (February 2025) (HAL Generalist Agent)",
            "hal-taubench-airline/TAU-bench Airline",
            "score",
            0.56,
            "fraction",
            56.0,
            "mapped",
            "tau_bench_airline",
        ),
    ],
    "hal-usaco/238cc25e": [
        (
            "Claude-3.7 Sonnet (February 2025) (USACO Episodic + Semantic)",
            "hal-usaco/USACO",
            "score",
            0.2932,
            "fraction",
            None,
            "unmapped",
            None,
        ),
    ],
    "hfopenllm_v2/0d7928c3": [
        (
            "0-hero/Matter-0.2-7B-DPO",
            "hfopenllm_v2/IFEval",
            "score",
            0.3303,
            "fraction",
            33.03,
            "mapped",
            "open_llm_ifeval",
        ),
        (
            "0-hero/Matter-0.2-7B-DPO",
            "hfopenllm_v2/BBH",
            "score",
            0.3596,
            "fraction",
            35.96,
            "mapped",
            "open_llm_bbh",
        ),
        (
            "0-hero/Matter-0.2-7B-DPO",
            "hfopenllm_v2/MATH Level 5",
            "score",
            0.0144,
            "fraction",
            1.44,
            "mapped",
            "open_llm_math_lvl5",
        ),
        (
            "0-hero/Matter-0.2-7B-DPO",
            "hfopenllm_v2/GPQA",
            "score",
            0.2592,
            "fraction",
            25.92,
            "mapped",
            "open_llm_gpqa",
        ),
        (
            "0-hero/Matter-0.2-7B-DPO",
            "hfopenllm_v2/MUSR",
            "score",
            0.3814,
            "fraction",
            38.14,
            "mapped",
            "open_llm_musr",
        ),
        (
            "0-hero/Matter-0.2-7B-DPO",
            "hfopenllm_v2/MMLU-PRO",
            "score",
            0.1164,
            "fraction",
            11.64,
            "mapped",
            "open_llm_mmlu_pro",
        ),
    ],
    "livecodebenchpro/126326f3": [
        (
            "alibaba/qwen3-235b-a22b-thinking-2507",
            "livecodebenchpro/Hard Problems",
            "score",
            0.0,
            "fraction",
            None,
            "unmapped",
            None,
        ),
        (
            "alibaba/qwen3-235b-a22b-thinking-2507",
            "livecodebenchpro/Medium Problems",
            "score",
            0.126760563,
            "fraction",
            None,
            "unmapped",
            None,
        ),
        (
            "alibaba/qwen3-235b-a22b-thinking-2507",
            "livecodebenchpro/Easy Problems",
            "score",
            0.760563380,
            "fraction",
            None,
            "unmapped",
            None,
        ),
    ],
}


def test_a_sample_of_every_leaderboard_folder_gives_exactly_these_rows(
    everything: pl.DataFrame,
) -> None:
    boards = {Path(name).parts[0] for name in PINNED}
    assert boards == set(everything["board"])  # one pinned record in every folder
    for name, expected in PINNED.items():  # <folder>/<first 8 digits of the record's uuid>
        board, uuid = name.split("/")
        (path,) = RECORDS.glob(f"{board}/*/*/{uuid}-*.json")
        frame = everything.filter(pl.col("file") == str(path))
        if name.startswith("global-mmlu-lite/"):
            assert frame.height == 19
            keep = {r[1] for r in expected}
            frame = frame.filter(pl.col("task").is_in(keep))
        assert rows(frame) == expected, name


def test_provenance_of_a_record(everything: pl.DataFrame) -> None:
    frame = everything.filter(pl.col("file") == str(MATTER))
    assert set(frame["file_sha256"]) == {hashlib.sha256(MATTER.read_bytes()).hexdigest()}
    assert set(frame["tool"]) == {"HF Open LLM v2"}  # source_metadata.source_name
    assert set(frame["tool_version"]) == {"0.2.0"}
    # no evaluation timestamp: the record's retrieved_timestamp 1770682486.623709
    assert set(frame["evaluated_at"]) == {"2026-02-10T00:14:46+00:00"}
    assert frame["stderr"].null_count() == frame["n"].null_count() == frame.height
    gaia = everything.filter(pl.col("file") == str(GAIA_HIGH))
    assert set(gaia["tool"]) == {"HAL Leaderboard — GAIA"}


def test_hal_notes_say_the_score_is_an_agent_run(everything: pl.DataFrame) -> None:
    notes = dict(
        everything.filter(pl.col("status") == "mapped")
        .group_by("benchmark_id")
        .agg(pl.col("note").unique())
        .iter_rows()
    )
    for benchmark in ("gaia", "tau_bench_airline"):
        (note,) = notes[benchmark]
        assert note.startswith("HAL agent run: the model under the scaffold named in the model")
    assert notes["global_mmlu_lite"] == [
        "Kaggle's Global MMLU Lite leaderboard (one harness for every model); the matrix's "
        "global_mmlu_lite scores are vendor-reported"
    ]
    assert notes["open_llm_gpqa"] == [None]  # the same leaderboard as the matrix's scores
    scicode = everything.filter(pl.col("board") == "hal-scicode")
    assert set(scicode["status"]) == {"unmapped"}
    (note,) = set(scicode["note"])
    assert "subproblem accuracy" in note and "another metric" in note


def test_one_model_under_two_scaffolds_is_two_models() -> None:
    frame = read_results([GAIA_HIGH, GAIA_HIGH_DEEP_RESEARCH])
    assert probe_scores(frame, "Claude-3.7 Sonnet High (February 2025) (HAL Generalist Agent)") == {
        "gaia": pytest.approx(64.24)
    }
    assert probe_scores(
        frame, "Claude-3.7 Sonnet High (February 2025) (HF Open Deep Research)"
    ) == {"gaia": pytest.approx(35.76)}
    with pytest.raises(ResultsError, match="the files hold 2 models"):
        probe_scores(frame)


def test_a_record_whose_results_name_two_scaffolds_mixes_two_models(tmp_path: Path) -> None:
    doc = record(GAIA_HIGH)
    doc["evaluation_results"][2]["generation_config"]["additional_details"]["agent_scaffold"] = (
        "HF Open Deep Research"
    )
    error = refused(tmp_path, doc)
    assert error.problem == (
        "the file mixes 2 models (Claude-3.7 Sonnet High (February 2025) (HAL Generalist Agent), "
        "Claude-3.7 Sonnet High (February 2025) (HF Open Deep Research))"
    )


def test_the_table_lists_every_evaluation_of_the_folder_and_only_our_ids(
    everything: pl.DataFrame,
) -> None:
    table = load_map("eee")
    assert set(everything["task"]) == set(table)  # nothing falls through unlisted
    with BENCHMARKS_CSV.open(encoding="utf-8", newline="") as handle:
        ours = {row["benchmark_id"] for row in csv.DictReader(handle)}
    targets = {e.benchmark_id for entries in table.values() for e in entries if e.benchmark_id}
    assert targets == {
        "open_llm_ifeval",
        "open_llm_bbh",
        "open_llm_math_lvl5",
        "open_llm_gpqa",
        "open_llm_musr",
        "open_llm_mmlu_pro",
        "global_mmlu_lite",
        "gaia",
        "tau_bench_airline",
    }
    assert targets <= ours
    unlisted = [task for task, entries in table.items() if not entries[0].benchmark_id]
    assert all(table[t][0].note for t in unlisted)  # each says why it maps to nothing


def test_two_records_of_one_model_keep_both_rows(everything: pl.DataFrame) -> None:
    """LiveCodeBench Pro was scraped twice for gpt-5: two files, two dated rows per task."""
    frame = everything.filter(
        (pl.col("model") == "openai/gpt-5-2025-08-07")
        & (pl.col("task") == "livecodebenchpro/Easy Problems")
    ).sort("evaluated_at")
    assert rows(frame, ("raw_score", "evaluated_at")) == [
        (0.887323944, "2025-10-15T01:34:55+00:00"),
        (0.9014, "2026-02-10T00:27:18+00:00"),
    ]


# ----------------------------------------------------------------------------- units and values
def test_units_come_from_metric_config(tmp_path: Path) -> None:
    doc = record(MATTER)
    results = doc["evaluation_results"]
    results[0]["metric_config"].update(min_score=0, max_score=100)
    results[0]["score_details"]["score"] = 33.03
    results[1]["metric_config"].update(min_score=0, max_score=10)
    results[1]["score_details"]["score"] = 3.596
    frame = read_results(write(tmp_path, doc))
    assert rows(frame)[:2] == [
        (
            "0-hero/Matter-0.2-7B-DPO",
            "hfopenllm_v2/IFEval",
            "score",
            33.03,
            "percent",
            33.03,
            "mapped",
            "open_llm_ifeval",
        ),
        (
            "0-hero/Matter-0.2-7B-DPO",
            "hfopenllm_v2/BBH",
            "score",
            3.596,
            "value",
            3.596,
            "mapped",
            "open_llm_bbh",
        ),
    ]


def test_a_0_3_0_record_reads_with_its_metric_id_and_stderr(tmp_path: Path) -> None:
    doc = record(GAIA_HIGH)
    doc["schema_version"] = "0.3.0"
    doc["model_info"]["additional_details"].update(
        deployment_type="externally_managed", model_availability="closed_weights"
    )
    first, level_1 = doc["evaluation_results"][:2]
    first["metric_config"]["metric_id"] = "accuracy"
    first["score_details"]["uncertainty"] = {
        "standard_error": {"value": 0.0373},
        "num_samples": 165,
    }
    first["evaluation_timestamp"] = "2025-06-01T12:00:00Z"
    level_1["metric_config"]["max_score"] = "Infinity"  # 0.3.0: an open bound
    frame = read_results(write(tmp_path, doc))
    columns = ("task", "metric", "unit", "score", "stderr", "n", "evaluated_at", "status")
    assert rows(frame, columns)[:2] == [
        (
            "hal-gaia/GAIA",
            "accuracy",
            "fraction",
            64.24,
            3.73,
            165,
            "2025-06-01T12:00:00Z",
            "mapped",
        ),
        (
            "hal-gaia/GAIA - GAIA Level 1",
            "score",
            "value",
            None,
            None,
            None,
            "2026-04-28T09:00:46+00:00",
            "unmapped",
        ),
    ]
    assert set(frame["tool_version"]) == {"0.3.0"}


def test_minus_one_is_not_run_where_the_record_says_so(tmp_path: Path) -> None:
    doc = record(MATTER)
    doc["evaluation_results"][0]["metric_config"].update(
        score_type="levels", level_names=["fail", "pass"], has_unknown_level=True
    )
    doc["evaluation_results"][0]["score_details"]["score"] = -1
    frame = read_results(write(tmp_path, doc))
    assert rows(frame)[0] == (
        "0-hero/Matter-0.2-7B-DPO",
        "hfopenllm_v2/IFEval",
        "score",
        None,
        "value",
        None,
        "not_run",
        None,
    )
    helm = record(MATTER)
    helm["eval_library"] = {"name": "helm", "version": "0.5.4"}
    helm["evaluation_results"][3]["score_details"]["score"] = -1
    frame = read_results(write(tmp_path, helm, "helm.json"))
    assert rows(frame)[3] == (
        "0-hero/Matter-0.2-7B-DPO",
        "hfopenllm_v2/GPQA",
        "score",
        None,
        "fraction",
        None,
        "not_run",
        None,
    )
    assert "open_llm_gpqa" not in probe_scores(frame)


def test_a_lower_is_better_metric_is_not_mapped_onto_a_higher_is_better_benchmark(
    tmp_path: Path,
) -> None:
    doc = record(MATTER)
    doc["evaluation_results"][3]["metric_config"]["lower_is_better"] = True
    path = write(tmp_path, doc)
    frame = read_results(path)
    gpqa = frame.filter(pl.col("task") == "hfopenllm_v2/GPQA")
    assert rows(gpqa, ("status", "benchmark_id", "score", "note")) == [
        ("other_metric", None, None, LOWER_IS_BETTER_NOTE)
    ]
    assert "open_llm_gpqa" not in probe_scores(frame)
    mapped = read_results(path, parse_overrides(["hfopenllm_v2/GPQA=open_llm_gpqa"]))
    assert probe_scores(mapped)["open_llm_gpqa"] == pytest.approx(25.92)  # the user's call


def test_the_same_result_twice_is_one_row_two_scores_an_error(tmp_path: Path) -> None:
    doc = record(MATTER)
    doc["evaluation_results"].append(copy.deepcopy(doc["evaluation_results"][3]))
    assert read_results(write(tmp_path, doc)).height == 6
    doc["evaluation_results"][6]["score_details"]["score"] = 0.3
    path = write(tmp_path, doc)
    with pytest.raises(ResultsError) as caught:
        read_results(path)
    assert str(caught.value) == (
        f"{path}, evaluation_results[6].score_details.score: 'GPQA' (score) is scored twice: "
        "0.2592 in evaluation_results[3] and 0.3 here (a record holds one score per evaluation "
        "and metric; keep one)"
    )


# ----------------------------------------------------------------------------- bad records
def refused(tmp_path: Path, doc: object) -> ResultsError:
    path = write(tmp_path, doc)
    with pytest.raises(ResultsError) as caught:
        read_results(path)
    assert caught.value.path == str(path)
    return caught.value


def test_a_missing_required_field_is_named_by_its_json_path(tmp_path: Path) -> None:
    doc = record(MATTER)
    del doc["evaluation_results"][2]["metric_config"]["lower_is_better"]
    error = refused(tmp_path, doc)
    assert error.field == "evaluation_results[2].metric_config.lower_is_better"
    assert error.problem == (
        "not a valid Every Eval Ever 0.2.0 record: the required field 'lower_is_better' is missing"
    )
    assert "eval.schema.0.2.1.json" in error.hint
    doc = record(MATTER)
    del doc["source_metadata"]
    assert refused(tmp_path, doc).field == "source_metadata"


def test_a_wrong_type_is_named_by_its_json_path(tmp_path: Path) -> None:
    doc = record(MATTER)
    doc["evaluation_results"][0]["score_details"]["score"] = "0.3303"
    error = refused(tmp_path, doc)
    assert error.field == "evaluation_results[0].score_details.score"
    assert error.problem.endswith("must be of type number, got a string")
    doc = record(GAIA_HIGH)
    doc["model_info"]["additional_details"]["total_cost_usd"] = 122.49
    error = refused(tmp_path, doc)
    assert (error.field, error.problem) == (
        "model_info.additional_details.total_cost_usd",
        "not a valid Every Eval Ever 0.2.2 record: must be of type string, got a number",
    )


def test_eval_library_is_required_from_0_2_1_on(tmp_path: Path) -> None:
    doc = record(GAIA_HIGH)
    del doc["eval_library"]
    assert refused(tmp_path, doc).field == "eval_library"
    doc = record(MATTER)
    doc["schema_version"] = "0.2.1"  # a 0.2.0 record claiming 0.2.1 breaks its two new rules
    error = refused(tmp_path, doc)
    assert error.problem.startswith("not a valid Every Eval Ever 0.2.1 record: ")
    assert error.problem.endswith("(2 violations in all)")


def test_a_score_outside_the_metric_range_is_refused(tmp_path: Path) -> None:
    doc = record(MATTER)
    doc["evaluation_results"][0]["score_details"]["score"] = 33.03  # percent under 0-1 bounds
    error = refused(tmp_path, doc)
    assert error.field == "evaluation_results[0].score_details.score"
    assert error.problem == "score 33.03 lies outside the metric's range 0..1"
    assert "percent vs fraction" in error.hint


def test_an_unknown_or_missing_schema_version_is_refused(tmp_path: Path) -> None:
    doc = record(MATTER)
    doc["schema_version"] = "0.9.0"
    error = refused(tmp_path, doc)
    assert str(error).endswith(
        "schema_version: schema_version '0.9.0' is not one we have the schema of (known "
        "versions: 0.2.0, 0.2.1, 0.2.2, 0.3.0; convert the record to one of them with the "
        "every_eval_ever tools)"
    )
    del doc["schema_version"]
    assert refused(tmp_path, doc).problem == "the record has no schema_version string"


def test_truncated_malformed_and_unknown_files_are_refused(tmp_path: Path) -> None:
    data = MATTER.read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ResultsError, match=r"cut\.json: truncated JSON"):
        read_results(cut)
    bad = tmp_path / "bad.json"
    bad.write_bytes(data.replace(b'"IFEval",', b'"IFEval" "x",', 1))
    with pytest.raises(ResultsError, match=r"bad\.json: malformed JSON: .* at line \d+ column"):
        read_results(bad)
    with pytest.raises(ResultsError, match=r"not a results file of a known format"):
        read_results(write(tmp_path, {"model": "x", "results_table": []}, "other.json"))
    error = refused(tmp_path, {**record(MATTER), "evaluation_results": []})
    assert (error.field, error.problem) == ("evaluation_results", "the record holds no results")
