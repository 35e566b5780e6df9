"""Per-source health: is the data current, or stale since a failed fetch or parse, and why."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import duckdb

from warehouse.scores import current_parses


def source_status(con: duckdb.DuckDBPyConnection, now: datetime | None = None) -> dict[str, Any]:
    """{source: {status, last_attempt, error, error_at, data_fetched_at, age_days}}.

    `stale` means the newest attempt to fetch or parse failed, so the matrix still uses the
    last good data (`data_fetched_at`), never nothing and never silently; `error` says why and
    `error_at` when (the failed fetch's start, or the failed parse).
    """
    now = now or datetime.now(UTC)
    fetches = {
        row[0]: row[1:]
        for row in con.execute(
            "SELECT source, outcome, started_at, error FROM fetch_log"
            " QUALIFY row_number() OVER (PARTITION BY source ORDER BY started_at DESC,"
            " fetch_id DESC) = 1"
        ).fetchall()
    }
    parses = {
        row[0]: row[1:]
        for row in con.execute(
            "SELECT source, status, error, parsed_at FROM parses"
            " QUALIFY row_number() OVER (PARTITION BY source ORDER BY parse_id DESC) = 1"
        ).fetchall()
    }
    current = dict(current_parses(con).select("source", "fetched_at").iter_rows())
    status: dict[str, Any] = {}
    for source in sorted(set(fetches) | set(parses)):
        outcome, attempted, fetch_error = fetches.get(source, (None, None, None))
        parse_state, parse_error, parsed_at = parses.get(source, (None, None, None))
        error, error_at = (fetch_error, attempted) if outcome == "failed" else (None, None)
        if error is None and parse_state == "failed":
            error, error_at = parse_error, parsed_at
        data_at = current.get(source)
        status[source] = {
            "status": "stale" if error else ("ok" if data_at else "no data"),
            "last_attempt": attempted.isoformat() if attempted else None,
            "error": error,
            "error_at": error_at.isoformat() if error and error_at else None,
            "data_fetched_at": data_at.isoformat() if data_at else None,
            "age_days": round((now - data_at).total_seconds() / 86400, 2) if data_at else None,
        }
    return status
