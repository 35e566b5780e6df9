"""Aider polyglot + edit boards: recorded YAML via the loopback mirror, snapshot, hostile input."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pipelines.sources import aider
from pipelines.sources.base import SCORE_SCHEMA, ParseError
from tests.support.fault_edits import Target, aider_edit
from tests.support.fetching import fetch_via_mirror
from tests.support.shared_data import older_snapshot

# where the fault suite's content faults go (tests/faults/faults.py collects it)
FAULT_TARGET = Target(aider.SOURCE.urls[0], aider_edit, "polyglot run 0")
OLDER = older_snapshot("aider")  # the older recorded copies, kept in the repo
POLY, EDIT = aider.POLYGLOT_URL, aider.EDIT_URL
RUN = b"""- dirname: run-a
  model: model a
  edit_format: diff
  pass_rate_1: 10.0
  pass_rate_2: 20.0
  total_cost: 1.5
  date: 2025-01-02
"""


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath

    payloads = {
        url: (DEFAULT_REPLAY_ROOT / replay_relpath(url)).read_bytes() for url in (POLY, EDIT)
    }
    return aider.parse(payloads)


def _run(frame: pl.DataFrame, dirname: str) -> dict:
    sel = frame.filter(pl.col("model_key") == dirname)
    assert sel.height == 1
    return sel.row(0, named=True)


def test_fetch_through_mirror(mirror_server) -> None:
    payloads = fetch_via_mirror(aider.SOURCE, mirror_server.base_url)
    assert set(payloads) == {POLY, EDIT}
    out = aider.parse(payloads)
    assert out.schema == pl.Schema(SCORE_SCHEMA)
    assert out.height == 167


def test_counts(frame: pl.DataFrame) -> None:
    counts = {
        key: (n, keys, names)
        for key, n, keys, names in frame.group_by("benchmark_key")
        .agg(pl.len(), pl.col("model_key").n_unique(), pl.col("model_name").n_unique())
        .iter_rows()
    }
    assert counts == {"polyglot": (69, 69, 68), "edit": (98, 98, 98)}
    assert frame["unit"].unique().to_list() == ["percent"]
    # partial runs (test_cases short of the board's set) are kept without a value
    assert frame["value"].null_count() == 3  # 3 edit runs: test_aider_partial_runs.py
    assert frame["value"].min() == 3.6 and frame["value"].max() == 88.0


def test_exact_values(frame: pl.DataFrame) -> None:
    gpt5 = _run(frame, "2025-08-23-15-47-21--gpt-5-high")
    assert (gpt5["model_name"], gpt5["value"], gpt5["reasoning_effort"]) == (
        "gpt-5 (high)",
        88.0,
        "high",
    )
    assert gpt5["agent"] == "diff"
    assert gpt5["row_ref"] == "polyglot_leaderboard.yml[64] line 1715"
    assert json.loads(gpt5["extra"])["cost"] == 29.0829

    first = _run(frame, "2025-02-25-20-23-07--gemini-pro")
    assert first["row_ref"] == "polyglot_leaderboard.yml[0] line 1"
    extra = json.loads(first["extra"])
    assert (first["value"], extra["pass_rate_1"], extra["cost"]) == (35.6, 20.4, 0.0)
    assert extra["eval_date"] == "2025-02-25" and extra["percent_cases_well_formed"] == 100.0

    yi = _run(frame, "2024-09-04-16-08-09--yi-coder-9b-whole")
    assert yi["benchmark_key"] == "edit" and yi["value"] == 54.1
    assert yi["row_ref"] == "edit_leaderboard.yml[40] line 930"
    assert json.loads(yi["extra"])["release_date"] == "2024-09-04"


def test_settings(frame: pl.DataFrame) -> None:
    budgets = dict(
        frame.filter(pl.col("thinking_budget").is_not_null())
        .select("model_key", "thinking_budget")
        .iter_rows()
    )
    assert len(budgets) == 5
    assert budgets["2025-05-26-15-56-31--flash25-05-20-24k-think"] == "0"  # "(no think)"
    assert budgets["2025-06-06-16-36-21--gemini0605-32k-think-diff-fenced"] == "32768"
    assert frame["reasoning_effort"].drop_nulls().len() == 7
    arch = _run(frame, "2025-01-23-19-14-48--r1-architect-sonnet")
    assert arch["agent"] == "architect"
    extra = json.loads(arch["extra"])
    assert extra["editor_model"] == "claude-3-5-sonnet-20241022"
    assert extra["editor_edit_format"] == "editor-diff"
    agents = dict(
        frame.filter(pl.col("benchmark_key") == "polyglot")["agent"].value_counts().iter_rows()
    )
    assert agents["architect"] == 3


def test_quirks(frame: pl.DataFrame) -> None:
    # same model string, two runs: keyed by dirname, both kept
    qwen = frame.filter(
        (pl.col("benchmark_key") == "polyglot")
        & (pl.col("model_name") == "Qwen2.5-Coder-32B-Instruct")
    )
    assert dict(qwen.select("model_key", "value").iter_rows()) == {
        "2024-12-22-13-22-32--polyglot-qwen-diff": 8.0,
        "2024-12-26-00-55-20--Qwen2.5-Coder-32B-Instruct": 16.4,
    }
    # total_cost missing on one record: no cost in extra, score still kept
    qwen_max = _run(frame, "2025-01-28-16-00-03--qwen-max-2025-01-25-polyglot-diff")
    assert qwen_max["value"] == 21.8 and "cost" not in json.loads(qwen_max["extra"])
    # CRLF record in the edit board parses like the others
    granite = _run(frame, "2024-11-28-14-41-46--granite3-dense-8b-whole-1")
    assert (granite["model_name"], granite["value"]) == ("ollama/granite3-dense:8b", 20.3)
    assert granite["row_ref"].endswith("line 2009")


def test_older_snapshot_parses_with_old_names() -> None:
    path = OLDER / "snapshot_2025-08-25" / "polyglot_leaderboard.yml"
    data = path.read_bytes()
    old = aider.parse({POLY: data})
    assert old.height == 67
    assert old["model_key"].n_unique() == 67 and old["model_name"].n_unique() == 64
    gpt5 = old.filter(pl.col("model_name") == "openai/gpt-5").sort("model_key")
    assert gpt5.select("reasoning_effort", "value").rows() == [
        ("high", 88.0),
        ("medium", 86.7),
        ("low", 81.3),
    ]


def test_rejected_rows_kept() -> None:
    data = RUN + b"- model: no dirname\n  pass_rate_2: 50.0\n- just a string\n"
    out = aider.parse({POLY: data})
    assert out.height == 3
    assert out["value"].to_list() == [20.0, None, None]
    reasons = [json.loads(e or "{}").get("rejected") for e in out["extra"]]
    assert reasons == [None, "missing dirname", "run record is a str, not a mapping"]
    assert json.loads(out["extra"][1])["published_value"] == 50.0


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (RUN[:60] + b"\n  - [unclosed", "invalid YAML"),
        (RUN.replace(b"20.0", b".nan"), "non-finite"),
        (RUN.replace(b"20.0", b"120.0"), "outside 0-100"),
        (RUN.replace(b"20.0", b"lots"), "not a number"),
        (RUN.replace(b"model a", b"mod\xe9l"), "not UTF-8"),
        (b"<!DOCTYPE html><html><body>rate limited</body></html>", "HTML page"),
        (b"runs: {}\n", "expected a YAML list"),
        (b"- !!python/object/apply:os.system ['true']\n", "invalid YAML"),
    ],
)
def test_hostile(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message) as info:
        aider.parse({POLY: data})
    assert str(info.value).startswith("aider: cannot parse " + POLY)


def test_hostile_error_names_row() -> None:
    with pytest.raises(ParseError, match=r"polyglot_leaderboard\.yml\[1\] line 8"):
        aider.parse({POLY: RUN + RUN.replace(b"20.0", b"-3")})
    with pytest.raises(ParseError, match="payload missing"):
        aider.parse({EDIT: RUN})
