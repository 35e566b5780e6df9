"""Parse the newest archived payload set of a source into source_scores (once per set).

The same bytes through the same parser give the same rows, so an unchanged fetch reuses its
parse. When a newer fetch brings back the bytes of an older parse (a leaderboard reverted), the
rows are reused but recorded as a new parse of the newer fetch: the newest fetch decides what is
current.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb
import polars as pl

from pipelines.sources.base import Source
from warehouse.payloads import last_good_fetch, payloads_by_id
from warehouse.scores import confirm_parse, find_parse, payload_set_sha, record_parse

# Bump when a parser's output changes so archived payloads are re-parsed on the next run.
PARSER_VERSION = "1"


class ParseFailed(RuntimeError):
    """The current payloads of a source do not parse; its last good parse stays current."""


@dataclass
class ParseSummary:
    source: str
    parse_id: int
    reused: bool
    rows: int
    models: int
    benchmarks: int
    rejected_rows: int


def parse_source(con: duckdb.DuckDBPyConnection, source: Source) -> ParseSummary:
    payload_ids = last_good_fetch(con, source.id)
    if not payload_ids:
        raise RuntimeError(f"{source.id}: nothing fetched yet; run its payload asset first")
    payloads = payloads_by_id(con, payload_ids)
    set_sha = payload_set_sha([sha for _, _, sha, _, _ in payloads])
    version = f"{source.id}:{PARSER_VERSION}"
    earlier = find_parse(con, source.id, set_sha, version)
    fetched_at = max(when for _, _, _, when, _ in payloads)
    refetched = earlier is not None and earlier.payload_ids != tuple(sorted(payload_ids))

    def record(rows: pl.DataFrame | None, error: str | None = None) -> int:
        return record_parse(
            con,
            source=source.id,
            set_sha=set_sha,
            payload_ids=payload_ids,
            fetched_at=fetched_at,
            parsed_at=datetime.now(UTC),
            parser_version=version,
            rows=rows,
            error=error,
        )

    if earlier is not None and earlier.status == "failed":
        if refetched:  # the newest parse state must say failed again, or the source looks ok
            record(None, earlier.error)
            raise ParseFailed(
                f"{earlier.error} (the same bytes failed in parse {earlier.parse_id})"
            )
        raise ParseFailed(f"{earlier.error} (payloads unchanged since parse {earlier.parse_id})")
    if earlier is not None:
        existing = earlier.parse_id
        if refetched:
            existing = confirm_parse(
                con,
                earlier.parse_id,
                payload_ids=payload_ids,
                fetched_at=fetched_at,
                parsed_at=datetime.now(UTC),
            )
        stats = con.execute(
            "SELECT count(*), count(DISTINCT model_key), count(DISTINCT benchmark_key),"
            " count(*) FILTER (WHERE value IS NULL) FROM source_scores WHERE parse_id = ?",
            [existing],
        ).fetchone()
        return ParseSummary(source.id, existing, True, *stats)

    try:
        frame: pl.DataFrame = source.parse({url: content for _, url, _, _, content in payloads})
    except Exception as exc:
        record(None, str(exc))
        raise
    parse_id = record(frame)
    return ParseSummary(
        source.id,
        parse_id,
        False,
        frame.height,
        frame["model_key"].n_unique(),
        frame["benchmark_key"].n_unique(),
        frame.filter(pl.col("value").is_null()).height,
    )
