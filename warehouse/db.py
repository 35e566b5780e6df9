"""Open the DuckDB warehouse and bring its schema up to date with versioned migrations.

The warehouse is the local file `warehouse.duckdb` in the home (the default), or with
BENCHPRESS_WAREHOUSE=ducklake a DuckLake lakehouse shared by several machines
(`warehouse.ducklake`); `connect` hands out either as a DuckDB connection, so the modules that
read and write the tables do not know which it is.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from importlib import resources
from pathlib import Path

import duckdb

from predictor.util.paths import warehouse_path
from warehouse.ducklake import (
    lake_connection,
    lake_ddl,
    lake_of,
    lake_settings,
    warehouse_backend,
)

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
    """Apply pending migrations, each in its own transaction; returns the names applied.

    On the DuckLake warehouse each runs as `lake_ddl` rewrites it (no keys, indexes or
    sequences there; its sequences are made in the catalog's PostgreSQL)."""
    lake = lake_of(con)
    key = "NOT NULL" if lake is not None else "PRIMARY KEY"
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        f" version INTEGER {key}, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
    )
    done = {row[0] for row in con.execute("SELECT version FROM schema_migrations").fetchall()}
    applied = []
    for version, name, sql in migrations():
        if version in done:
            continue
        if lake is not None:
            sql, sequences = lake_ddl(sql)
            lake.create_sequences(sequences)  # IF NOT EXISTS: a failed attempt left them
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
    """A migrated connection to the warehouse file (created on first write).

    With BENCHPRESS_WAREHOUSE=ducklake, a connection to the shared lake instead (`path` is
    not used): a writer holds the lake's write lock until the block ends."""
    if warehouse_backend() == "ducklake":
        with lake_connection(read_only) as con:
            if not read_only:
                migrate(con)
            yield con
        return
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


def next_id(con: duckdb.DuckDBPyConnection, sequence: str) -> int:
    """The next value of one of the migrations' sequences (`payload_ids`, `fetch_ids`,
    `parse_ids`): DuckDB's own in the local file, the catalog's PostgreSQL sequence on the lake
    (unique across machines)."""
    lake = lake_of(con)
    if lake is not None:
        return lake.next_id(sequence)
    if not re.fullmatch(r"[a-z_]+", sequence):
        raise ValueError(f"not a sequence name: {sequence!r}")
    return int(con.execute(f"SELECT nextval('{sequence}')").fetchone()[0])


def warehouse_location() -> str:
    """Where the warehouse is, for messages: the file, or the lake's catalog and data path."""
    if warehouse_backend() == "ducklake":
        settings = lake_settings()
        return f"the DuckLake at {settings.where} (data in {settings.data_path})"
    return str(warehouse_path())


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


Warehouse = (
    duckdb.DuckDBPyConnection | Callable[[], AbstractContextManager[duckdb.DuckDBPyConnection]]
)


@contextmanager
def opened(warehouse: Warehouse) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection from `warehouse`: the connection itself (left open), or a new one from a
    function such as `connect` (closed at the end of the block). Stages that wait on the
    network or the CPU take the function, so they hold the DuckDB file only while they read
    or write it."""
    if isinstance(warehouse, duckdb.DuckDBPyConnection):
        yield warehouse
        return
    with warehouse() as con:
        yield con


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
