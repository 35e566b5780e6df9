"""EvalPlus: recorded results.json via the loopback mirror, the older snapshot, hostile input."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pipelines.sources import evalplus
from pipelines.sources.base import SCORE_SCHEMA, ParseError
from tests.support.fault_edits import Target, evalplus_edit
from tests.support.fetching import fetch_via_mirror
from tests.support.shared_data import older_snapshot

# where the fault suite's content faults go (tests/faults/faults.py collects it)
FAULT_TARGET = Target(evalplus.SOURCE.urls[0], evalplus_edit, "first entry")
OLDER = older_snapshot("evalplus")  # the older recorded copies, kept in the repo
URL = evalplus.URL


@pytest.fixture
def frame(mirror_server) -> pl.DataFrame:
    return evalplus.parse(fetch_via_mirror(evalplus.SOURCE, mirror_server.base_url))


def value(frame: pl.DataFrame, model: str, bench: str) -> float:
    hit = frame.filter((pl.col("model_key") == model) & (pl.col("benchmark_key") == bench))
    assert hit.height == 1, (model, bench, hit.height)
    return hit["value"][0]


def test_counts_units_and_settings(frame: pl.DataFrame) -> None:
    assert frame.schema == SCORE_SCHEMA
    assert frame.height == 428  # 125 models x 4 benchmarks - 72 null cells
    assert frame["model_key"].n_unique() == 125
    assert sorted(frame["benchmark_key"].unique()) == ["humaneval", "humaneval+", "mbpp", "mbpp+"]
    assert frame.group_by("benchmark_key").len().sort("benchmark_key")["len"].to_list() == [
        125,
        125,
        89,
        89,
    ]
    assert frame["unit"].unique().to_list() == ["percent"]
    assert frame["value"].null_count() == 0
    for column in ("reasoning_effort", "thinking_budget", "agent"):
        assert frame[column].null_count() == frame.height
    assert (frame["model_key"] == frame["model_name"]).all()
    assert frame["source"].unique().to_list() == ["evalplus"]


def test_exact_values(frame: pl.DataFrame) -> None:
    assert value(frame, "OpenCoder-8B-Instruct", "humaneval") == 81.7
    assert value(frame, "OpenCoder-8B-Instruct", "mbpp+") == 71.4
    assert value(frame, "GPT 4o (Aug 2024)", "humaneval+") == 87.2
    assert value(frame, "GPT 4o (Aug 2024)", "mbpp") == 87.6
    assert value(frame, "Zephyr β-7B", "mbpp+") == 34.7  # non-ASCII key survives
    assert value(frame, "Llama3-8B-instruct", "mbpp") == 64.6
    # null cells are missing observations, not rows
    assert frame.filter(pl.col("model_key") == "Code-13B")["benchmark_key"].to_list() == [
        "humaneval",
        "humaneval+",
    ]
    row = frame.filter(
        (pl.col("model_key") == "OpenCoder-8B-Instruct") & (pl.col("benchmark_key") == "mbpp")
    ).row(0, named=True)
    assert json.loads(row["extra"]) == {
        "link": "https://huggingface.co/infly/OpenCoder-8B-Instruct",
        "metric": "pass@1, greedy decoding",
        "open_data": "NONE",
        "prompted": True,
        "size_b_params": 8.0,
    }
    assert row["row_ref"] == "['OpenCoder-8B-Instruct']['pass@1']['mbpp']"
    assert row["benchmark_name"] == "MBPP"


def test_older_snapshot_parses() -> None:
    old = evalplus.parse({URL: (OLDER / "snapshot_2024-06-18" / "results.json").read_bytes()})
    assert old.height == 372
    assert old["model_key"].n_unique() == 111
    assert value(old, "Llama3-8B-instruct", "mbpp") == 70.1  # changed to 64.6 later
    assert value(old, "Llama3-8B-instruct", "mbpp+") == 59.3


def _doc(**entries: object) -> bytes:
    base = {"m": {"link": None, "pass@1": {"humaneval": 50.0, "mbpp": None}, "size": 7}}
    base.update(entries)
    for entry in base.values():  # the export lists all four benchmarks (null when not run)
        scores = entry.get("pass@1") if isinstance(entry, dict) else None
        if isinstance(scores, dict):
            for bench in evalplus.BENCHMARK_NAMES:
                scores.setdefault(bench, None)
    return json.dumps(base).encode()


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        (b'{"m": {"pass@1": {"humaneval": 5', "invalid JSON"),
        (b'{"m": {"pass@1": {"humaneval": NaN}}}', "non-finite"),
        (b'{"m\xff": {"pass@1": {}}}', "not UTF-8"),
        (b"<!DOCTYPE html><html><body>rate limited</body></html>", "HTML page"),
        (b"[]", "non-empty object"),
        (_doc(x={"link": "y"}), "missing key 'pass@1'"),
        (json.dumps({"m": {"pass@1": {"humaneval": 5.0}}}).encode(), "lacks"),
        (_doc(x={"pass@1": {"humaneval": 150.0}}), "outside 0-100"),
        (_doc(x={"pass@1": {"humaneval": "n/a"}}), "not a number"),
        (_doc(x={"pass@1": {"humaneval": True}}), "boolean"),
        (b'{"a": {"pass@1": {}}, "a": {"pass@1": {}}}', "duplicate key"),
    ],
)
def test_hostile_payloads(payload: bytes, needle: str) -> None:
    with pytest.raises(ParseError, match="evalplus") as caught:
        evalplus.parse({URL: payload})
    assert needle in str(caught.value)


def test_error_names_the_row() -> None:
    with pytest.raises(ParseError, match=r"\['x'\]\['pass@1'\]\['humaneval'\]"):
        evalplus.parse({URL: _doc(x={"pass@1": {"humaneval": -1}})})


def test_empty_model_key_is_kept_as_rejected() -> None:
    frame = evalplus.parse({URL: _doc(**{" ": {"pass@1": {"humaneval": 10.0}}})})
    rejected = frame.filter(pl.col("value").is_null())
    assert rejected.height == 1
    assert rejected["model_key"][0] is None
    assert json.loads(rejected["extra"][0])["rejected"] == "empty model key"
    assert frame.filter(pl.col("model_key") == "m")["value"].to_list() == [50.0]
