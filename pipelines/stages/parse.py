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
from warehouse.db import Warehouse, opened
from warehouse.payloads import last_good_fetch, payload_digests, payloads_by_id
from warehouse.scores import (
    EarlierParse,
    confirm_parse,
    find_parse,
    payload_set_sha,
    record_parse,
)

# Bump when a parser's output changes so archived payloads are re-parsed on the next run.
# 2: the `release_date` column (a model's release date as the payload states it).
# 3: the Open LLM Leaderboard states its models' release dates (the Hub upload day).
# 4: the BenchPress matrix's LongFact cells cited to the Seed 2.0 model card are benchmarks of
#    their own (`longfact_*_score`), not the hallucination rates' columns.
PARSER_VERSION = "4"


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


def parse_source(warehouse: Warehouse, source: Source) -> ParseSummary:
    """Parse the newest good fetch of `source` into source_scores, or reuse the parse of the
    same bytes. `warehouse`: a connection, or a function opening one (`warehouse.db.connect`),
    held then only to read the payloads and to write the rows (one transaction), not while the
    parser runs: sources parse in parallel processes sharing the DuckDB file."""
    with opened(warehouse) as con:
        payload_ids = last_good_fetch(con, source.id)
        if not payload_ids:
            raise RuntimeError(f"{source.id}: nothing fetched yet; run its payload asset first")
        digests = payload_digests(con, payload_ids)  # not the bytes: a reused parse needs none
        set_sha = payload_set_sha([sha for _, _, sha, _ in digests])
        version = f"{source.id}:{PARSER_VERSION}"
        earlier = find_parse(con, source.id, set_sha, version)
        refetched = earlier is not None and earlier.payload_ids != tuple(sorted(payload_ids))
        if earlier is not None and earlier.status == "ok" and not refetched:
            # the current parse already: an unchanged rerun reads its counts and is done
            return ParseSummary(source.id, earlier.parse_id, True, *_parse_counts(con, earlier))
    fetched_at = max(when for _, _, _, when in digests)

    def record(
        con: duckdb.DuckDBPyConnection, rows: pl.DataFrame | None, error: str | None = None
    ) -> int:
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

    def made_current(con: duckdb.DuckDBPyConnection, parse: EarlierParse) -> int:
        """The id of `parse` (of these same bytes) as the current parse: recorded again for
        the newest payloads when a later fetch brought its bytes back."""
        if parse.payload_ids == tuple(sorted(payload_ids)):
            return parse.parse_id
        return confirm_parse(
            con,
            parse.parse_id,
            payload_ids=payload_ids,
            fetched_at=fetched_at,
            parsed_at=datetime.now(UTC),
        )

    if earlier is not None and earlier.status == "failed":
        if refetched:  # the newest parse state must say failed again, or the source looks ok
            with opened(warehouse) as con:
                record(con, None, earlier.error)
            raise ParseFailed(
                f"{earlier.error} (the same bytes failed in parse {earlier.parse_id})"
            )
        raise ParseFailed(f"{earlier.error} (payloads unchanged since parse {earlier.parse_id})")
    if earlier is not None:
        with opened(warehouse) as con:
            existing = made_current(con, earlier)
            stats = _parse_counts(con, earlier)
        return ParseSummary(source.id, existing, True, *stats)

    with opened(warehouse) as con:
        payloads = payloads_by_id(con, payload_ids)
    try:
        frame: pl.DataFrame = source.parse({url: content for _, url, _, _, content in payloads})
    except Exception as exc:
        with opened(warehouse) as con:
            record(con, None, str(exc))
        raise
    with opened(warehouse) as con:
        # on a shared warehouse another machine may have parsed the same bytes meanwhile
        meanwhile = find_parse(con, source.id, set_sha, version)
        reused = meanwhile is not None and meanwhile.status == "ok"
        parse_id = made_current(con, meanwhile) if reused else record(con, frame)
    return ParseSummary(
        source.id,
        parse_id,
        reused,
        frame.height,
        frame["model_key"].n_unique(),
        frame["benchmark_key"].n_unique(),
        frame.filter(pl.col("value").is_null()).height,
    )


def _parse_counts(con: duckdb.DuckDBPyConnection, parse: EarlierParse) -> tuple[int, ...]:
    """(rows, models, benchmarks, rejected rows) of an earlier parse."""
    row = con.execute(
        "SELECT count(*), count(DISTINCT model_key), count(DISTINCT benchmark_key),"
        " count(*) FILTER (WHERE value IS NULL) FROM source_scores WHERE parse_id = ?",
        [parse.parse_id],
    ).fetchone()
    return tuple(int(n) for n in row or (0, 0, 0, 0))
