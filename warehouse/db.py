"""Open the DuckDB warehouse and bring its schema up to date with versioned migrations."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import duckdb

from predictor.paths import warehouse_path

_MIGRATION_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


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
    con = duckdb.connect(str(target), read_only=read_only)
    try:
        con.execute("SET TimeZone = 'UTC'")
        if not read_only:
            migrate(con)
        yield con
    finally:
        con.close()


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
