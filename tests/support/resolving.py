"""A parser's rows resolved the way the pipeline resolves them, for source and identity tests."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from pipelines.identity.registry import load_registry
from pipelines.identity.resolve import resolve


def with_parse_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """The columns ingestion adds to a parser's frame (one parse, a fixed hash and time)."""
    return frame.with_columns(
        pl.lit(1, pl.Int64).alias("parse_id"),
        pl.lit("0" * 64).alias("payload_sha256"),
        pl.lit(datetime(2026, 1, 1, tzinfo=UTC)).alias("fetched_at"),
    )


def resolved(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` (a parser's output) through identity resolution with the reviewed registry."""
    return resolve(with_parse_columns(frame), load_registry())
