"""A broken source never blocks the others: its last good data stays in the matrix, marked
stale with the failure reason and age, and the run says so."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.run import run_refresh
from predictor import BenchPress
from predictor.snapshots.reader import read_manifest
from predictor.util.paths import snapshot_store_dir, warehouse_path
from tests.support.mirror_server import serve_status
from warehouse.status import source_status

pytestmark = pytest.mark.slow
LIVEBENCH_TABLE = "/livebench.ai/table_2026_01_08.csv"
EPOCH_ZIP = "/epoch.ai/data/benchmark_data.zip"


def cells_by_source(home) -> dict[str, int]:
    con = duckdb.connect(str(warehouse_path(home)), read_only=True)
    try:
        return dict(con.execute("SELECT source, count(*) FROM matrix_cells GROUP BY 1").fetchall())
    finally:
        con.close()


def test_fetch_and_parse_failures_keep_last_good_data(refreshed_home, mirror_server, monkeypatch):
    # the first refresh: the session's mirror refresh of the recorded payloads (a copy of its
    # home, tests/conftest.py), made with the full fit; so is the second
    benchpress_home, first = refreshed_home.home, refreshed_home.outcome
    monkeypatch.delenv("BENCHPRESS_MIN_CELLS_PER_MODEL")  # the `fast_fit` of this directory
    monkeypatch.setenv("BENCHPRESS_HTTP_MIRROR", mirror_server.base_url)
    assert first.success
    before = cells_by_source(benchpress_home)

    # livebench answers 503 forever; epoch serves bytes that are not a ZIP (changed content)
    mirror_server.faults[LIVEBENCH_TABLE] = serve_status(503, b"down", {"Retry-After": "0"})
    mirror_server.faults[EPOCH_ZIP] = serve_status(200, b"PK\x03\x04 this is not a zip archive")
    second = run_refresh(mode="mirror", home=benchpress_home)

    assert second.success, second  # the others still refresh and the gate still decides
    assert second.source_outcomes["livebench"].startswith("FETCH FAILED, keeping last good data")
    assert "HTTP 503 after 4 attempts" in second.source_outcomes["livebench"]
    assert second.source_outcomes["epoch_ai"].startswith("PARSE FAILED, keeping last good data")
    assert "not a ZIP archive" in second.source_outcomes["epoch_ai"]
    assert {w.split(":")[0] for w in second.warnings} == {
        "livebench_payloads.fetch_succeeded",
        "epoch_ai_source_scores.parse_succeeded",
    }
    assert cells_by_source(benchpress_home) == before  # nothing dropped out

    con = duckdb.connect(str(warehouse_path(benchpress_home)), read_only=True)
    try:
        status = source_status(con)
        # the broken zip was archived byte for byte (so it can be re-parsed), no rows parsed
        archived = con.execute(
            "SELECT count(*) FROM raw_payloads WHERE source = 'epoch_ai'"
        ).fetchone()[0]
        failed_rows = con.execute(
            "SELECT count(*) FROM source_scores JOIN parses USING (parse_id)"
            " WHERE parses.status = 'failed'"
        ).fetchone()[0]
    finally:
        con.close()
    assert archived == 2 and failed_rows == 0
    assert status["livebench"]["status"] == "stale"
    assert "HTTP 503" in status["livebench"]["error"]
    epoch = status["epoch_ai"]
    assert epoch["status"] == "stale" and epoch["age_days"] >= 0
    assert epoch["data_fetched_at"] < epoch["last_attempt"]  # still the first run's data
    assert status["aider"]["status"] == "ok"

    # the published snapshot is unchanged (same content) and still answers
    manifest = read_manifest(snapshot_store_dir(benchpress_home) / second.version)
    assert second.version == first.version and not second.published
    assert BenchPress.load(second.version, store=snapshot_store_dir(benchpress_home)).predict(
        {"gpqa_diamond": 70}
    )
    assert manifest["version"] == first.version
