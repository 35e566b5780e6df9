"""LiveBench: the recorded table and categories via the loopback mirror, hostile input."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pipelines.sources import ParseError, livebench
from tests.support.fault_edits import CsvEdit, Target
from tests.support.fetching import fetch_via_mirror

# where the fault suite's content faults go (tests/faults/faults.py collects it)
FAULT_TARGET = Target(
    livebench.SOURCE.urls[0], CsvEdit("model", "AMPS_Hard", "Model"), "table row 1"
)


def test_livebench_parses_rows_and_keeps_the_ragged_one(mirror_server) -> None:
    frame = livebench.parse(fetch_via_mirror(livebench.SOURCE, mirror_server.base_url))
    assert frame.height == 127 * 23
    assert frame["model_key"].n_unique() == 127
    assert frame["benchmark_key"].n_unique() == 23
    ragged = frame.filter(pl.col("model_key") == "nemotron-3-super-120b-a12b")
    assert ragged.height == 23 and ragged["value"].null_count() == 23
    assert "ragged row: 20 values for 23 tasks" in ragged["extra"][0]
    cell = frame.filter(
        (pl.col("model_key") == "claude-4-1-opus-20250805-base")
        & (pl.col("benchmark_key") == "code_completion")
    ).row(0, named=True)
    assert cell["value"] == 76.087
    assert json.loads(cell["extra"]) == {"category": "Coding", "release": "2026_01_08"}


def test_livebench_rejects_out_of_range_and_non_utf8() -> None:
    table, cats = livebench.TABLE_URL, livebench.CATEGORIES_URL
    with pytest.raises(ParseError, match=r"line 2: AMPS_Hard=140.0 outside 0-100"):
        livebench.parse({table: b"model,AMPS_Hard\nx,140\n", cats: b"{}"})
    with pytest.raises(ParseError, match="not UTF-8"):
        livebench.parse({table: b"model,AMPS_Hard\n\xff\xfe,1\n", cats: b"{}"})
    with pytest.raises(ParseError, match="HTML page"):
        livebench.parse({table: b"<!DOCTYPE html><html></html>", cats: b"{}"})
