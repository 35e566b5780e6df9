"""The release dates the parsers read from the recorded payloads (`release_date` column):
exact rows of the real bytes in ../shared/leaderboards, what is deliberately not a release
date, and the one spelling every stated date takes (`stated_date`)."""

from __future__ import annotations

import json
from datetime import date, datetime

import polars as pl
import pytest

from pipelines.sources import (
    aider,
    arc_prize,
    benchpress_matrix,
    epoch_ai,
    evalplus,
    livecodebench,
    open_llm_leaderboard,
)
from pipelines.sources import llm_stats as llm
from pipelines.sources.base import SCORE_SCHEMA, stated_date
from tests.support.shared_data import require_shared, shared_leaderboards


def shared(relative: str) -> bytes:
    return require_shared(shared_leaderboards() / relative).read_bytes()


def dates(frame: pl.DataFrame, *refs: str) -> dict[str, str | None]:
    """row_ref -> release_date of exactly these rows."""
    rows = frame.filter(pl.col("row_ref").is_in(list(refs)))
    assert rows.height == len(refs), rows
    return dict(rows.select("row_ref", "release_date").iter_rows())


def test_the_column_is_part_of_the_common_schema() -> None:
    assert SCORE_SCHEMA["release_date"] == pl.String()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2025-04-16", "2025-04-16"),
        ("2025-01-31T00:00:00.000Z", "2025-01-31"),  # ARC Prize
        ("2025-10-03T00:00:00.000000+00:00", "2025-10-03"),
        ("2024-02-29 12:30", "2024-02-29"),
        (" 2024-09 ", "2024-09"),  # BenchPress: month only
        ("2025", "2025"),
        (date(2024, 2, 29), "2024-02-29"),  # PyYAML reads Aider's dates as dates
        (datetime(2024, 2, 29, 8, 0), "2024-02-29"),
        ("", None),
        (None, None),
        (True, None),
        ("soon", "soon"),  # passed on: the release-date choice rejects and counts it
        ("2025-13-45", "2025-13-45"),
    ],
)
def test_stated_date_spelling(raw: object, expected: str | None) -> None:
    assert stated_date(raw) == expected


def test_epoch_ai_release_date_column() -> None:
    frame = epoch_ai.parse({epoch_ai.URL: shared("epoch_ai/benchmark_data.zip")})
    assert dates(
        frame,
        "gpqa_diamond.csv line 2",  # gemini-3-flash-preview
        "epoch_capabilities_index.csv line 5",  # the ECI file has the column too
        "epoch_capabilities_index.csv line 409",  # grok-code-fast-1
        "mmlu_external.csv line 49",  # Model version DeepSeek-V3, Name "DeepSeek v3"
        "mmlu_external.csv line 62",  # Name "DeepSeek-V3 Base": credited to the base model
        "aider_polyglot_external.csv line 9",  # blank in the file
    ) == {
        "gpqa_diamond.csv line 2": "2025-12-17",
        "epoch_capabilities_index.csv line 5": "2025-12-17",
        "epoch_capabilities_index.csv line 409": "2025-08-28",
        "mmlu_external.csv line 49": "2024-12-26",
        "mmlu_external.csv line 62": None,  # the date in the row is DeepSeek-V3's, not the base's
        "aider_polyglot_external.csv line 9": None,
    }
    stated = frame.filter(pl.col("release_date").is_not_null())
    assert stated.height == 3144  # of 3,690 rows; 510 are blank, 36 credited to their Name
    assert (stated["release_date"].min(), stated["release_date"].max()) == (
        "2019-11-05",
        "2025-12-22",
    )


def test_aider_states_release_dates_on_the_edit_board_only() -> None:
    frame = aider.parse(
        {
            aider.POLYGLOT_URL: shared("aider/polyglot_leaderboard.yml"),
            aider.EDIT_URL: shared("aider/edit_leaderboard.yml"),
        }
    )
    assert dates(
        frame,
        "edit_leaderboard.yml[0] line 1",  # claude-3-opus-20240229: `_released`
        "edit_leaderboard.yml[1] line 24",  # claude-3-sonnet-20240229: `released`
        "edit_leaderboard.yml[2] line 47",  # gemini-1.5-pro-001
        "polyglot_leaderboard.yml[0] line 1",  # the polyglot board states none
    ) == {
        "edit_leaderboard.yml[0] line 1": "2024-02-29",
        "edit_leaderboard.yml[1] line 24": "2024-02-29",
        "edit_leaderboard.yml[2] line 47": "2024-05-03",
        "polyglot_leaderboard.yml[0] line 1": None,
    }
    # the run's own day stays the evaluation date, never the release
    first = frame.filter(pl.col("row_ref") == "edit_leaderboard.yml[0] line 1").row(0, named=True)
    assert json.loads(first["extra"])["eval_date"] == "2024-05-01"
    assert frame.filter(pl.col("release_date").is_not_null()).height == 40


def test_llm_stats_release_date_of_model_json() -> None:
    root = require_shared(shared_leaderboards() / "llm_stats")
    payloads = {
        llm.RAW_BASE + path.relative_to(root).as_posix(): path.read_bytes()
        for path in root.glob("data/organizations/*/models/*/*.json")
    }
    frame = llm.parse(payloads)
    base = "qwen/models/qwen3-235b-a22b/benchmarks.json"
    assert dates(frame, f"{base}[1]", f"{base}[16]") == {
        f"{base}[1]": "2025-04-29",  # the chat model's aime-2024 record
        f"{base}[16]": None,  # copied from the base model's table: not the chat model's date
    }
    grok = frame.filter(pl.col("model_key") == "grok-code-fast-1")
    assert grok["release_date"].unique().to_list() == ["2025-08-28"]
    stated = frame.filter(pl.col("release_date").is_not_null())
    assert stated.height == 2209  # 2,224 records less the 15 copied ones


def test_llm_stats_falls_back_to_the_announcement_date() -> None:
    url = llm.RAW_BASE + "data/organizations/acme/models/m-1/"
    record = {"model_id": "m-1", "benchmark_id": "mmlu", "score": 0.5}

    def parsed(model: dict) -> str | None:
        frame = llm.parse(
            {
                url + "model.json": json.dumps(model).encode(),
                url + "benchmarks.json": json.dumps([record]).encode(),
            }
        )
        return frame["release_date"][0]

    assert parsed({"release_date": "2025-03-01", "announcement_date": "2025-02-01"}) == (
        "2025-03-01"
    )
    assert parsed({"release_date": None, "announcement_date": "2025-02-01"}) == "2025-02-01"
    assert parsed({}) is None


def test_arc_prize_model_release_dates_but_not_systems() -> None:
    urls = (
        arc_prize.EVALUATIONS_URL,
        arc_prize.MODELS_URL,
        arc_prize.DATASETS_URL,
        arc_prize.PROVIDERS_URL,
    )
    frame = arc_prize.parse({url: shared(f"arc_prize/{url.rsplit('/', 1)[-1]}") for url in urls})
    assert dates(
        frame,
        "evaluations[75]",  # o3-mini-2025-01-31-high, "2025-01-31T00:00:00.000Z"
        "evaluations[437]",  # claude-opus-4-6-thinking-120K-high
        "evaluations[534]",  # anthropic-opus-4-6-max-effort: the file says 2025-12-17
        "evaluations[276]",  # hrm-2-2508, modelType ""
        "evaluations[278]",  # jeremy_sept_2025: Grok 4 (Refine.), a system on Grok 4
        "evaluations[0]",  # the human panel: no date
    ) == {
        "evaluations[75]": "2025-01-31",
        "evaluations[437]": "2026-02-05",
        "evaluations[534]": "2025-12-17",
        "evaluations[276]": "2025-08-07",
        "evaluations[278]": None,
        "evaluations[0]": None,
    }


def test_benchpress_matrix_release_dates_as_the_paper_gives_them() -> None:
    frame = benchpress_matrix.parse({benchpress_matrix.URL: shared("benchpress_matrix/data.json")})
    assert dates(frame, "observed[0][2]") == {"observed[0][2]": "2025-01-31"}  # o3-mini-high
    per_model = dict(
        frame.select("model_key", "release_date").unique().iter_rows()
    )  # one date per model
    assert len(per_model) == 84 and None not in per_model.values()
    assert per_model["gemma-3-1b-it"] == "2025"  # the paper states the year only
    assert per_model["llama-3.2-1b-instruct"] == "2024-09"
    assert per_model["claude-opus-4.6"] == "2026-02-05"


@pytest.mark.parametrize(
    ("relative", "undated_rows"),
    [
        ("open_llm_leaderboard/huggingface_v2.csv", 3180),  # metadata_upload_date
        ("open_llm_leaderboard/snapshot_2024-12-02/huggingface_v2.csv", 630),  # upload_to_hub
    ],
)
def test_open_llm_leaderboard_hub_upload_day_is_the_release_date(
    relative: str, undated_rows: int
) -> None:
    frame = open_llm_leaderboard.parse({open_llm_leaderboard.URL: shared(relative)})
    mistral = frame.filter(pl.col("model_name") == "mistralai/Mistral-7B-Instruct-v0.2")
    assert mistral["release_date"].unique().to_list() == ["2023-12-11"]
    # a fine-tune's own upload day is its own release date
    news = frame.filter(pl.col("model_name") == "shivam9980/mistral-7b-news-cnn-merged")
    assert news["release_date"].unique().to_list() in ([], ["2024-03-18"])
    assert frame["release_date"].null_count() == undated_rows  # blank upload days stay null


def test_livecodebench_cutoff_is_not_a_release_date() -> None:
    frame = livecodebench.parse(
        {livecodebench.URL: shared("livecodebench/performances_generation.json")}
    )
    assert frame["release_date"].null_count() == frame.height == 16
    gpt4o = frame.filter(pl.col("model_key") == "gpt-4o-2024-08-06").row(0, named=True)
    assert json.loads(gpt4o["extra"])["cutoff_date"] == "2023-04-30"  # kept, as the cut-off


def test_sources_that_state_no_release_date_leave_the_column_null() -> None:
    frame = evalplus.parse({evalplus.URL: shared("evalplus/results.json")})
    assert frame.height and frame["release_date"].null_count() == frame.height
