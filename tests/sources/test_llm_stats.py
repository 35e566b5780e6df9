"""llm-stats: listing -> per-model files via the loopback mirror, older snapshot, hostile input."""

from __future__ import annotations

import json
from urllib.parse import unquote, urlsplit

import polars as pl
import pytest

from pipelines.sources import llm_stats
from pipelines.sources.base import SCORE_SCHEMA, ParseError
from tests.support.fault_edits import JsonRecordsEdit, Target, discovered_url
from tests.support.fetching import fetch_via_mirror
from tests.support.shared_data import older_snapshot

# where the fault suite's content faults go (tests/faults/faults.py collects it)
FAULT_TARGET = Target(
    discovered_url(llm_stats.SOURCE, "/benchmarks.json"),
    JsonRecordsEdit(lambda d: d, "model_id", "score", "model"),
    "one model's benchmarks.json",
)
OLDER = older_snapshot("llm_stats")  # the older recorded copies, kept in the repo
LISTING = llm_stats.LISTING_URL
RAW = llm_stats.RAW_BASE
BENCH_URL = RAW + "data/organizations/acme/models/m-1/benchmarks.json"
MODEL_URL = RAW + "data/organizations/acme/models/m-1/model.json"


@pytest.fixture
def payloads(mirror_server) -> dict[str, bytes]:
    return fetch_via_mirror(llm_stats.SOURCE, mirror_server.base_url)


@pytest.fixture
def frame(payloads: dict[str, bytes]) -> pl.DataFrame:
    return llm_stats.parse(payloads)


def rows(frame: pl.DataFrame, model: str, bench: str) -> pl.DataFrame:
    return frame.filter((pl.col("model_key") == model) & (pl.col("benchmark_key") == bench))


def test_listing_discovers_every_model_file(payloads: dict[str, bytes]) -> None:
    assert len(payloads) == 337  # the listing + 169 model.json + 167 benchmarks.json
    urls = sorted(set(payloads) - {LISTING})
    assert sum(u.endswith("/model.json") for u in urls) == 169
    assert sum(u.endswith("/benchmarks.json") for u in urls) == 167
    assert all(u.startswith(RAW + "data/organizations/") for u in urls)
    assert not any("/data/benchmarks/" in u for u in urls)  # definitions are not fetched
    assert len(urls) <= llm_stats.SOURCE.max_files


def test_counts_units_and_settings(frame: pl.DataFrame) -> None:
    assert frame.schema == SCORE_SCHEMA
    assert frame.height == 2224
    # 3 of the 167 benchmarks.json are empty lists; + qwen3-235b-a22b-base (COPIED_TABLES)
    assert frame["model_key"].n_unique() == 165
    assert frame["benchmark_key"].n_unique() == 342  # + 3 HLE variant keys
    assert frame["value"].null_count() == 44  # protocol rejections (test_llm_stats_protocols)
    assert dict(frame.group_by("unit").len().iter_rows()) == {"fraction": 2222, "rating": 2}
    assert frame["agent"].null_count() == frame.height
    # settings stated by analysis_method
    assert dict(frame.group_by("thinking_budget").len().iter_rows()) == {
        None: 2082,
        "0": 30,
        "64K": 18,
        "on": 94,
    }
    assert dict(frame.group_by("reasoning_effort").len().iter_rows()) == {None: 2216, "high": 8}
    coverage = frame.group_by("benchmark_key").len("n")  # records, as SOURCE.md counts them
    assert rows(frame, "mistral-small-3.2-24b-instruct-2506", "gpqa").height == 2
    assert dict(coverage.filter(pl.col("n") >= 60).iter_rows()) == {
        "gpqa": 130,
        "mmlu": 80,
        "mmlu-pro": 68,
        "math": 64,
        "humaneval": 63,
    }


def test_exact_values(frame: pl.DataFrame) -> None:
    jamba = rows(frame, "jamba-1.5-large", "gpqa").row(0, named=True)
    assert (jamba["value"], jamba["unit"], jamba["model_name"]) == (
        0.369,
        "fraction",
        "Jamba 1.5 Large",
    )
    assert jamba["benchmark_name"] == "GPQA"
    gpt5 = rows(frame, "gpt-5-2025-08-07", "swe-bench-verified").row(0, named=True)
    assert (gpt5["value"], gpt5["model_name"]) == (0.749, "GPT-5")
    assert gpt5["row_ref"] == "openai/models/gpt-5-2025-08-07/benchmarks.json[0]"
    facts = json.loads(gpt5["extra"])
    assert facts["source_link"] == "https://openai.com/index/gpt-5/"
    assert facts["analysis_method"].startswith("Thinking mode enabled (up to 128K tokens)")
    assert facts["release_date"] == "2025-08-07" and facts["organization_id"] == "openai"
    assert facts["is_self_reported"] is True and facts["model_benchmark_id"] == 9002
    cfeval = rows(frame, "qwen3-next-80b-a3b-thinking", "cfeval").row(0, named=True)
    assert (cfeval["value"], cfeval["unit"]) == (2071.0, "rating")
    assert json.loads(cfeval["extra"])["normalized_score"] == 0.2071
    assert rows(frame, "gpt-oss-20b", "codeforces")["unit"].to_list() == ["fraction", "fraction"]


def test_quirks(frame: pl.DataFrame) -> None:
    hle = rows(frame, "o3-2025-04-16", "humanity's-last-exam")
    assert hle["value"].to_list() == [0.202, 0.147]  # all records kept; the tools run moved:
    tools = rows(frame, "o3-2025-04-16", "humanity's-last-exam-(with-tools)").row(0, named=True)
    assert (tools["value"], tools["row_ref"]) == (
        0.243,
        "openai/models/o3-2025-04-16/benchmarks.json[10]",
    )
    assert "Python + browser tools" in json.loads(tools["extra"])["analysis_method"]
    methods = [json.loads(e)["analysis_method"] for e in hle["extra"]]
    assert methods[0] == "accuracy (no tools)"
    assert {json.loads(e)["records_for_pair"] for e in hle["extra"]} == {3}
    assert "records_for_pair" not in json.loads(rows(frame, "jamba-1.5-large", "gpqa")["extra"][0])
    nemotron = frame.filter(pl.col("model_key") == "nvidia-nemotron-nano-9b-v2")
    assert nemotron.height > 0
    assert {json.loads(e)["directory"] for e in nemotron["extra"]} == {"nemotron-nano-9b-v2"}
    sonnets = frame.filter(pl.col("model_name") == "Claude 3.5 Sonnet")["model_key"].unique()
    assert sorted(sonnets) == ["claude-3-5-sonnet-20240620", "claude-3-5-sonnet-20241022"]
    assert (
        frame.filter(pl.col("model_key") == "o3-pro-2025-06-10").height == 0
    )  # no benchmarks.json


def _snapshot_payloads() -> dict[str, bytes]:
    root = OLDER / "snapshot_2025-08-24"
    listing = (root / "tree_listing_821a834.txt").read_bytes()
    payloads = {LISTING: listing}
    for url in llm_stats.discover(payloads):
        payloads[url] = (root / unquote(urlsplit(url).path).split("/main/", 1)[1]).read_bytes()
    return payloads


def test_older_snapshot_parses_with_its_scale_drift() -> None:
    payloads = _snapshot_payloads()
    assert len(payloads) == 301  # listing + 151 model.json + 149 benchmarks.json
    old = llm_stats.parse(payloads)
    assert old.height == 2036
    assert old["model_key"].n_unique() == 150  # + qwen3-235b-a22b-base
    assert old["benchmark_key"].n_unique() == 337  # + 2 HLE variant keys
    assert old["value"].null_count() == 39  # protocol rejections
    assert dict(old.group_by("unit").len().iter_rows()) == {
        "fraction": 1963,
        "percent": 68,
        "rating": 5,
    }
    mbpp = rows(old, "qwen-2.5-coder-32b-instruct", "mbpp").row(0, named=True)
    assert (mbpp["value"], mbpp["unit"]) == (90.2, "percent")
    codeforces = rows(old, "qwen3-32b", "codeforces").row(0, named=True)
    assert (codeforces["value"], codeforces["unit"]) == (1977.0, "rating")
    # 2622 is "Elo (with tools)": rejected (tool use on a closed-book benchmark)
    assert rows(old, "gpt-oss-120b", "codeforces")["value"].to_list() == [None, 2463.0]


def test_discover_reads_the_github_tree_json() -> None:
    tree = {
        "sha": "x",
        "truncated": False,
        "tree": [
            {"path": "data/organizations/acme/models/m-1/benchmarks.json", "type": "blob"},
            {"path": "data/organizations/acme/models/m-1/model.json", "type": "blob"},
            {"path": "data/organizations/acme/models/m-1", "type": "tree"},
            {"path": "data/organizations/acme/organization.json", "type": "blob"},
            {"path": "data/benchmarks/gpqa.json", "type": "blob"},
            {"path": "data/organizations/../models/x/model.json", "type": "blob"},
            {"path": "README.md", "type": "blob"},
        ],
    }
    urls = llm_stats.discover({LISTING: json.dumps(tree).encode()})
    assert urls == [BENCH_URL, MODEL_URL]


@pytest.mark.parametrize(
    ("listing", "needle"),
    [
        (json.dumps({"tree": [], "truncated": True}).encode(), "truncated"),
        (b'{"tree": [', "invalid JSON"),
        (b"100644 blob abc data/organizations/a/models/b/model.json\n", "line 1"),
        (b"<html><body>API rate limit exceeded</body></html>", "HTML page"),
        (b"\xfe\xff", "not UTF-8"),
    ],
)
def test_hostile_listings(listing: bytes, needle: str) -> None:
    with pytest.raises(ParseError, match="llm_stats") as caught:
        llm_stats.discover({LISTING: listing})
    assert needle in str(caught.value)


def _record(**changes: object) -> dict:
    record = {"model_id": "m-1", "benchmark_id": "gpqa", "score": 0.5, "normalized_score": 0.5}
    record.update(changes)
    return record


def _parse(records: object, model: bytes = b'{"model_id": "m-1", "name": "M 1"}') -> pl.DataFrame:
    return llm_stats.parse({BENCH_URL: json.dumps(records).encode(), MODEL_URL: model})


def test_unusable_records_are_kept_as_rejected() -> None:
    frame = _parse(
        [
            _record(),
            _record(score=55.0, normalized_score=0.3),  # neither percent nor a rating
            _record(score=None),
            _record(model_id=""),
            _record(benchmark_id="mbpp", score=90.2, normalized_score=0.902),
        ]
    )
    assert frame["value"].to_list() == [0.5, None, None, None, 90.2]
    assert frame["unit"].to_list() == ["fraction", "score", "score", "score", "percent"]
    reasons = [json.loads(e).get("rejected") for e in frame["extra"]]
    assert reasons[1] == "score 55.0 with normalized_score 0.3: scale unknown"
    assert reasons[2:4] == ["score is null", "empty model_id"]
    assert frame["model_name"].to_list()[0] == "M 1"


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        (b'[{"model_id": "m-1", "benchmark_id": "gpqa", "score": 0.5', "invalid JSON"),
        (b'[{"model_id": "m-1", "benchmark_id": "gpqa", "score": NaN}]', "non-finite"),
        (b'[{"model_id": "m-\xff", "benchmark_id": "gpqa", "score": 0.5}]', "not UTF-8"),
        (b"<!DOCTYPE html><html>404</html>", "HTML page"),
        (b'{"records": []}', "not a list"),
        (
            json.dumps([_record(), {"model_id": "m-1", "benchmark_id": "x"}]).encode(),
            "missing keys ['score']",
        ),
        (json.dumps([_record(score=-0.2)]).encode(), "negative score"),
        (json.dumps([_record(score="high")]).encode(), "not a number"),
    ],
)
def test_hostile_payloads(payload: bytes, needle: str) -> None:
    with pytest.raises(ParseError, match="llm_stats") as caught:
        llm_stats.parse({BENCH_URL: payload})
    assert needle in str(caught.value)


def test_errors_name_the_record_and_unexpected_files() -> None:
    with pytest.raises(ParseError, match=r"at acme/models/m-1/benchmarks.json\[1\]"):
        _parse([_record(), _record(score=-1)])
    with pytest.raises(ParseError, match="model.json is not an object"):
        _parse([_record()], model=b"[]")
    with pytest.raises(ParseError, match="unexpected payload"):
        llm_stats.parse({RAW + "data/benchmarks/gpqa.json": b"{}"})
