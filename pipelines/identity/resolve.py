"""Resolve parsed source rows to canonical (model_id, benchmark_id) and a canonical scale.

No fuzzy matching: a name is placed by the reviewed alias tables, or by exact rules (the
canonical source's own ids; a normalised key equal to a known canonical id). Everything else
stays in the output marked unresolved, so it is counted and reported, never silently dropped.
"""

from __future__ import annotations

import re

import polars as pl

from pipelines.identity.registry import (
    CANONICAL_SOURCE,
    FRACTION_UNITS,
    PERCENT_UNITS,
    Registry,
)

_SEPARATORS = re.compile(r"[\s_/]+")


def normalise_key(name: str) -> str:
    """Lower-case, provider prefix removed, separators unified: `Org/Model_X` -> `model-x`."""
    text = name.strip().lower()
    if "/" in text:
        text = text.rsplit("/", 1)[1]
    return _SEPARATORS.sub("-", text).strip("-")


def _canonical_scores(frame: pl.DataFrame) -> pl.DataFrame:
    """Fractions become percent; percent stays; open scales stay as published."""
    unit = pl.col("unit")
    return frame.with_columns(
        pl.when(unit.is_in(list(FRACTION_UNITS)))
        .then(pl.col("value") * 100.0)
        .otherwise(pl.col("value"))
        .alias("score"),
    )


def _setting(frame: pl.DataFrame) -> pl.Expr:
    parts = [pl.col(c) for c in ("reasoning_effort", "thinking_budget", "agent")]
    return pl.concat_str(parts, separator="|", ignore_nulls=True).alias("setting")


def resolve(scores: pl.DataFrame, registry: Registry) -> pl.DataFrame:
    """Source rows (SCORE_SCHEMA plus provenance) -> normalized rows with resolution status."""
    benchmarks = registry.benchmarks.select("benchmark_id", "scale")
    bench_alias = registry.benchmark_aliases.rename({"benchmark_id": "alias_benchmark_id"})
    known_models = set(
        scores.filter(pl.col("source") == CANONICAL_SOURCE)["model_key"].unique().to_list()
    ) | set(registry.model_aliases["model_id"].to_list())
    exact_alias = registry.model_aliases.filter(pl.col("source") != "*").rename(
        {"model_id": "alias_model_id"}
    )
    any_alias = (
        registry.model_aliases.filter(pl.col("source") == "*")
        .drop("source")
        .rename({"model_id": "any_model_id"})
    )
    frame = (
        _canonical_scores(scores)
        .with_columns(_setting(scores))
        .join(bench_alias, on=["source", "benchmark_key"], how="left")
        .join(exact_alias, on=["source", "model_key"], how="left")
        .join(any_alias, on="model_key", how="left")
        .with_columns(
            pl.col("model_key")
            .map_elements(normalise_key, return_dtype=pl.String)
            .alias("normalised_key")
        )
    )
    is_canonical = pl.col("source") == CANONICAL_SOURCE
    frame = frame.with_columns(
        pl.coalesce(
            pl.col("alias_benchmark_id"),
            pl.when(is_canonical).then(pl.col("benchmark_key")),
        ).alias("benchmark_id"),
        pl.coalesce(
            pl.col("alias_model_id"),
            pl.col("any_model_id"),
            pl.when(is_canonical).then(pl.col("model_key")),
            pl.when(pl.col("normalised_key").is_in(list(known_models))).then(
                pl.col("normalised_key")
            ),
        ).alias("model_id"),
    ).join(benchmarks, on="benchmark_id", how="left")
    frame = frame.with_columns(
        # a canonical-source key that the registry does not list is not a benchmark we know
        pl.when(pl.col("scale").is_null())
        .then(None)
        .otherwise(pl.col("benchmark_id"))
        .alias("benchmark_id")
    )
    unit_mismatch = (pl.col("scale") == "percent") & ~pl.col("unit").is_in(
        list(PERCENT_UNITS | FRACTION_UNITS)
    )
    resolution = (
        pl.when(pl.col("value").is_null())
        .then(pl.lit("rejected"))
        .when(pl.col("benchmark_id").is_null())
        .then(pl.lit("unresolved_benchmark"))
        .when(pl.col("model_id").is_null())
        .then(pl.lit("unresolved_model"))
        .when(unit_mismatch)
        .then(pl.lit("rejected"))
        .otherwise(pl.lit("resolved"))
    )
    note = (
        pl.when(unit_mismatch & pl.col("value").is_not_null())
        .then(pl.format("unit {} on a percent benchmark", pl.col("unit")))
        .when(pl.col("value").is_null())
        .then(pl.col("extra").str.json_path_match("$.rejected"))
    )
    return frame.with_columns(resolution.alias("resolution"), note.alias("note")).select(
        "source",
        "parse_id",
        "payload_url",
        "payload_sha256",
        "fetched_at",
        "row_ref",
        "model_key",
        "model_name",
        "benchmark_key",
        "benchmark_name",
        "setting",
        "model_id",
        "benchmark_id",
        pl.col("value").alias("raw_value"),
        pl.col("unit").alias("raw_unit"),
        "score",
        "scale",
        "resolution",
        "note",
    )
