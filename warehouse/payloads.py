"""The raw payload archive: every fetched body stored byte for byte before it is parsed."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

import duckdb

from warehouse.db import next_id


@dataclass(frozen=True)
class StoredPayload:
    payload_id: int
    source: str
    url: str
    fetched_at: datetime
    sha256: str
    etag: str | None
    last_modified: str | None


def latest_payload(con: duckdb.DuckDBPyConnection, source: str, url: str) -> StoredPayload | None:
    row = con.execute(
        "SELECT payload_id, source, url, fetched_at, sha256, etag, last_modified"
        " FROM raw_payloads WHERE source = ? AND url = ?"
        " ORDER BY fetched_at DESC, payload_id DESC LIMIT 1",
        [source, url],
    ).fetchone()
    return StoredPayload(*row) if row else None


def latest_payloads(con: duckdb.DuckDBPyConnection, source: str) -> dict[str, StoredPayload]:
    """URL -> the newest archived copy, for every URL of `source` ever archived (read once
    before a fetch, which then needs no connection for its conditional requests)."""
    rows = con.execute(
        "SELECT payload_id, source, url, fetched_at, sha256, etag, last_modified"
        " FROM raw_payloads WHERE source = ?"
        " QUALIFY row_number() OVER (PARTITION BY url ORDER BY fetched_at DESC, payload_id DESC)"
        " = 1",
        [source],
    ).fetchall()
    return {row[2]: StoredPayload(*row) for row in rows}


def payload_content(con: duckdb.DuckDBPyConnection, payload_id: int) -> bytes:
    row = con.execute(
        "SELECT content FROM raw_payloads WHERE payload_id = ?", [payload_id]
    ).fetchone()
    if row is None:
        raise KeyError(f"no payload {payload_id}")
    return bytes(row[0])


def archive_payload(
    con: duckdb.DuckDBPyConnection,
    *,
    source: str,
    url: str,
    transport: str,
    status: int,
    fetched_at: datetime,
    content: bytes,
    etag: str | None = None,
    last_modified: str | None = None,
    content_type: str | None = None,
) -> tuple[int, bool]:
    """Store a body unless the newest stored copy of this URL has the same bytes.

    Returns (payload_id, is_new). Identical re-fetches add no row, so an unchanged leaderboard
    costs nothing downstream and keeps its first-seen `fetched_at` (stable snapshots).
    """
    digest = hashlib.sha256(content).hexdigest()
    previous = latest_payload(con, source, url)
    if previous is not None and previous.sha256 == digest:
        return previous.payload_id, False
    # one INSERT, atomic alone; inside the caller's transaction when it holds one
    payload_id = next_id(con, "payload_ids")
    con.execute(
        "INSERT INTO raw_payloads (payload_id, source, url, transport, status, fetched_at,"
        " sha256, size_bytes, etag, last_modified, content_type, content)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            payload_id,
            source,
            url,
            transport,
            status,
            fetched_at,
            digest,
            len(content),
            etag,
            last_modified,
            content_type,
            content,
        ],
    )
    return payload_id, True


def log_fetch(
    con: duckdb.DuckDBPyConnection,
    source: str,
    started_at: datetime,
    outcome: str,
    payload_ids: list[int] | None = None,
    error: str | None = None,
) -> None:
    con.execute(
        "INSERT INTO fetch_log (fetch_id, source, started_at, outcome, payload_ids, error)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [next_id(con, "fetch_ids"), source, started_at, outcome, payload_ids, error],
    )


def last_good_fetch(con: duckdb.DuckDBPyConnection, source: str) -> list[int] | None:
    """Payload ids of the newest fetch of a source that succeeded (new or unchanged)."""
    row = con.execute(
        "SELECT payload_ids FROM fetch_log WHERE source = ? AND outcome IN ('new', 'unchanged')"
        " ORDER BY started_at DESC, fetch_id DESC LIMIT 1",
        [source],
    ).fetchone()
    return list(row[0]) if row else None


def latest_fetch_outcomes(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """source -> the outcome of its newest fetch attempt (new | unchanged | failed)."""
    rows = con.execute(
        "SELECT source, outcome FROM fetch_log QUALIFY row_number() OVER"
        " (PARTITION BY source ORDER BY started_at DESC, fetch_id DESC) = 1"
    ).fetchall()
    return dict(rows)


def payloads_by_id(
    con: duckdb.DuckDBPyConnection, payload_ids: list[int]
) -> list[tuple[int, str, str, datetime, bytes]]:
    """(payload_id, url, sha256, fetched_at, content) for the given ids, ordered by URL."""
    rows = con.execute(
        "SELECT payload_id, url, sha256, fetched_at, content FROM raw_payloads"
        " WHERE list_contains(?, payload_id) ORDER BY url",
        [payload_ids],
    ).fetchall()
    return [(int(r[0]), r[1], r[2], r[3], bytes(r[4])) for r in rows]


def payload_digests(
    con: duckdb.DuckDBPyConnection, payload_ids: list[int]
) -> list[tuple[int, str, str, datetime]]:
    """(payload_id, url, sha256, fetched_at) for the given ids, ordered by URL: what names a
    payload set without reading its bytes (a parse of the same bytes is reused)."""
    rows = con.execute(
        "SELECT payload_id, url, sha256, fetched_at FROM raw_payloads"
        " WHERE list_contains(?, payload_id) ORDER BY url",
        [payload_ids],
    ).fetchall()
    return [(int(r[0]), r[1], r[2], r[3]) for r in rows]
