"""Fetch one source and archive every payload before anything parses it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import duckdb

from pipelines.fetch.budget import FetchBudget
from pipelines.fetch.plan import fetch_source
from pipelines.fetch.transports import Fetcher, FetchError, Validators
from pipelines.sources.base import Source
from warehouse.payloads import archive_payload, latest_payload, log_fetch, payload_content


@dataclass
class IngestSummary:
    source: str
    outcome: str  # new | unchanged
    payload_ids: list[int]
    urls: list[str]
    new_payloads: int = 0
    bytes_fetched: int = 0
    not_modified: int = 0
    transport: str = ""
    fetched_at: list[str] = field(default_factory=list)


def ingest_source(
    con: duckdb.DuckDBPyConnection,
    fetcher: Fetcher,
    source: Source,
    budget: FetchBudget | None = None,
) -> IngestSummary:
    """Fetch all payloads of `source`, archive new bytes, log the attempt (also on failure).

    `budget`: the source's and the run's deadlines (`pipelines.fetch.budget`); spending it is
    a failed fetch like any other (`DeadlineExceeded`, a FetchError)."""
    started = datetime.now(UTC)

    def validators(url: str) -> Validators | None:
        stored = latest_payload(con, source.id, url)
        if stored is None:
            return None
        return Validators(stored.etag, stored.last_modified, stored.sha256)

    def stored_content(url: str) -> bytes | None:
        stored = latest_payload(con, source.id, url)
        return payload_content(con, stored.payload_id) if stored else None

    try:
        fetched = fetch_source(fetcher, source, validators, stored_content, budget)
    except FetchError as exc:
        log_fetch(con, source.id, started, "failed", error=str(exc))
        raise
    payload_ids: list[int] = []
    summary = IngestSummary(source.id, "unchanged", [], [p.url for p in fetched])
    summary.transport = fetcher.mode
    for payload in fetched:
        if payload.content is None:  # 304: the archived copy is still current
            stored = latest_payload(con, source.id, payload.url)
            if stored is None:
                error = "server said 304 Not Modified but nothing is archived"
                log_fetch(con, source.id, started, "failed", error=error)
                raise FetchError(source.id, payload.url, error)
            payload_ids.append(stored.payload_id)
            summary.not_modified += 1
            continue
        payload_id, is_new = archive_payload(
            con,
            source=source.id,
            url=payload.url,
            transport=payload.transport,
            status=payload.status,
            fetched_at=payload.fetched_at,
            content=payload.content,
            etag=payload.etag,
            last_modified=payload.last_modified,
            content_type=payload.content_type,
        )
        payload_ids.append(payload_id)
        summary.bytes_fetched += len(payload.content)
        summary.new_payloads += int(is_new)
    summary.payload_ids = sorted(payload_ids)
    summary.outcome = "new" if summary.new_payloads else "unchanged"
    log_fetch(con, source.id, started, summary.outcome, summary.payload_ids)
    return summary
