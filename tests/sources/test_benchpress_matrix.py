"""The BenchPress matrix (data.json): recorded bytes via the loopback mirror, hostile input."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pipelines.sources import SCORE_SCHEMA, ParseError, benchpress_matrix
from tests.support.fault_edits import Target, benchpress_matrix_edit
from tests.support.fetching import fetch_via_mirror

# where the fault suite's content faults go (tests/faults/faults.py collects it)
FAULT_TARGET = Target(
    benchpress_matrix.SOURCE.urls[0], benchpress_matrix_edit, "models[0] / observed[0]"
)


def test_benchpress_matrix_parses_every_observed_cell(mirror_server) -> None:
    frame = benchpress_matrix.parse(
        fetch_via_mirror(benchpress_matrix.SOURCE, mirror_server.base_url)
    )
    assert frame.schema == pl.Schema(SCORE_SCHEMA)
    assert frame.height == 2604
    assert frame["model_key"].n_unique() == 84
    # 133 columns; the Seed 2.0 card's LongFact cells are two benchmarks of their own
    assert frame["benchmark_key"].n_unique() == 135
    units = dict(frame.group_by("unit").len().iter_rows())
    assert units == {
        "percent": 2503,
        "fraction": 8,  # omnidocbench: an edit distance on 0-1, made percent downstream
        "edit_distance": 9,  # omnidocbench_1.5's cells at or below 1 (the others are 1 - d)
        "elo": 31,
        "rating": 27,
        "dollars": 8,
        "score": 18,
    }
    omnidoc = frame.filter(pl.col("benchmark_key") == "omnidocbench")
    assert omnidoc["unit"].unique().to_list() == ["fraction"]
    assert omnidoc["value"].max() == 0.154
    v15 = frame.filter(pl.col("benchmark_key") == "omnidocbench_1.5").sort("value")
    assert dict(v15.group_by("unit").len().iter_rows()) == {"edit_distance": 9, "percent": 2}
    assert v15.filter(pl.col("unit") == "percent")["value"].to_list() == [89.1, 91.2]
    o3_mini = frame.filter(
        (pl.col("model_key") == "o3-mini-high") & (pl.col("benchmark_key") == "aider_polyglot_diff")
    ).row(0, named=True)
    assert o3_mini["value"] == 60.4
    assert o3_mini["reasoning_effort"] == "high"
    assert json.loads(o3_mini["extra"])["citation_url"] == "https://openai.com/index/gpt-4-1/"


def test_benchpress_matrix_rejects_nan_and_wrong_shape() -> None:
    url = benchpress_matrix.URL
    with pytest.raises(ParseError, match="non-finite number 'NaN'"):
        benchpress_matrix.parse({url: b'{"models": [], "benchmarks": [], "observed": [NaN]}'})
    with pytest.raises(ParseError, match="expected keys models, benchmarks, observed"):
        benchpress_matrix.parse({url: b'{"models": []}'})
    doc = {"models": [{"id": "m"}], "benchmarks": [{"id": "b"}], "observed": [[1.0, 2.0]]}
    with pytest.raises(ParseError, match="row 0"):
        benchpress_matrix.parse({url: json.dumps(doc).encode()})
    twice = {"models": [{"id": "m"}, {"id": "m"}], "benchmarks": [{"id": "b"}]}
    twice["observed"] = [[70.0], [71.0]]
    with pytest.raises(ParseError, match=r"'m'.*'b' appears twice.*observed\[0\]\[0\]"):
        benchpress_matrix.parse({url: json.dumps(twice).encode()})
