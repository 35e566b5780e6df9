"""ARC Prize tables: recorded JSON via the loopback mirror, prototype snapshot, hostile input."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pipelines.sources import arc_prize as arc
from pipelines.sources.base import SCORE_SCHEMA, ParseError
from tests.support.fault_edits import JsonRecordsEdit, Target
from tests.support.fetching import fetch_via_mirror
from tests.support.shared_data import older_snapshot

# where the fault suite's content faults go (tests/faults/faults.py collects it)
FAULT_TARGET = Target(
    arc.SOURCE.urls[0],
    JsonRecordsEdit(lambda d: d, "modelId", "score", "model_id"),
    "evaluations[0]",
)
OLDER = older_snapshot("arc_prize")  # the older recorded copies, kept in the repo
EV, MO, DS, PR = arc.EVALUATIONS_URL, arc.MODELS_URL, arc.DATASETS_URL, arc.PROVIDERS_URL
MODELS = [{"id": "m1", "displayName": "Model One", "providerId": "P"}]
DATASETS = [{"id": "v2_Semi_Private", "displayName": "ARC-AGI-2"}]
EVAL = {"datasetId": "v2_Semi_Private", "modelId": "m1", "score": 0.25, "costPerTask": 1.5}


def _payloads(evaluations: object = (EVAL,), models: object = MODELS) -> dict[str, bytes]:
    def dump(obj: object) -> bytes:
        return json.dumps(list(obj) if isinstance(obj, tuple) else obj).encode()

    return {EV: dump(evaluations), MO: dump(models), DS: dump(DATASETS)}


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath

    return arc.parse(
        {url: (DEFAULT_REPLAY_ROOT / replay_relpath(url)).read_bytes() for url in (EV, MO, DS, PR)}
    )


def _row(frame: pl.DataFrame, ref: str) -> dict:
    sel = frame.filter(pl.col("row_ref") == ref)
    assert sel.height == 1
    return sel.row(0, named=True)


def test_fetch_through_mirror(mirror_server) -> None:
    payloads = fetch_via_mirror(arc.SOURCE, mirror_server.base_url)
    assert set(payloads) == {EV, MO, DS, PR}
    out = arc.parse(payloads)
    assert out.schema == pl.Schema(SCORE_SCHEMA)
    assert out.height == 589


def test_counts(frame: pl.DataFrame) -> None:
    assert frame.height == 589  # one row per evaluation record
    assert frame["model_key"].n_unique() == 165  # model ids with an evaluation (of 181)
    assert frame["value"].null_count() == 0
    assert frame["unit"].unique().to_list() == ["fraction"]
    assert (frame["value"].min(), frame["value"].max()) == (0.0, 1.0)
    sizes = dict(frame.group_by("benchmark_key").len().iter_rows())
    assert sizes == {
        "v2_Semi_Private": 156,
        "v1_Semi_Private": 154,
        "v2_Public_Eval": 140,
        "v1_Public_Eval": 129,
        "v3_Semi_Private": 7,
        "v2_Private_Eval": 3,
    }
    names = dict(frame.select("benchmark_key", "benchmark_name").unique().iter_rows())
    assert names["v2_Semi_Private"] == "ARC-AGI-2" and names["v3_Semi_Private"] == "ARC-AGI-3"
    assert frame.select("reasoning_effort", "thinking_budget", "agent").null_count().row(0) == (
        589,
        589,
        589,
    )


def test_exact_values(frame: pl.DataFrame) -> None:
    human = _row(frame, "evaluations[0]")
    assert (human["model_key"], human["model_name"], human["value"]) == (
        "2025_human_panel",
        "Human Panel",
        0.98,
    )
    assert json.loads(human["extra"])["cost_per_task"] == 17.0

    gpt5 = _row(frame, "evaluations[227]")
    assert (gpt5["model_key"], gpt5["model_name"], gpt5["benchmark_key"], gpt5["value"]) == (
        "gpt-5-2025-08-07-high",
        "GPT-5 (High)",
        "v1_Public_Eval",
        0.6588,
    )
    extra = json.loads(gpt5["extra"])
    assert extra["cost_per_task"] == 0.3924 and extra["organization"] == "OpenAI"
    assert extra["model_type"] == "CoT" and extra["release_date"] == "2025-08-07T00:00:00.000Z"

    v3 = _row(frame, "evaluations[534]")
    assert (v3["model_name"], v3["benchmark_name"], v3["value"]) == (
        "Anthropic Opus 4.6 (Max)",
        "ARC-AGI-3",
        0.0051,
    )
    extra = json.loads(v3["extra"])
    assert extra["cost"] == 8866.2 and "cost_per_task" not in extra  # ARC-AGI-3: total cost


def test_quirks(frame: pl.DataFrame) -> None:
    # exact duplicate evaluation: both kept, the second points at the first
    dup = _row(frame, "evaluations[239]")
    assert json.loads(dup["extra"])["duplicate_of"] == "evaluations[238]"
    assert frame.filter(pl.col("extra").str.contains("duplicate_of")).height == 1
    # duplicate model ids in models.json: the last entry wins (as the site's leaderboard files)
    o3 = frame.filter(pl.col("model_key") == "o3-mini-2025-01-31-low")
    assert o3.height == 4
    for raw in o3["extra"]:
        facts = json.loads(raw)
        assert facts["model_type"] == "CoT" and facts["model_entries"] == 2
        assert "model_entries_conflict" in facts
    gpt41 = json.loads(frame.filter(pl.col("model_key") == "gpt-4-1-2025-04-14")["extra"][0])
    assert gpt41["model_entries"] == 3 and "model_entries_conflict" not in gpt41  # identical
    # hidden rows are kept, flagged display=false
    hidden = frame.filter(pl.col("extra").str.contains('"display":false'))
    assert hidden.height == 20
    assert _row(frame, "evaluations[36]")["model_name"] == "Avg. Mturker"
    # 7 ARC-AGI-3 rows have no costPerTask, only a total cost
    assert frame.filter(~pl.col("extra").str.contains("cost_per_task")).height == 7
    # provider display names from providers.json
    assert frame.filter(pl.col("extra").str.contains('"organization":"J. Berman"')).height > 0


def test_prototype_snapshot() -> None:
    folder = OLDER / "snapshot_2025-04-16_prototype"
    payloads = {url: (folder / url.rsplit("/", 1)[-1]).read_bytes() for url in (EV, MO, DS, PR)}
    old = arc.parse(payloads)
    assert old.height == 89
    assert old["model_key"].n_unique() == 30 and old["benchmark_key"].n_unique() == 5
    gemini = old.filter(pl.col("model_key") == "gemini-2.5-pro-exp-03-25")
    assert gemini.height == 4  # costPerTask "-" on these rows: no cost, score kept
    assert gemini["value"].null_count() == 0
    assert not gemini.filter(pl.col("extra").str.contains("cost_per_task")).height


def test_providers_optional_and_unknown_ids() -> None:
    evals = (EVAL, {**EVAL, "modelId": "ghost", "datasetId": "v9"})
    out = arc.parse(_payloads(evals))
    assert out["model_name"].to_list() == ["Model One", "ghost"]
    assert out["benchmark_name"].to_list() == ["ARC-AGI-2", "v9"]
    facts = json.loads(out["extra"][1])
    assert facts["unknown_model"] is True and facts["unknown_dataset"] is True
    assert json.loads(out["extra"][0])["organization"] == "P"


def test_rejected_rows_kept() -> None:
    evals = (EVAL, {**EVAL, "modelId": ""}, {"datasetId": "v2_Semi_Private", "modelId": "m1"}, 7)
    out = arc.parse(_payloads(evals))
    assert out["value"].to_list() == [0.25, None, None, None]
    reasons = [json.loads(e).get("rejected") for e in out["extra"]]
    assert reasons == [
        None,
        "missing modelId",
        "missing score",
        "evaluation is a int, not an object",
    ]
    assert json.loads(out["extra"][1])["published_value"] == 0.25


@pytest.mark.parametrize(
    ("payloads", "url", "message"),
    [
        ({**_payloads(), EV: _payloads()[EV][:-5]}, EV, "invalid JSON"),
        ({**_payloads(), EV: _payloads()[EV].replace(b"0.25", b"NaN")}, EV, "non-finite"),
        (_payloads(({**EVAL, "score": 25},)), EV, r"at evaluations\[0\]: score=25.0 outside 0-1"),
        (_payloads(({**EVAL, "score": "high"},)), EV, r"at evaluations\[0\]\.score: not a number"),
        (_payloads(({**EVAL, "score": True},)), EV, "boolean"),
        ({**_payloads(), MO: b'[{"id": "m\xff"}]'}, MO, "not UTF-8"),
        ({**_payloads(), DS: b"<!doctype html><title>x</title>"}, DS, "HTML page"),
        ({**_payloads(), EV: b'{"evaluations": []}'}, EV, "expected a JSON list"),
        (
            _payloads(models=[{"displayName": "no id"}]),
            MO,
            r"at models\[0\]: entry without an 'id'",
        ),
        ({EV: _payloads()[EV], MO: _payloads()[MO]}, DS, "payload missing"),
    ],
)
def test_hostile(payloads: dict[str, bytes], url: str, message: str) -> None:
    with pytest.raises(ParseError, match=message) as info:
        arc.parse(payloads)
    assert str(info.value).startswith(f"arc_prize: cannot parse {url}")
