"""Aider: runs over fewer (or other) exercises than the board's set do not publish (recorded
payloads in -> exact rejected rows and published cells out)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath
from pipelines.sources import aider
from pipelines.transforms.matrix import build_matrix
from tests.support.resolving import resolved

POLY, EDIT = aider.POLYGLOT_URL, aider.EDIT_URL
RUN = b"""- dirname: run-a
  model: model a
  edit_format: diff
  pass_rate_2: 20.0
  test_cases: 225
"""


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return aider.parse(
        {url: (DEFAULT_REPLAY_ROOT / replay_relpath(url)).read_bytes() for url in (POLY, EDIT)}
    )


def _rejected(frame: pl.DataFrame) -> dict[str, tuple[str, float]]:
    rows = frame.filter(pl.col("value").is_null())
    return {
        ref: (json.loads(extra)["rejected"], json.loads(extra)["published_value"])
        for ref, extra in rows.select("row_ref", "extra").iter_rows()
    }


def test_partial_runs_rejected(frame: pl.DataFrame) -> None:
    def reason(cases: int, full: int) -> str:
        return f"partial run: test_cases {cases} is not the board's {full} exercises"

    assert _rejected(frame) == {
        "edit_leaderboard.yml[17] line 389": (reason(33, 133), 57.6),
        "edit_leaderboard.yml[47] line 1093": (reason(36, 133), 61.1),
        "edit_leaderboard.yml[97] line 2208": (reason(225, 133), 27.1),
    }
    counts = dict(
        frame.filter(pl.col("value").is_null())["benchmark_key"].value_counts().iter_rows()
    )
    assert counts == {"edit": 3}
    o1 = frame.filter(pl.col("row_ref") == "edit_leaderboard.yml[97] line 2208").row(0, named=True)
    assert o1["model_key"] == "2024-12-21-22-06-01--polyglot-o1-mini-whole"


def test_o1_mini_cells() -> None:
    payloads = {
        url: (DEFAULT_REPLAY_ROOT / replay_relpath(url)).read_bytes() for url in (POLY, EDIT)
    }
    normalized = resolved(aider.parse(payloads))
    cells = build_matrix(normalized)[0].filter(pl.col("model_id") == "o1-mini")
    assert cells.select("benchmark_id", "score", "row_ref").sort("benchmark_id").rows() == [
        # the 133-case run, not the polyglot run filed in the edit board (27.1)
        ("aider_code_editing_whole", 70.7, "edit_leaderboard.yml[46] line 1070"),
        ("aider_polyglot_whole", 32.9, "polyglot_leaderboard.yml[9] line 235"),
    ]  # no aider_code_editing_diff: its only run had 36 cases (61.1)
    partial = normalized.filter(pl.col("row_ref") == "edit_leaderboard.yml[47] line 1093")
    assert partial.select("resolution", "note").row(0) == (
        "rejected",
        "partial run: test_cases 36 is not the board's 133 exercises",
    )


CASES = [b"225", b"223", b"222", b"226"]  # full, 2 short (kept), 3 short, more than the set


def test_full_and_nearly_full_and_unstated_runs_kept() -> None:
    runs = [RUN.replace(b"run-a", f"run-{n}".encode()).replace(b"225", n) for n in CASES]
    out = aider.parse({POLY: b"".join(runs)})
    assert out["value"].to_list() == [20.0, 20.0, None, None]
    no_count = aider.parse({POLY: RUN.replace(b"  test_cases: 225\n", b"")})
    assert no_count["value"].to_list() == [20.0]


def test_a_test_cases_value_that_is_not_a_count_is_rejected_not_a_crash() -> None:
    odd = [b'"225"', b"[225]", b"true", b"2024-01-01"]
    text = b"".join(
        RUN.replace(b"run-a", b"run-%d" % i).replace(b"225", v) for i, v in enumerate(odd)
    )
    out = aider.parse({POLY: text})
    assert out["value"].to_list() == [None] * 4
    reasons = [json.loads(e)["rejected"] for e in out["extra"]]
    assert reasons[0] == "test_cases '225' is not a count of exercises"
    assert all(r.endswith("is not a count of exercises") for r in reasons)
