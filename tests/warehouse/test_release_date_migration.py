"""Migration 005 (`release_date` on parsed and normalized rows) keeps old warehouses readable:
rows parsed before it read as stating no date, and a new parse of the same archived bytes
fills the column (the parser version changed)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl

from pipelines.identity.registry import load_registry
from pipelines.identity.resolve import resolve
from pipelines.sources import arc_prize
from pipelines.stages.parse import PARSER_VERSION, parse_source
from pipelines.stages.side_information import stated_dates
from tests.support.shared_data import require_shared, shared_leaderboards
from warehouse.db import connect, migrations
from warehouse.payloads import archive_payload, log_fetch
from warehouse.scores import current_source_scores

FETCHED = datetime(2026, 6, 16, 2, 2, 26, tzinfo=UTC)


def old_warehouse(path: Path) -> None:
    """A warehouse as migrations 001-004 left it, holding one row parsed then."""
    con = duckdb.connect(str(path))
    try:
        con.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL,"
            " applied_at TIMESTAMPTZ NOT NULL)"
        )
        for version, name, sql in migrations():
            if version < 5:
                con.execute(sql)
                con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [version, name])
        con.execute(
            "INSERT INTO parses VALUES (nextval('parse_ids'), 'arc_prize', 'sha', [1], ?, ?,"
            " 'arc_prize:1', 'ok', 1, NULL)",
            [FETCHED, FETCHED],
        )
        con.execute(
            "INSERT INTO source_scores (parse_id, source, payload_url, row_ref, model_key,"
            " model_name, benchmark_key, value, unit) VALUES (1, 'arc_prize', ?,"
            " 'evaluations[75]', 'o3-mini-2025-01-31-high', 'o3-mini (High)', 'v1_Public_Eval',"
            " 0.5, 'fraction')",
            [arc_prize.EVALUATIONS_URL],
        )
    finally:
        con.close()


def test_an_old_warehouse_migrates_and_its_rows_state_no_date(tmp_path: Path) -> None:
    path = tmp_path / "warehouse.duckdb"
    old_warehouse(path)
    with connect(path, read_only=True) as con:  # read-only: not migrated, still readable
        rows = current_source_scores(con)
    assert "release_date" not in rows.columns
    normalized = resolve(rows, load_registry())
    assert normalized["release_date"].to_list() == [None]
    assert stated_dates(normalized).height == 0
    with connect(path) as con:  # a writer migrates
        applied = con.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
        rows = current_source_scores(con)
    assert applied >= 5
    assert rows.select("model_key", "release_date").rows() == [("o3-mini-2025-01-31-high", None)]


def test_a_new_parse_of_archived_bytes_fills_the_column(tmp_path: Path) -> None:
    path = tmp_path / "warehouse.duckdb"
    old_warehouse(path)
    folder = require_shared(shared_leaderboards() / "arc_prize")
    assert PARSER_VERSION != "1"  # parses of version 1 predate the column
    with connect(path) as con:
        ids = []
        for url in arc_prize.SOURCE.urls:
            payload_id, _ = archive_payload(
                con,
                source="arc_prize",
                url=url,
                transport="replay",
                status=200,
                fetched_at=FETCHED,
                content=(folder / url.rsplit("/", 1)[-1]).read_bytes(),
            )
            ids.append(payload_id)
        log_fetch(con, "arc_prize", FETCHED, "new", sorted(ids))
        summary = parse_source(con, arc_prize.SOURCE)
        rows = current_source_scores(con)
    assert not summary.reused
    row = rows.filter(pl.col("row_ref") == "evaluations[75]").row(0, named=True)
    assert (row["model_key"], row["release_date"]) == ("o3-mini-2025-01-31-high", "2025-01-31")
