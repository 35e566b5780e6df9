"""LongFact in the BenchPress matrix: the hallucination rates (lower is better) and the Seed 2.0
model card's higher-is-better score sit in one column of the payload; parsed, they are two
benchmarks (the recorded payload's bytes, through the parser and the reviewed registry)."""

from __future__ import annotations

import json

import polars as pl

from pipelines.bundle_pretrained import recorded_payload
from pipelines.identity.registry import load_registry
from pipelines.identity.resolve import resolve
from pipelines.sources import benchpress_matrix


def longfact_rows() -> pl.DataFrame:
    data, _ = recorded_payload()
    frame = benchpress_matrix.parse({benchpress_matrix.URL: data})
    return frame.filter(pl.col("benchmark_key").str.starts_with("longfact")).sort(
        "benchmark_key", "value", "model_key"
    )


def test_the_rate_keeps_openai_cells_and_the_card_score_gets_its_own_benchmark() -> None:
    rows = longfact_rows()
    columns = {
        key: list(zip(group["model_key"], group["value"], strict=True))
        for (key,), group in rows.group_by("benchmark_key", maintain_order=True)
    }
    assert columns == {
        "longfact_concepts": [
            ("gpt-4.1", 0.7),
            ("gpt-5-mini", 0.7),
            ("gpt-5", 1.0),
            ("gpt-5-nano", 1.0),
            ("gpt-4.1-mini", 1.1),
            ("o4-mini-high", 3.0),
            ("o3-high", 5.2),
        ],
        "longfact_concepts_score": [
            ("doubao-seed-2.0-pro", 92.8),
            ("claude-sonnet-4.5", 98.5),
            ("gemini-3-pro", 98.5),
            ("claude-opus-4.5", 98.8),
            ("gpt-5.2", 99.7),
        ],
        "longfact_objects": [
            ("gpt-4.1", 1.1),
            ("gpt-5", 1.2),
            ("gpt-5-mini", 1.3),
            ("gpt-4.1-mini", 1.8),
            ("gpt-5-nano", 2.8),
            ("o3-high", 6.8),
            ("o4-mini-high", 8.9),
        ],
        "longfact_objects_score": [
            ("doubao-seed-2.0-pro", 92.9),
            ("gemini-3-pro", 98.1),
            ("claude-sonnet-4.5", 98.8),
            ("claude-opus-4.5", 99.0),
            ("gpt-5.2", 99.2),
        ],
    }
    card = rows.filter(pl.col("benchmark_key") == "longfact_concepts_score").row(0, named=True)
    assert card["row_ref"] == "observed[56][71]"  # the payload cell it came from
    assert card["benchmark_name"] == (
        "LongFact-Concepts (score as the Seed 2.0 model card reports it; higher is better)"
    )
    extra = json.loads(card["extra"])
    assert extra["matrix_column"] == "longfact_concepts"
    assert extra["citation_url"].endswith("Seed2.0%20Model%20Card.pdf")
    rate = rows.filter(pl.col("benchmark_key") == "longfact_concepts").row(0, named=True)
    assert "matrix_column" not in json.loads(rate["extra"])


def test_both_metrics_resolve_with_their_own_direction() -> None:
    rows = longfact_rows().with_columns(
        pl.lit(1, pl.Int64).alias("parse_id"),
        pl.lit("sha").alias("payload_sha256"),
        pl.lit(None, pl.Datetime("us", "UTC")).alias("fetched_at"),
    )
    registry = load_registry()
    resolved = resolve(rows, registry)
    assert resolved["resolution"].unique().to_list() == ["resolved"]
    direction = dict(registry.benchmarks.select("benchmark_id", "direction").iter_rows())
    spans = (
        resolved.group_by("benchmark_id")
        .agg(pl.len(), pl.col("score").min().alias("low"), pl.col("score").max().alias("high"))
        .sort("benchmark_id")
        .with_columns(pl.col("benchmark_id").replace_strict(direction).alias("direction"))
    )
    assert spans.rows() == [
        ("longfact_concepts", 7, 0.7, 5.2, "lower"),
        ("longfact_concepts_score", 5, 92.8, 99.7, "higher"),
        ("longfact_objects", 7, 1.1, 8.9, "lower"),
        ("longfact_objects_score", 5, 92.9, 99.2, "higher"),
    ]
