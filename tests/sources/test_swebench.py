"""SWE-bench leaderboards.json: recorded file via the loopback mirror, old schema, hostile input."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest

from pipelines.sources import swebench
from pipelines.sources.base import SCORE_SCHEMA, ParseError
from tests.support.fault_edits import JsonRecordsEdit, Target
from tests.support.fetching import fetch_via_mirror
from tests.support.shared_data import older_snapshot

# where the fault suite's content faults go (tests/faults/faults.py collects it)
FAULT_TARGET = Target(
    swebench.SOURCE.urls[0],
    JsonRecordsEdit(
        lambda d: d["leaderboards"][0]["results"], "folder", "resolved", "folder_name", "name"
    ),
    "leaderboards[0].results[0]",
)
URL = swebench.URL
OLDER = older_snapshot("swebench")  # the older recorded copies, kept in the repo
RUN = {"name": "Agent X", "folder": "20250101_x", "resolved": 41.5, "date": "2025-01-01"}


def _doc(*runs: object, board: str = "Verified") -> bytes:
    return json.dumps({"leaderboards": [{"name": board, "results": list(runs)}]}).encode()


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath

    return swebench.parse({URL: (DEFAULT_REPLAY_ROOT / replay_relpath(URL)).read_bytes()})


def _row(frame: pl.DataFrame, board: str, folder: str) -> dict:
    sel = frame.filter((pl.col("benchmark_key") == board) & (pl.col("model_key") == folder))
    assert sel.height == 1
    return sel.row(0, named=True)


def test_fetch_through_mirror(mirror_server) -> None:
    assert swebench.SOURCE.max_bytes > 4_192_959  # the recorded file is 4.2 MB
    payloads = fetch_via_mirror(swebench.SOURCE, mirror_server.base_url)
    assert list(payloads) == [URL] and len(payloads[URL]) == 4_192_959
    out = swebench.parse(payloads)
    assert out.schema == pl.Schema(SCORE_SCHEMA)
    assert out.height == 322


def test_counts(frame: pl.DataFrame) -> None:
    per_board = {
        board: (n, keys, names)
        for board, n, keys, names in frame.group_by("benchmark_key")
        .agg(pl.len(), pl.col("model_key").n_unique(), pl.col("model_name").n_unique())
        .iter_rows()
    }
    assert per_board == {
        "bash-only": (31, 31, 31),
        "Verified": (162, 162, 153),  # devlo x3, Warp/TRAE/... x2: keyed by folder
        "Lite": (84, 84, 81),
        "Test": (23, 23, 23),
        "Multimodal": (22, 22, 22),
    }
    assert frame.height == 322 and frame["model_key"].n_unique() == 250
    assert frame["unit"].unique().to_list() == ["percent"]
    assert frame["value"].null_count() == 0
    assert (frame["value"].min(), frame["value"].max()) == (0.17, 78.8)


def test_exact_values(frame: pl.DataFrame) -> None:
    opus = _row(frame, "bash-only", "20251124_mini-v1.16.0_claude-opus-4-5-20251101")
    assert (opus["model_name"], opus["value"], opus["agent"]) == (
        "Claude 4.5 Opus medium (20251101)",
        74.4,
        "mini-swe-agent 1.16.0",
    )
    assert opus["row_ref"] == "leaderboards[0].results[0] (bash-only)"
    extra = json.loads(opus["extra"])
    assert extra["models"] == ["claude-opus-4-5-20251101"]
    assert (extra["organization"], extra["attempts"]) == ("Anthropic", "1")
    assert extra["cost"] == 360.6224985 and extra["instance_cost"] == 0.721244997
    assert (extra["per_instance_count"], extra["per_instance_resolved"]) == (500, 372)
    assert extra["eval_date"] == "2025-11-24"

    trae = _row(frame, "Verified", "20250928_trae_doubao_seed_code")
    assert (trae["model_name"], trae["value"], trae["agent"]) == (
        "TRAE + Doubao-Seed-Code",
        78.8,
        None,
    )
    extra = json.loads(trae["extra"])
    assert extra["models"] == ["Doubao-Seed-Code", "Doubao-Seed-1.6"]
    assert extra["attempts"] == "2+"


def test_quirks(frame: pl.DataFrame) -> None:
    devlo = frame.filter(
        (pl.col("benchmark_key") == "Verified") & (pl.col("model_name") == "devlo")
    )
    assert dict(devlo.select("model_key", "value").iter_rows()) == {
        "20250519_devlo": 70.2,
        "20241213_devlo": 58.2,
        "20241108_devlo": 54.2,
    }
    # bash-only runs are also listed on Verified, with the same folder and score
    bash = frame.filter(pl.col("benchmark_key") == "bash-only").select("model_key", "value")
    verified = frame.filter(pl.col("benchmark_key") == "Verified").select("model_key", "value")
    assert bash.join(verified, on="model_key").height == 31
    assert frame.filter(pl.col("agent").is_not_null()).height == 62
    # per-instance details agree with the headline score, except on three runs whose details
    # disagree (averaged repeats?); the published headline `resolved` is kept as the value
    detailed = frame.filter(pl.col("extra").str.contains("per_instance_count"))
    assert detailed.height == 50  # 25 runs, on bash-only and again on Verified
    disagree = set()
    for key, value, raw in detailed.select("model_key", "value", "extra").iter_rows():
        facts = json.loads(raw)
        if facts["per_instance_resolved"] / facts["per_instance_count"] * 100 != pytest.approx(
            value
        ):
            disagree.add(key)
    assert disagree == {
        "20250726_mini-v1.0.0_claude-sonnet-4-20250514",
        "20250720_mini-v0.0.0-claude-3-7-sonnet-20250219",
        "20250720_mini-v0.0.0-Llama-4-Maverick-17B-Instruct",
    }
    # no model tag on some agent systems (kept, models absent)
    no_model = frame.filter(~pl.col("extra").str.contains('"models"'))
    assert no_model.height == 74


def test_older_snapshot_with_13_keys() -> None:
    path = OLDER / "snapshot_2025-08-25" / "leaderboards.json"
    old = swebench.parse({URL: path.read_bytes()})
    assert old.height == 275
    sizes = dict(old.group_by("benchmark_key").len().iter_rows())
    assert sizes == {"bash-only": 20, "Verified": 132, "Lite": 80, "Test": 22, "Multimodal": 21}
    first = old.row(0, named=True)
    assert (first["model_key"], first["value"]) == (
        "20250802_mini-v1.0.0_claude-4-opus-20250514",
        67.6,
    )
    assert first["agent"] == "mini-swe-agent"  # no version field in the old schema
    assert "cost" not in json.loads(first["extra"])


def test_rejected_rows_kept() -> None:
    runs = [RUN, {"name": "no folder", "resolved": 12.0}, "oops", {**RUN, "resolved": ""}]
    out = swebench.parse({URL: _doc(*runs)})
    assert out["value"].to_list() == [41.5, None, None, None]
    reasons = [json.loads(e)["rejected"] if "rejected" in e else None for e in out["extra"]]
    assert reasons == [None, "missing folder", "result is a str, not an object", "blank resolved"]
    assert json.loads(out["extra"][1])["published_value"] == 12.0


@pytest.mark.parametrize(
    ("data", "message", "where"),
    [
        (_doc(RUN)[:-10], "invalid JSON", "line 1"),
        (_doc(RUN).replace(b"41.5", b"NaN"), "non-finite", None),
        (_doc({**RUN, "resolved": 101.0}), "outside 0-100", r"leaderboards\[0\]\.results\[0\]"),
        (_doc({**RUN, "resolved": "x"}), "not a number", r"results\[0\] \(Verified\)\.resolved"),
        (_doc(RUN).replace(b"Agent X", b"Agent \xff"), "not UTF-8", None),
        (b"<html><body>404</body></html>", "HTML page", None),
        (b'{"boards": []}', "missing key 'leaderboards'", None),
        (b'{"leaderboards": [{"name": "V"}]}', "without a 'results' list", r"leaderboards\[0\]"),
        (b'{"leaderboards": [{"results": []}]}', "without a 'name'", r"leaderboards\[0\]"),
    ],
)
def test_hostile(data: bytes, message: str, where: str | None) -> None:
    with pytest.raises(ParseError, match=message) as info:
        swebench.parse({URL: data})
    assert str(info.value).startswith(f"swebench: cannot parse {URL}")
    if where:
        assert info.value.row is not None
        assert re.search(where, info.value.row)
