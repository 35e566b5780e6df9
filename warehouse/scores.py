"""Score tables: parsed source rows with their parse, normalized rows, the matrix and conflicts."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

import duckdb
import polars as pl

from warehouse.db import next_id, transaction


def utc(frame: pl.DataFrame) -> pl.DataFrame:
    """Timestamps as UTC whatever the connection's TimeZone setting, so frames (and the
    snapshots written from them) are identical from any connection."""
    return frame.with_columns(
        pl.col(name).dt.convert_time_zone("UTC")
        for name, dtype in frame.schema.items()
        if isinstance(dtype, pl.Datetime) and dtype.time_zone is not None
    )


def payload_set_sha(shas: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(shas)).encode()).hexdigest()


@dataclass(frozen=True)
class EarlierParse:
    """A parse of the same payload set by the same parser: the same bytes give the same answer."""

    parse_id: int
    status: str  # ok | failed
    error: str | None
    payload_ids: tuple[int, ...]  # the archived payloads it was made from


def find_parse(
    con: duckdb.DuckDBPyConnection, source: str, set_sha: str, parser_version: str
) -> EarlierParse | None:
    """The newest earlier parse of exactly this payload set by this parser, if any."""
    row = con.execute(
        "SELECT parse_id, status, error, payload_ids FROM parses WHERE source = ?"
        " AND payload_set_sha = ? AND parser_version = ? ORDER BY parse_id DESC LIMIT 1",
        [source, set_sha, parser_version],
    ).fetchone()
    if row is None:
        return None
    return EarlierParse(int(row[0]), str(row[1]), row[2], tuple(sorted(int(i) for i in row[3])))


def record_parse(
    con: duckdb.DuckDBPyConnection,
    *,
    source: str,
    set_sha: str,
    payload_ids: list[int],
    fetched_at: datetime,
    parsed_at: datetime,
    parser_version: str,
    rows: pl.DataFrame | None,
    error: str | None = None,
) -> int:
    """Store one parse and its rows in a single transaction (all rows or none)."""
    with transaction(con):
        parse_id = next_id(con, "parse_ids")
        con.execute(
            "INSERT INTO parses (parse_id, source, payload_set_sha, payload_ids, fetched_at,"
            " parsed_at, parser_version, status, n_rows, error)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                parse_id,
                source,
                set_sha,
                payload_ids,
                fetched_at,
                parsed_at,
                parser_version,
                "ok" if rows is not None else "failed",
                rows.height if rows is not None else None,
                error,
            ],
        )
        if rows is not None and rows.height:
            frame = rows.with_columns(pl.lit(parse_id, pl.Int64).alias("parse_id"))
            con.register("incoming_rows", frame.to_arrow())
            try:
                con.execute("INSERT INTO source_scores BY NAME SELECT * FROM incoming_rows")
            finally:
                con.unregister("incoming_rows")
    return int(parse_id)


def confirm_parse(
    con: duckdb.DuckDBPyConnection,
    earlier: int,
    *,
    payload_ids: list[int],
    fetched_at: datetime,
    parsed_at: datetime,
) -> int:
    """Record that a newer fetch brought back the bytes of parse `earlier`: a new parse of the
    newer payloads with the same rows (copied, not re-parsed), so it becomes current again.

    A leaderboard that goes back to earlier bytes is a change like any other; reusing the old
    parse as it was would leave a parse of newer, different bytes current."""
    with transaction(con):
        found = con.execute(
            "SELECT count(*) FROM parses WHERE parse_id = ? AND status = 'ok'", [earlier]
        ).fetchone()[0]
        if not found:
            raise ValueError(f"parse {earlier} is not a successful parse")
        parse_id = next_id(con, "parse_ids")
        con.execute(
            "INSERT INTO parses (parse_id, source, payload_set_sha, payload_ids, fetched_at,"
            " parsed_at, parser_version, status, n_rows, error)"
            " SELECT ?, source, payload_set_sha, ?, ?, ?, parser_version, status, n_rows, error"
            " FROM parses WHERE parse_id = ? AND status = 'ok'",
            [parse_id, payload_ids, fetched_at, parsed_at, earlier],
        )
        con.execute(
            "INSERT INTO source_scores BY NAME"
            " SELECT * EXCLUDE (parse_id), ?::BIGINT AS parse_id FROM source_scores"
            " WHERE parse_id = ?",
            [parse_id, earlier],
        )
    return parse_id


def _current(as_of: datetime | None) -> tuple[str, list[object]]:
    """SQL for each source's current parse: the newest successful parse, i.e. of the newest
    fetch whose bytes parsed (parses are made in fetch order, and a fetch that brings back
    earlier bytes gets a new parse: `confirm_parse`). With `as_of`, among the parses of
    payloads fetched by then. Not ordered by `fetched_at`: replayed payloads carry their
    recording date, which says nothing about which fetch came last."""
    cutoff = " AND fetched_at <= ?" if as_of is not None else ""
    sql = (
        "SELECT source, parse_id, payload_ids, fetched_at FROM parses WHERE status = 'ok'"
        + cutoff
        + " QUALIFY row_number() OVER (PARTITION BY source ORDER BY parse_id DESC) = 1"
    )
    return sql, ([as_of] if as_of is not None else [])


def current_parses(con: duckdb.DuckDBPyConnection, as_of: datetime | None = None) -> pl.DataFrame:
    """The newest successful parse per source (as of `as_of`): what the matrix is built from."""
    sql, params = _current(as_of)
    return utc(con.execute(sql + " ORDER BY source", params).pl())


def current_source_scores(
    con: duckdb.DuckDBPyConnection, as_of: datetime | None = None
) -> pl.DataFrame:
    """Rows of each source's current parse, with the payload sha and fetch time per row.

    With `as_of`, the parses current at that moment: history is kept, so any past matrix can
    be rebuilt from the warehouse.
    """
    sql, params = _current(as_of)
    return utc(
        con.execute(
            f"WITH cur AS ({sql})"
            " SELECT s.*, p.sha256 AS payload_sha256, p.fetched_at"
            " FROM source_scores s JOIN cur USING (parse_id)"
            " LEFT JOIN raw_payloads p ON p.url = s.payload_url AND list_contains(cur.payload_ids,"
            " p.payload_id)"
            " ORDER BY s.source, s.payload_url, s.row_ref, s.model_key, s.benchmark_key",
            params,
        ).pl()
    )


def replace_table(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
    """Swap a derived table's contents atomically (table names come from code, not input)."""
    if table not in {"normalized_scores", "matrix_cells", "matrix_conflicts"}:
        raise ValueError(f"not a derived table: {table}")
    with transaction(con):
        con.execute(f"DELETE FROM {table}")
        if frame.height:
            con.register("incoming_rows", frame.to_arrow())
            try:
                con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming_rows")
            finally:
                con.unregister("incoming_rows")


def read_table(con: duckdb.DuckDBPyConnection, table: str) -> pl.DataFrame:
    if table not in {"normalized_scores", "matrix_cells", "matrix_conflicts", "staged_snapshots"}:
        raise ValueError(f"not a readable table: {table}")
    return utc(con.execute(f"SELECT * FROM {table}").pl())
