"""`resolve()` on whole frames: scales, rejections, exclusions, provenance columns, the
per-source resolution on the recorded leaderboards, and its speed."""

from __future__ import annotations

import polars as pl
import pytest

from pipelines.identity.checks import (
    FRONTIER_SOURCES,
    max_unresolved_share,
    unresolved_share_problems,
)
from pipelines.identity.resolve import OUTPUT_COLUMNS, resolve, summarise
from pipelines.sources.base import SCORE_SCHEMA
from tests.support.resolving import with_parse_columns


def rows(*items: dict) -> pl.DataFrame:
    base = {name: None for name in SCORE_SCHEMA}
    frame = pl.DataFrame(
        [{**base, "payload_url": "https://example.org/x", **i} for i in items],
        schema=SCORE_SCHEMA,
        orient="row",
    )
    return with_parse_columns(frame)


def test_scales_and_rejections(registry) -> None:
    out = resolve(
        rows(
            # fraction -> percent
            {
                "source": "epoch_ai",
                "model_key": "gpt-5-2025-08-07_high",
                "benchmark_key": "gpqa_diamond",
                "value": 0.857,
                "unit": "fraction",
                "row_ref": "a",
            },
            # Elo stays as published
            {
                "source": "lmarena",
                "model_key": "o3-mini-high",
                "model_name": "o3-mini-high",
                "benchmark_key": "lmarena_text",
                "value": 1325.0,
                "unit": "elo",
                "row_ref": "b",
            },
            # a unit that does not fit the benchmark is rejected, not converted
            {
                "source": "epoch_ai",
                "model_key": "gpt-5-2025-08-07_high",
                "benchmark_key": "gpqa_diamond",
                "value": 1300.0,
                "unit": "elo",
                "row_ref": "c",
            },
            # outside the valid range
            {
                "source": "livebench",
                "model_key": "glm-4.6",
                "benchmark_key": "python",
                "value": 130.0,
                "unit": "percent",
                "row_ref": "d",
            },
            # no value
            {
                "source": "livebench",
                "model_key": "glm-4.6",
                "benchmark_key": "typos",
                "value": None,
                "unit": "percent",
                "row_ref": "e",
                "extra": '{"rejected":"blank"}',
            },
            # an unknown benchmark key
            {
                "source": "livebench",
                "model_key": "glm-4.6",
                "benchmark_key": "no_such_task",
                "value": 50.0,
                "unit": "percent",
                "row_ref": "f",
            },
        ),
        registry,
    ).sort("row_ref")
    assert set(OUTPUT_COLUMNS) == set(out.columns)
    a, b, c, d, e, f = out.iter_rows(named=True)
    assert (a["resolution"], a["model_id"], a["benchmark_id"]) == (
        "resolved",
        "gpt-5",
        "gpqa_diamond",
    )
    assert (
        a["score"] == pytest.approx(85.7)
        and a["raw_value"] == 0.857
        and a["raw_unit"] == "fraction"
    )
    assert (b["resolution"], b["score"], b["scale"]) == ("resolved", 1325.0, "unbounded")
    assert c["resolution"] == "rejected" and "unit elo" in c["note"]
    assert d["resolution"] == "rejected" and "outside the valid range" in d["note"]
    assert e["resolution"] == "rejected" and e["note"] == "blank"
    assert f["resolution"] == "unresolved_benchmark" and "no_such_task" in f["note"]
    assert a["model_route"] == "catalogue" and a["benchmark_route"] == "alias"
    assert (a["model_base"], a["model_snapshot"], a["model_setting"]) == (
        "gpt-5",
        "2025-08-07",
        "high",
    )


def test_agent_systems_humans_and_ensembles_are_excluded(normalized) -> None:
    swe = normalized.filter(pl.col("source") == "swebench")
    systems = swe.filter(pl.col("agent").is_null())
    assert (systems["resolution"] == "excluded").all()
    per_model = swe.filter(pl.col("agent").str.starts_with("mini-swe-agent"))
    assert (per_model["resolution"] == "resolved").mean() > 0.95
    assert set(per_model["benchmark_id"].drop_nulls()) == {"swe_bench_verified_bash_only"}
    arc = normalized.filter((pl.col("source") == "arc_prize") & (pl.col("model_key") == "mturker"))
    assert (arc["resolution"] == "excluded").all()


def test_resolution_rates_on_the_recorded_leaderboards(normalized) -> None:
    summary = summarise(normalized)
    rate = dict(summary.select("source", "resolution_rate").iter_rows())
    share = dict(summary.select("source", "unresolved_share").iter_rows())
    assert rate["benchpress_matrix"] == 1.0
    for source in ("livebench", "lmarena", "aider", "arc_prize", "open_llm_leaderboard"):
        assert rate[source] > 0.9, source
    for source in FRONTIER_SOURCES:
        assert share[source] <= max_unresolved_share(), source
    assert unresolved_share_problems(summary, max_unresolved_share()) == []


def test_the_unresolved_share_check_fails_past_its_bound(normalized) -> None:
    summary = summarise(normalized)
    problems = unresolved_share_problems(summary, bound=0.05)
    assert any(p.startswith("llm_stats:") for p in problems)
    assert not any(p.startswith("open_llm_leaderboard") for p in problems)  # not a frontier source


def test_resolving_keeps_one_row_per_source_row(scores, normalized) -> None:
    # (its speed is a figure of benchmarks/resolve_speed.py, not a timed test)
    assert normalized.height == scores.height


def test_frontier_models_have_cells_from_several_sources(normalized) -> None:
    resolved = normalized.filter(pl.col("resolution") == "resolved")
    sources = dict(resolved.group_by("model_id").agg(pl.col("source").n_unique()).iter_rows())
    for model_id in (
        "gpt-5",
        "claude-opus-4.5",
        "gemini-2.5-pro",
        "deepseek-r1-0528",
        "qwen3-235b",
        "kimi-k2",
        "o3-mini-high",
        "claude-sonnet-4@nothinking",
        "gpt-5@medium",
    ):
        assert sources.get(model_id, 0) >= 3, (model_id, sources.get(model_id))


def test_omnidocbench_1_5_is_one_scale_after_resolving(normalized) -> None:
    """The paper matrix's `omnidocbench_1.5` holds edit distances (0.099..0.154, lower is better)
    beside two 100 x (1 - distance) cells from llm-stats: all become 100 x (1 - distance)."""
    column = (
        normalized.filter(
            (pl.col("benchmark_id") == "omnidocbench_1.5") & (pl.col("resolution") == "resolved")
        )
        .sort("model_id")
        .select("model_id", "score", "raw_value", "raw_unit")
    )
    got = {m: (round(s, 6), v, u) for m, s, v, u in column.iter_rows()}
    assert got["gpt-5.4"] == (89.1, 89.1, "percent")  # llm-stats' spelling, as published
    assert got["qwen3.6-plus"] == (91.2, 91.2, "percent")
    assert got["doubao-seed-2.0-pro"] == (90.1, 0.099, "edit_distance")
    assert got["gemini-2.5-flash"] == (84.6, 0.154, "edit_distance")
    assert column.height == 11 and column["score"].min() > 80
    # the edit-distance column of the same matrix stays lower-is-better percent (100 x d)
    distance = normalized.filter(
        (pl.col("benchmark_id") == "omnidocbench") & (pl.col("model_id") == "gpt-5.4")
    )
    assert distance["score"].round(6).to_list() == [10.9]
