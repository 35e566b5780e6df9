"""A leaderboard source is its module plus one line in `SOURCES`: what the identity, release-date
and `warehouse stats` code once special-cased by source id (SWE-bench's one-model runs, the
Open LLM Leaderboard's upload days and long tail) is read from the `Source`, so a toy source
registered for one block gets the same treatment from its attributes alone (issue 39)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime

import polars as pl
import pytest

from pipelines.identity.registry import load_registry
from pipelines.identity.resolve import resolve
from pipelines.sources import LONG_TAIL, SOURCES, registered
from pipelines.sources.base import SCORE_SCHEMA, Source, scores_frame
from pipelines.stages.side_information import STATED_SCHEMA, release_dates
from predictor.cli import main
from predictor.util.paths import warehouse_path
from tests.support.resolving import with_parse_columns
from warehouse.db import connect
from warehouse.stats import warehouse_stats

URL = "https://toy.example/board.json"


def parse(payloads: Mapping[str, bytes]) -> pl.DataFrame:
    return scores_frame(json.loads(payloads[URL]))


TOY = Source(
    id="toy_board",
    title="Toy board",
    homepage="https://toy.example/",
    urls=(URL,),
    parse=parse,
    licence="CC0-1.0",
    attribution="nobody",
    priority=995,
    one_model_agent="solo-agent",  # other agents are systems, as on SWE-bench
    dates_are_uploads=True,  # as on the Open LLM Leaderboard
    long_tail="the Toy Board",
)
SOLO = {
    "source": "toy_board",
    "payload_url": URL,
    "row_ref": "[0]",
    "model_key": "20250807_solo_gpt5",
    "model_name": "solo-agent + GPT-5 (2025-08-07)",
    "benchmark_key": "toy_gpqa",
    "value": 85.0,
    "unit": "percent",
    "agent": "solo-agent 1.0",
    "extra": json.dumps({"models": ["gpt-5-2025-08-07"]}),
}
SYSTEM = {
    **SOLO,
    "row_ref": "[1]",
    "model_key": "gpt-5-2025-08-07",  # a plausible model name: only the attribute excludes it
    "agent": "TeamSwarm",
    "extra": json.dumps({"models": ["gpt-5-2025-08-07", "claude-sonnet-4-20250514"]}),
}


@pytest.fixture(scope="module")
def registry():
    """The reviewed registry plus the toy's benchmark alias (step 5 of adding a source)."""
    base = load_registry()
    alias = pl.DataFrame(
        [{"source": "toy_board", "benchmark_key": "toy_gpqa", "benchmark_id": "gpqa_diamond"}]
    )
    aliases = pl.concat([base.benchmark_aliases, alias], how="diagonal").fill_null("")
    return replace(base, benchmark_aliases=aliases)


def _resolved(registry) -> dict[str, dict]:
    frame = with_parse_columns(parse({URL: json.dumps([SOLO, SYSTEM]).encode()}))
    return {row["row_ref"]: row for row in resolve(frame, registry).iter_rows(named=True)}


def test_the_toy_s_one_model_runs_resolve_and_its_systems_are_excluded(registry) -> None:
    with registered(TOY):
        assert SOURCES["toy_board"] is TOY
        rows = _resolved(registry)
    solo, system = rows["[0]"], rows["[1]"]
    assert (solo["resolution"], solo["model_base"], solo["benchmark_id"]) == (
        "resolved",
        "gpt-5",
        "gpqa_diamond",
    )
    assert system["resolution"] == "excluded"
    # unregistered, the same rows are plain one-model rows: the attribute did it, not the id
    assert "toy_board" not in SOURCES
    assert _resolved(registry)["[1]"]["resolution"] != "excluded"


def test_the_toy_s_upload_days_give_way_to_stated_releases(registry) -> None:
    fetched = datetime(2026, 1, 1, tzinfo=UTC)
    stated = pl.DataFrame(
        [
            ("toy-model-7b", "toy_board", "2024-06-01", fetched),
            ("toy-model-7b", "livebench", "2024-09-01", fetched),
            ("toy-only-7b", "toy_board", "2024-06-01", fetched),
        ],
        schema=STATED_SCHEMA,
        orient="row",
    )
    ids = ["toy-model-7b", "toy-only-7b"]
    cells = pl.DataFrame(schema={"model_id": pl.String})
    with registered(TOY):
        dates = release_dates(ids, registry.catalogue, cells, stated)
    assert dates.select("release_date", "date_source").rows() == [
        ("2024-09-01", "livebench"),
        ("2024-06-01", "toy_board"),  # an upload day is still better than nothing
    ]
    assert release_dates(ids, registry.catalogue, cells, stated)["date_source"][0] == "toy_board"


def test_warehouse_stats_counts_the_matrix_without_the_toy_long_tail(capsys) -> None:
    path = warehouse_path()
    cells = [("m1", "b1", "livebench"), ("t1", "b1", "toy_board"), ("t2", "b2", "toy_board")]
    with connect(path) as con:
        for model_id, benchmark_id, source in cells:
            con.execute(
                "INSERT INTO matrix_cells (model_id, benchmark_id, score, source, payload_url,"
                " fetched_at, n_observations) VALUES (?, ?, 50.0, ?, ?, now(), 1)",
                [model_id, benchmark_id, source, URL],
            )
    with registered(TOY):
        assert LONG_TAIL["toy_board"] == "the Toy Board"
        matrix = warehouse_stats(path, long_tail=LONG_TAIL)["matrix"]
        assert main(["warehouse", "stats"]) == 0
    assert "toy_board" not in LONG_TAIL
    assert matrix["without_toy_board"] == {"models": 1, "benchmarks": 1, "cells": 1}
    assert matrix["without_open_llm_leaderboard"] == {"models": 3, "benchmarks": 2, "cells": 3}
    assert (
        "matrix: 3 models x 2 benchmarks, 3 cells, 0 conflicts (without the Open LLM "
        "Leaderboard: 3 models x 2 benchmarks, 3 cells) (without the Toy Board: 1 models x 1 "
        "benchmarks, 1 cells)"
    ) in capsys.readouterr().out.splitlines()


def test_a_toy_must_bring_its_own_id_and_priority() -> None:
    with (
        pytest.raises(ValueError, match="registered twice"),
        registered(replace(TOY, id="livebench")),
    ):
        pass
    with (
        pytest.raises(ValueError, match="same priority"),
        registered(replace(TOY, priority=SOURCES["livebench"].priority)),
    ):
        pass
    assert "toy_board" not in SOURCES and set(SCORE_SCHEMA) >= {"agent", "extra"}
