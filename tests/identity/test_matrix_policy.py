"""The dedup and conflict policy of `build_matrix` (module docstring of transforms/matrix.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from pipelines.transforms.matrix import CELL_COLUMNS, build_matrix, select_for_fit

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = datetime(2026, 2, 1, tzinfo=UTC)
BENCHMARKS = pl.DataFrame(
    {
        "benchmark_id": ["arc_agi_1", "terminal_bench", "gpqa_diamond"],
        "owner_source": ["arc_prize", "", "epoch_ai"],
        "reference_agent": ["", "Terminus 2", ""],
    }
)


def obs(source, score, *, model="m", bench="arc_agi_1", agent=None, ref="r", at=T0, date=None):
    return {
        "source": source,
        "model_id": model,
        "benchmark_id": bench,
        "score": score,
        "resolution": "resolved",
        "payload_url": f"https://{source}.example/data",
        "payload_sha256": "0" * 64,
        "fetched_at": at,
        "row_ref": ref,
        "model_key": f"{source}-key",
        "model_name": f"{source} name",
        "benchmark_key": bench,
        "setting": None,
        "model_setting": None,
        "agent": agent,
        "eval_date": date,
        "raw_value": score,
        "raw_unit": "percent",
    }


def matrix(*items, threshold=3.0):
    return build_matrix(pl.DataFrame(list(items)), threshold=threshold, benchmarks=BENCHMARKS)


def test_benchpress_then_owner_then_vendor_then_aggregator() -> None:
    cells, _ = matrix(obs("epoch_ai", 10), obs("llm_stats", 20), obs("arc_prize", 30))
    assert cells.row(0, named=True)["source"] == "arc_prize"  # the benchmark's owner
    cells, _ = matrix(obs("epoch_ai", 10), obs("llm_stats", 20))
    assert cells.row(0, named=True)["source"] == "llm_stats"  # first-party before aggregator
    cells, _ = matrix(obs("arc_prize", 30), obs("benchpress_matrix", 40))
    assert cells.row(0, named=True)["source"] == "benchpress_matrix"
    # Epoch owns its own runs (gpqa_diamond), even before vendor numbers
    cells, _ = matrix(
        obs("llm_stats", 80, bench="gpqa_diamond"), obs("epoch_ai", 70, bench="gpqa_diamond")
    )
    assert cells.row(0, named=True)["source"] == "epoch_ai"


def test_reference_agent_then_no_agent_within_one_source() -> None:
    cells, _ = matrix(
        obs("epoch_ai", 60, bench="terminal_bench", agent="Droid", ref="a"),
        obs("epoch_ai", 40, bench="terminal_bench", agent="Terminus 2", ref="b"),
        obs("epoch_ai", 50, bench="terminal_bench", agent="OpenHands", ref="c"),
    )
    assert cells.row(0, named=True)["agent"] == "Terminus 2"


def test_newest_evaluation_then_newest_fetch_then_row_order() -> None:
    cells, _ = matrix(
        obs("aider", 10, ref="a", date="2025-01-01"), obs("aider", 20, ref="b", date="2025-06-01")
    )
    assert cells.row(0, named=True)["score"] == 20
    cells, _ = matrix(obs("aider", 10, ref="a", at=T1), obs("aider", 20, ref="b", at=T0))
    assert cells.row(0, named=True)["score"] == 10
    cells, _ = matrix(obs("aider", 10, ref="b"), obs("aider", 20, ref="a"))
    assert cells.row(0, named=True)["score"] == 20


def test_choice_does_not_depend_on_input_order() -> None:
    items = [
        obs("epoch_ai", 10, ref="x"),
        obs("llm_stats", 20, ref="y"),
        obs("epoch_ai", 12, ref="z", model="n"),
        obs("lmarena", 30, ref="w", model="n"),
    ]
    first = matrix(*items)
    second = matrix(*reversed(items))
    assert first[0].equals(second[0]) and first[1].equals(second[1])


def test_conflicts_over_three_points_are_kept_with_both_sides() -> None:
    cells, conflicts = matrix(
        obs("arc_prize", 50.0, ref="a"),
        obs("epoch_ai", 52.5, ref="b"),  # within 3 points: not a conflict
        obs("llm_stats", 60.0, ref="c"),
    )
    assert cells.height == 1
    cell = cells.row(0, named=True)
    assert cell["n_observations"] == 3 and cell["n_sources"] == 3
    assert conflicts.height == 1
    c = conflicts.row(0, named=True)
    assert (c["chosen_source"], c["chosen_score"]) == ("arc_prize", 50.0)
    assert (c["other_source"], c["other_score"], c["difference"]) == ("llm_stats", 60.0, 10.0)
    assert c["chosen_url"].startswith("https://arc_prize") and c["other_url"].startswith(
        "https://llm_stats"
    )
    assert c["other_row_ref"] == "c" and c["chosen_model_key"] == "arc_prize-key"


def test_cells_keep_provenance_and_only_resolved_rows_count() -> None:
    unresolved = {**obs("epoch_ai", 99, ref="u"), "resolution": "unresolved_model"}
    cells, _ = matrix(obs("aider", 10), unresolved)
    assert cells.columns == list(CELL_COLUMNS)
    cell = cells.row(0, named=True)
    assert cell["score"] == 10 and cell["n_observations"] == 1
    for column in ("source", "payload_url", "payload_sha256", "fetched_at", "row_ref", "model_key"):
        assert cell[column] is not None


@pytest.mark.parametrize(("min_model", "min_bench"), [(2, 2), (15, 8)])
def test_select_for_fit_meets_both_minimums(min_model, min_bench) -> None:
    items = [
        obs("aider", float(i + j), model=f"m{i}", bench=f"b{j}", ref=f"{i}-{j}")
        for i in range(30)
        for j in range(30)
        if (i + j) % 3 or i < 3
    ]
    cells, _ = matrix(*items)
    kept = select_for_fit(cells, min_model, min_bench)
    assert kept.height > 0
    assert kept.group_by("model_id").len()["len"].min() >= min_model
    assert kept.group_by("benchmark_id").len()["len"].min() >= min_bench
