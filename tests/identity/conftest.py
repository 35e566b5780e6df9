"""The recorded leaderboards parsed straight from the replay files (no Dagster, no DuckDB), and
the shipped identity registry: what every identity test resolves against."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import polars as pl
import pytest

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath
from pipelines.identity.registry import Registry, load_registry
from pipelines.identity.resolve import resolve
from pipelines.sources import SOURCES

FETCHED_AT = datetime(2026, 1, 1, tzinfo=UTC)


def _payloads(urls) -> dict[str, bytes]:
    out = {}
    for url in urls:
        path = DEFAULT_REPLAY_ROOT / replay_relpath(url)
        if path.exists():
            out[url] = path.read_bytes()
    return out


def recorded_scores() -> pl.DataFrame:
    """Every source's parser output on its recorded payloads, with the provenance columns the
    warehouse adds (parse id, payload sha256, fetch time)."""
    frames = []
    for i, source in enumerate(SOURCES.values()):
        payloads = _payloads(source.urls)
        if source.discover is not None:
            payloads |= _payloads(source.discover(payloads))
        sha = {url: hashlib.sha256(data).hexdigest() for url, data in payloads.items()}
        frame = source.parse(payloads)
        frames.append(
            frame.with_columns(
                pl.lit(i + 1, pl.Int64).alias("parse_id"),
                pl.col("payload_url").replace_strict(sha, default=None).alias("payload_sha256"),
                pl.lit(FETCHED_AT).alias("fetched_at"),
            )
        )
    return pl.concat(frames, how="vertical_relaxed")


@pytest.fixture(scope="session")
def registry() -> Registry:
    return load_registry()


@pytest.fixture(scope="session")
def scores() -> pl.DataFrame:
    return recorded_scores()


@pytest.fixture(scope="session")
def normalized(scores: pl.DataFrame, registry: Registry) -> pl.DataFrame:
    return resolve(scores, registry)
