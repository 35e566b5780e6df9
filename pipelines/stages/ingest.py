"""Fetch one source and archive every payload before anything parses it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pipelines.fetch.budget import FetchBudget
from pipelines.fetch.plan import fetch_source
from pipelines.fetch.transports import Fetcher, FetchError, Validators
from pipelines.sources.base import Source
from warehouse.db import Warehouse, opened, transaction
from warehouse.payloads import archive_payload, latest_payloads, log_fetch, payload_content


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
    warehouse: Warehouse,
    fetcher: Fetcher,
    source: Source,
    budget: FetchBudget | None = None,
    concurrency: int = 1,
) -> IngestSummary:
    """Fetch all payloads of `source`, archive new bytes, log the attempt (also on failure).

    `warehouse`: a connection, or a function opening one (`warehouse.db.connect`), which
    this then holds only to read what is archived and to write what came in, never while the
    network answers: a refresh fetching sources in parallel processes shares the DuckDB file.
    The payloads and the fetch log entry are written in one transaction. `budget`: the
    source's and the run's deadlines (`pipelines.fetch.budget`); spending it is a failed fetch
    like any other (`DeadlineExceeded`, a FetchError). `concurrency`: URLs fetched at once."""
    started = datetime.now(UTC)
    with opened(warehouse) as con:
        archived = latest_payloads(con, source.id)

    def validators(url: str) -> Validators | None:
        stored = archived.get(url)
        return (
            None if stored is None else Validators(stored.etag, stored.last_modified, stored.sha256)
        )

    def stored_content(url: str) -> bytes | None:
        stored = archived.get(url)
        if stored is None:
            return None
        with opened(warehouse) as con:
            return payload_content(con, stored.payload_id)

    try:
        fetched = fetch_source(fetcher, source, validators, stored_content, budget, concurrency)
    except FetchError as exc:
        with opened(warehouse) as con:
            log_fetch(con, source.id, started, "failed", error=str(exc))
        raise
    summary = IngestSummary(source.id, "unchanged", [], [p.url for p in fetched])
    summary.transport = fetcher.mode
    unarchived = [p.url for p in fetched if p.content is None and p.url not in archived]
    if unarchived:  # 304 for a URL never stored
        error = "server said 304 Not Modified but nothing is archived"
        with opened(warehouse) as con:
            log_fetch(con, source.id, started, "failed", error=error)
        raise FetchError(source.id, unarchived[0], error)
    with opened(warehouse) as con, transaction(con):
        payload_ids: list[int] = []
        for payload in fetched:
            if payload.content is None:  # 304: the archived copy is still current
                payload_ids.append(archived[payload.url].payload_id)
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


def nothing_fetched(outcomes: Mapping[str, str], sources: Iterable[str]) -> str | None:
    """Why nothing may be published when the newest fetch of every source failed (or never
    happened): a snapshot of nothing but old data, the network or the mirror down. None when
    at least one source was fetched, changed or not (`outcomes`: source -> its newest fetch's
    outcome, `warehouse.payloads.latest_fetch_outcomes`)."""
    names = sorted(sources)
    fetched = [s for s in names if outcomes.get(s) in ("new", "unchanged")]
    if fetched or not names:
        return None
    failed = [s for s in names if outcomes.get(s) == "failed"]
    never = len(names) - len(failed)
    return (
        f"no source could be fetched: the newest fetch of each of the {len(names)} sources "
        f"failed{f' or never ran ({never})' if never else ''}; nothing is published from old "
        "data alone"
    )
