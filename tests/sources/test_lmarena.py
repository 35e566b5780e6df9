"""LMArena: arena CSVs + HF-Space tables via the loopback mirror, older lmsys.csv, hostile input."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pipelines.sources import lmarena
from pipelines.sources.base import SCORE_SCHEMA, ParseError
from tests.support.fault_edits import CsvEdit, Target
from tests.support.fetching import fetch_via_mirror
from tests.support.shared_data import older_snapshot

# where the fault suite's content faults go (tests/faults/faults.py collects it)
FAULT_TARGET = Target(
    lmarena.SOURCE.urls[0], CsvEdit("model", "arena_score", "Model"), "text arena row 1"
)
OLDER = older_snapshot("lmarena")  # the older recorded copies, kept in the repo
OLD_URL = (
    "https://raw.githubusercontent.com/fboulnois/llm-leaderboard-csv/"
    "f1d824adc74778cafccb813103f4af49b3d04ffb/csv/lmsys.csv"
)
HEADER = (
    "rank,rank_stylectrl,model,arena_score,95_pct_ci,votes,"
    "organization,license,knowledge_cutoff,url\n"
)


@pytest.fixture
def frame(mirror_server) -> pl.DataFrame:
    payloads = fetch_via_mirror(lmarena.SOURCE, mirror_server.base_url)
    assert sorted(payloads) == sorted(lmarena.SOURCE.urls)
    return lmarena.parse(payloads)


def one(frame: pl.DataFrame, model: str, bench: str) -> dict:
    hit = frame.filter(
        (pl.col("model_key") == model)
        & (pl.col("benchmark_key") == bench)
        & pl.col("value").is_not_null()
    )
    assert hit.height == 1, (model, bench, hit.height)
    return hit.row(0, named=True)


def test_counts_and_units(frame: pl.DataFrame) -> None:
    assert frame.schema == SCORE_SCHEMA
    assert frame.height == 601
    summary = (
        frame.group_by("benchmark_key", "unit")
        .agg(
            pl.len().alias("rows"),
            pl.col("value").null_count().alias("rejected"),
            pl.col("model_key").n_unique().alias("models"),
        )
        .sort("benchmark_key")
    )
    assert summary.rows() == [
        ("arena_hard_auto_v0.1", "percent", 60, 0, 60),
        ("lmarena_image", "elo", 19, 0, 19),
        ("lmarena_text", "elo", 266, 1, 265),
        ("lmarena_vision", "elo", 86, 0, 86),
        ("mmlu", "fraction", 103, 1, 102),
        ("mt_bench", "score", 67, 0, 67),
    ]
    assert frame["model_key"].n_unique() == 435
    for column in ("reasoning_effort", "thinking_budget", "agent"):
        assert frame[column].null_count() == frame.height
    elo = frame.filter(pl.col("unit") == "elo")["value"]
    assert (elo.min(), elo.max()) == (840.0, 1470.0)


def test_exact_values(frame: pl.DataFrame) -> None:
    top = one(frame, "Gemini-2.5-Pro", "lmarena_text")
    assert top["value"] == 1470.0
    assert top["row_ref"] == "lmarena_text.csv line 2"
    facts = json.loads(top["extra"])
    assert facts["votes"] == 26019
    assert (facts["ci95"], facts["ci95_plus"], facts["ci95_minus"]) == ("+5/-5", 5.0, 5.0)
    assert (facts["rank"], facts["rank_stylectrl"], facts["organization"]) == (1, 1, "Google")
    assert "knowledge_cutoff" not in facts  # blank in the newer file
    assert one(frame, "Gemini-2.5-Pro", "lmarena_vision")["value"] == 1317.0
    image = one(frame, "GPT-Image-1", "lmarena_image")
    assert image["value"] == 1134.0 and json.loads(image["extra"])["votes"] == 47190
    wizard = one(frame, "wizardlm-30b", "mt_bench")
    assert (wizard["value"], wizard["unit"], wizard["model_name"]) == (
        7.01,
        "score",
        "WizardLM-30B",
    )
    assert one(frame, "wizardlm-30b", "mmlu")["value"] == 0.587
    assert one(frame, "gpt-4-0314", "mmlu")["value"] == 0.864
    baseline = one(frame, "gpt-4-0314", "arena_hard_auto_v0.1")
    assert baseline["value"] == 50.0
    assert json.loads(baseline["extra"])["baseline"] == "gpt-4-0314"
    sonnet = one(frame, "claude-3-5-sonnet-20240620", "arena_hard_auto_v0.1")
    assert sonnet["value"] == 79.35
    assert json.loads(sonnet["extra"])["ci"] == "(2.1, 1.3)"


def test_duplicate_rows_are_kept_as_rejected(frame: pl.DataFrame) -> None:
    yi = frame.filter(pl.col("model_key") == "Yi-34B-Chat").sort("row_ref")
    assert yi["row_ref"].to_list() == ["lmarena_text.csv line 201", "lmarena_text.csv line 202"]
    assert yi["value"].to_list() == [1134.0, None]
    assert json.loads(yi["extra"][1]) == {"rejected": "duplicate of line 201 (identical)"}
    table = frame.filter(
        (pl.col("model_key") == "yi-34b-chat") & pl.col("row_ref").str.starts_with("leaderboard")
    )  # file order: line 27, then line 120
    assert table["benchmark_key"].to_list() == ["mmlu", "mmlu"]  # MT-bench is '-': no rows
    assert table["value"].to_list() == [0.735, None]
    assert json.loads(table["extra"][1])["rejected"] == "duplicate of line 27 (identical)"


def test_older_snapshot_parses() -> None:
    old = lmarena.parse({OLD_URL: (OLDER / "snapshot_2025-07-18" / "lmsys.csv").read_bytes()})
    assert old.height == 218
    assert old["model_key"].n_unique() == 218
    assert old["benchmark_key"].unique().to_list() == ["lmarena_text"]
    assert old["value"].null_count() == 0
    grok = one(old, "Grok-4-0709", "lmarena_text")
    assert grok["value"] == 1443.0
    facts = json.loads(grok["extra"])
    assert (facts["ci95_plus"], facts["ci95_minus"], facts["votes"]) == (7.0, 8.0, 5725)
    assert "knowledge_cutoff" not in facts  # 'Unknown' in the older file means missing
    assert one(old, "Gemini-2.5-Pro", "lmarena_text")["value"] == 1474.0


def test_conflicting_duplicates_are_all_rejected() -> None:
    body = HEADER + "1,1,A,1200,+5/-5,10,,,,\n2,2,A,1100,+5/-5,10,,,,\n3,3,B,1000,+5/-5,10,,,,\n"
    frame = lmarena.parse({lmarena.TEXT_URL: body.encode()})
    assert frame.filter(pl.col("model_key") == "A")["value"].to_list() == [None, None]
    assert frame.filter(pl.col("model_key") == "B")["value"].to_list() == [1000.0]


def test_ragged_and_keyless_rows_are_kept_as_rejected() -> None:
    body = HEADER + "1,1,A,1200,+5/-5\n2,2,,1100,+5/-5,10,,,,\n\n3,3,B,1000,+5/-5,10,,,,\n"
    frame = lmarena.parse({lmarena.VISION_URL: body.encode()})
    assert frame.height == 3  # the blank line carries nothing
    reasons = [json.loads(e).get("rejected") for e in frame["extra"]]
    assert reasons[0] == "ragged row: 5 fields for 10 columns"
    assert reasons[1] == "empty model key"
    assert frame["value"].to_list() == [None, None, 1000.0]


@pytest.mark.parametrize(
    ("url", "payload", "needle"),
    [
        (
            lmarena.TEXT_URL,
            b"rank,model\n1,A\n",
            "missing columns ['arena_score', '95_pct_ci', 'votes']",
        ),
        (
            lmarena.TEXT_URL,
            (HEADER + "1,1,A\xff,1200,+1/-1,5,,,,\n").encode("latin-1"),
            "not UTF-8",
        ),
        (lmarena.TEXT_URL, b"<html><body>Not Found</body></html>", "HTML page"),
        (lmarena.TEXT_URL, (HEADER + "1,1,A,nan,+1/-1,5,,,,\n").encode(), "line 2"),
        (lmarena.TEXT_URL, (HEADER + "1,1,A,high,+1/-1,5,,,,\n").encode(), "not a number"),
        (lmarena.IMAGE_URL, (HEADER + "1,1,A,12,+1/-1,5,,,,\n").encode(), "not a plausible rating"),
        (lmarena.TABLE_URL, b"key,Model,MT-bench (score),MMLU\nk,K,11.5,0.5\n", "outside 0-10"),
        (
            lmarena.TABLE_URL,
            b"key,Model,MT-bench (score),MMLU\nk,K,8,87\n",
            "MMLU=87.0 outside 0-1",
        ),
        (lmarena.ARENA_HARD_URL, b"model,score\nm,101\n", "outside 0-100"),
        (lmarena.TEXT_URL, (HEADER + '1,1,"A,1200\n').encode(), "malformed CSV"),
        ("https://example.org/elo_results_20250804.pkl", b"\x80\x04", "unexpected payload"),
    ],
)
def test_hostile_payloads(url: str, payload: bytes, needle: str) -> None:
    with pytest.raises(ParseError, match="lmarena") as caught:
        lmarena.parse({url: payload})
    assert needle in str(caught.value)
