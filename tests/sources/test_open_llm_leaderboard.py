"""Open LLM Leaderboard v2: final CSV via the loopback mirror, the older schema, hostile input."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath
from pipelines.sources import open_llm_leaderboard as olb
from pipelines.sources.base import SCORE_SCHEMA, ParseError
from tests.support.fault_edits import CsvEdit, Target
from tests.support.fetching import fetch_via_mirror
from tests.support.shared_data import older_snapshot

# where the fault suite's content faults go (tests/faults/faults.py collects it)
FAULT_TARGET = Target(
    olb.SOURCE.urls[0],
    CsvEdit("id", "evaluations_ifeval_value", "model_id", name="model_name"),
    "row 1",
)
OLDER = older_snapshot("open_llm_leaderboard")  # the older recorded copies, kept in the repo
URL = olb.URL
OLD_URL = (
    "https://raw.githubusercontent.com/fboulnois/llm-leaderboard-csv/"
    "580b191586fd7638e4b71dfefc9215b8cf991b1b/csv/huggingface_v2.csv"
)
BENCHES = ["bbh", "gpqa", "ifeval", "math", "mmlu_pro", "musr"]


@pytest.fixture(scope="module")
def recorded_bytes() -> bytes:
    return (DEFAULT_REPLAY_ROOT / replay_relpath(URL)).read_bytes()


@pytest.fixture
def frame(mirror_server) -> pl.DataFrame:
    return olb.parse(fetch_via_mirror(olb.SOURCE, mirror_server.base_url))


def one(frame: pl.DataFrame, key: str, bench: str) -> dict:
    hit = frame.filter((pl.col("model_key") == key) & (pl.col("benchmark_key") == bench))
    assert hit.height == 1, (key, bench, hit.height)
    return hit.row(0, named=True)


def test_counts_units_and_keys(frame: pl.DataFrame) -> None:
    assert frame.schema == SCORE_SCHEMA
    assert frame.height == 27456  # 4,576 evaluations x 6 benchmarks, all cells filled
    assert frame["model_key"].n_unique() == 4576
    assert frame["model_name"].n_unique() == 4497  # repos evaluated more than once
    assert sorted(frame["benchmark_key"].unique()) == BENCHES
    assert frame["unit"].unique().to_list() == ["fraction"]
    assert frame["value"].null_count() == 0
    assert frame["value"].min() >= 0.0 and frame["value"].max() <= 1.0
    for column in ("reasoning_effort", "thinking_budget", "agent"):
        assert frame[column].null_count() == frame.height
    names = dict(frame.select("benchmark_key", "benchmark_name").unique().iter_rows())
    assert names == {
        "ifeval": "IFEval",
        "bbh": "BBH",
        "math": "MATH Level 5",
        "gpqa": "GPQA",
        "musr": "MUSR",
        "mmlu_pro": "MMLU-PRO",
    }
    official = frame.filter(
        (pl.col("benchmark_key") == "ifeval")
        & pl.col("extra").str.contains('"is_official_provider":true', literal=True)
    )
    assert official.height == 470


def test_exact_values(frame: pl.DataFrame) -> None:
    key = "0-hero/Matter-0.2-7B-DPO_bfloat16_26a66f0d862e2024ce4ad0a09c37052ac36e8af6_True"
    row = one(frame, key, "ifeval")
    assert row["value"] == 0.330279214705869
    assert row["model_name"] == "0-hero/Matter-0.2-7B-DPO"
    assert row["row_ref"] == "line 2"
    facts = json.loads(row["extra"])
    assert facts["normalized_score"] == 33.0279214705869
    assert facts["precision"] == "bfloat16"
    assert facts["has_chat_template"] is True and facts["is_merged"] is False
    assert facts["params_billions"] == 7.242 and facts["hub_hearts"] == 3
    yi = one(
        frame, "01-ai/Yi-1.5-34B_bfloat16_4b486f81c935a2dadde84c6baa1e1370d40a098f_False", "gpqa"
    )
    assert yi["value"] == 0.365771812080537
    assert json.loads(yi["extra"])["normalized_score"] == 15.4362416107383


def test_same_repo_in_two_precisions_has_two_keys(frame: pl.DataFrame) -> None:
    rows = frame.filter(
        (pl.col("model_name") == "AtAndDev/Qwen2.5-1.5B-continuous-learnt")
        & (pl.col("benchmark_key") == "bbh")
    ).sort("model_key")
    assert rows["model_key"].to_list() == [
        "AtAndDev/Qwen2.5-1.5B-continuous-learnt_bfloat16_01c0981db9cf0f146fe050065f17343af75a8aa6_True",
        "AtAndDev/Qwen2.5-1.5B-continuous-learnt_float16_01c0981db9cf0f146fe050065f17343af75a8aa6_True",
    ]
    assert rows["value"].to_list() == [0.427469849926622, 0.425774708579333]


def test_older_schema_parses() -> None:
    old = olb.parse({OLD_URL: (OLDER / "snapshot_2024-12-02" / "huggingface_v2.csv").read_bytes()})
    assert old.height == 12684  # 2,114 rows x 6
    assert old["model_key"].n_unique() == 2114
    assert old["model_name"].n_unique() == 2058
    assert sorted(old["benchmark_key"].unique()) == BENCHES  # math_lvl_5/mmlupro mapped
    assert old["value"].null_count() == 0 and old["unit"].unique().to_list() == ["fraction"]
    key = "dfurman/CalmeRys-78B-Orpo-v0.1_bfloat16_7988deb48419c3f56bb24c139c23e5c476ec03f8_True"
    row = one(old, key, "ifeval")
    assert row["value"] == 0.82  # raw, rounded to 2 dp in this schema
    facts = json.loads(row["extra"])
    assert facts["normalized_score"] == 81.63 and facts["model_key_rebuilt"] is True
    assert one(old, key, "mmlu_pro")["value"] == 0.7
    assert json.loads(one(old, key, "math")["extra"])["normalized_score"] == 40.71
    # a row without model_sha still gets a unique key
    no_sha = "SicariusSicariiStuff/Qwen2.5-14B_Uncensored_Instruct_float16__True"
    assert one(old, no_sha, "bbh")["value"] == 0.59


def _edit(data: bytes, line: int, old: str, new: str) -> bytes:
    lines = data.decode().split("\n")
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return "\n".join(lines).encode()


def _head(data: bytes, n: int) -> bytes:
    return b"\n".join(data.split(b"\n")[:n]) + b"\n"


def test_duplicate_ragged_and_keyless_rows_are_kept_as_rejected(recorded_bytes: bytes) -> None:
    lines = _head(recorded_bytes, 4).decode().split("\n")
    body = "\n".join([*lines[:4], lines[2], lines[3][:80], "," + lines[1].split(",", 1)[1], ""])
    frame = olb.parse({URL: body.encode()})
    rejected = frame.filter(pl.col("value").is_null())
    assert frame.height == 6 * 6
    assert rejected.height == 3 * 6
    reasons = sorted({json.loads(e)["rejected"] for e in rejected["extra"]})
    assert reasons == [
        "duplicate of line 3 (identical)",
        "empty model key",
        "ragged row: 2 fields for 40 columns",
    ]
    conflicting = "\n".join([*lines[:3], lines[2].replace("0.28411725333227", "0.3"), ""])
    frame = olb.parse({URL: conflicting.encode()})
    assert frame.filter(pl.col("value").is_null()).height == 2 * 6


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: _edit(d, 2, "0.330279214705869", "33.0279214705869"), "outside 0-1"),
        (lambda d: _edit(d, 2, "0.330279214705869", "NaN"), "non-finite"),
        (lambda d: _edit(d, 2, "33.0279214705869", "133.0"), "outside 0-100"),
        (lambda d: _edit(d, 2, "0.330279214705869", "n/a"), "not a number"),
        (lambda d: _edit(d, 1, "evaluations_gpqa_value,", "gpqa_value,"), "evaluations_gpqa_value"),
        (lambda d: d.replace(b"0-hero", b"0-h\xe9ro", 1), "not UTF-8"),
        (lambda d: b"<!doctype html>\n<html><title>404</title></html>", "HTML page"),
        (lambda d: _head(d, 2) + b'"unterminated,0.5\n', "malformed CSV"),
        (lambda d: b"", "empty file"),
    ],
)
def test_hostile_payloads(recorded_bytes: bytes, mutate, needle: str) -> None:
    payload = mutate(_head(recorded_bytes, 3))
    with pytest.raises(ParseError, match="open_llm_leaderboard") as caught:
        olb.parse({URL: payload})
    assert needle in str(caught.value)


def test_error_names_the_row(recorded_bytes: bytes) -> None:
    payload = _edit(_head(recorded_bytes, 3), 3, "0.365771812080537", "7")
    with pytest.raises(ParseError, match=r"at line 3: evaluations_gpqa_value=7.0 outside 0-1"):
        olb.parse({URL: payload})
