"""Open the DuckDB warehouse and bring its schema up to date with versioned migrations."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import duckdb

from predictor.paths import warehouse_path

_MIGRATION_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")
# DuckDB lets one process hold the file for writing, and a reader in another process (warehouse
# stats, a notebook) blocks the writer's open: wait this long for the lock before failing.
LOCK_WAIT_ENV = "BENCHPRESS_DUCKDB_LOCK_WAIT"
DEFAULT_LOCK_WAIT = 60.0


def migrations() -> list[tuple[int, str, str]]:
    """(version, name, sql) for every migration file, in order."""
    found = []
    for entry in resources.files("warehouse.migrations").iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text("utf-8")))
    return sorted(found)


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply pending migrations, each in its own transaction; returns the names applied."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
    )
    done = {row[0] for row in con.execute("SELECT version FROM schema_migrations").fetchall()}
    applied = []
    for version, name, sql in migrations():
        if version in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(sql)
            con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [version, name])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied


@contextmanager
def connect(
    path: Path | str | None = None, read_only: bool = False
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A migrated connection to the warehouse file (created on first write)."""
    target = Path(path) if path else warehouse_path()
    if not read_only:
        target.parent.mkdir(parents=True, exist_ok=True)
    con = open_waiting(target, read_only)
    try:
        con.execute("SET TimeZone = 'UTC'")
        if not read_only:
            migrate(con)
        yield con
    finally:
        con.close()


def open_waiting(
    target: Path, read_only: bool = False, wait: float | None = None
) -> duckdb.DuckDBPyConnection:
    """`duckdb.connect`, retried while another process holds the file's lock (up to `wait`
    seconds, default BENCHPRESS_DUCKDB_LOCK_WAIT or 60), so a short read never fails a refresh."""
    if wait is None:
        wait = float(os.environ.get(LOCK_WAIT_ENV) or DEFAULT_LOCK_WAIT)
    deadline = time.monotonic() + wait
    delay = 0.05
    while True:
        try:
            return duckdb.connect(str(target), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN ... COMMIT, or ROLLBACK on any error, so a failed write leaves no partial rows."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
