"""The whole asset graph, materialized through Dagster against a temporary BENCHPRESS_HOME,
fetching the recorded payloads over real HTTP from the loopback mirror."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.run import run_refresh
from pipelines.sources import SOURCES
from predictor import BenchPress
from predictor.snapshots.reader import list_versions, read_manifest
from predictor.util.paths import snapshot_store_dir, warehouse_path

pytestmark = pytest.mark.slow


@pytest.fixture
def refreshed(refreshed_home, mirror_server, monkeypatch):
    """The home after one mirror refresh (a copy of the worker's shared one), and the mirror."""
    monkeypatch.setenv("BENCHPRESS_HTTP_MIRROR", mirror_server.base_url)
    return refreshed_home.home, refreshed_home.outcome, mirror_server


def one(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None):
    return con.execute(sql, params or []).fetchone()[0]


def test_every_stage_has_its_rows(refreshed) -> None:
    home, outcome, _ = refreshed
    assert outcome.success, outcome
    assert outcome.published and outcome.version is not None
    assert outcome.source_outcomes == {source: "new" for source in SOURCES}

    con = duckdb.connect(str(warehouse_path(home)), read_only=True)
    try:
        # raw payloads: every URL archived once, byte counts recorded
        per_source = dict(
            con.execute("SELECT source, count(*) FROM raw_payloads GROUP BY 1").fetchall()
        )
        assert per_source["benchpress_matrix"] == 1
        assert per_source["livebench"] == 2
        assert set(per_source) == set(SOURCES)
        # parsed rows, exactly what the parsers produce on these bytes
        rows = dict(
            con.execute(
                "SELECT p.source, count(*) FROM source_scores s JOIN parses p USING (parse_id)"
                " GROUP BY 1"
            ).fetchall()
        )
        assert rows["benchpress_matrix"] == 2604
        assert rows["livebench"] == 2921
        assert all(rows[source] > 0 for source in SOURCES)
        # normalized: one row per source row, none dropped
        assert one(con, "SELECT count(*) FROM normalized_scores") == sum(rows.values())
        assert (
            one(
                con,
                "SELECT count(*) FROM normalized_scores WHERE source = 'benchpress_matrix'"
                " AND resolution = 'resolved'",
            )
            == 2604
        )
        # matrix: one cell per resolved (model, benchmark), with provenance
        distinct = one(
            con,
            "SELECT count(*) FROM (SELECT DISTINCT model_id, benchmark_id FROM normalized_scores"
            " WHERE resolution = 'resolved')",
        )
        assert one(con, "SELECT count(*) FROM matrix_cells") == distinct
        assert one(con, "SELECT count(*) FROM matrix_cells WHERE payload_sha256 IS NULL") == 0
        models = one(con, "SELECT count(DISTINCT model_id) FROM matrix_cells")
        benchmarks = one(con, "SELECT count(DISTINCT benchmark_id) FROM matrix_cells")
    finally:
        con.close()
    assert models >= 80 and benchmarks >= 100

    manifest = read_manifest(snapshot_store_dir(home) / outcome.version)
    assert manifest["counts"]["models"] == models
    assert manifest["counts"]["benchmarks"] == benchmarks
    assert manifest["counts"]["cells"] == distinct
    assert manifest["quality"]["variance_share_top2"] > 0.6

    # What the Dagster UI shows on the factorization: plots as inline PNGs, suspicious cells.
    import dagster as dg

    from predictor.util.paths import dagster_home

    with dg.DagsterInstance.from_config(str(dagster_home(home))) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("factorization"))
        metadata = event.asset_materialization.metadata
    for plot in ("spectrum", "benchmark_loadings", "predicted_vs_observed", "matrix_heatmap"):
        assert metadata[f"plot_{plot}"].value.startswith("![")
        assert "data:image/png;base64," in metadata[f"plot_{plot}"].value
    assert metadata["suspicious_cells"].value == manifest["quality"]["suspicious_cells"] > 0
    assert metadata["suspicious_scores"].value.startswith("| model | benchmark |")
    factors = metadata["fold_in_factor90_by_known"].value
    assert set(factors) == {"1-3", "4-6", "7-10", "11-20", "21+"}
    assert factors == manifest["quality"]["fold_in_factor90_by_known"]


def test_a_second_refresh_is_cheap_and_publishes_nothing_new(refreshed) -> None:
    home, first, mirror = refreshed
    mirror.requests.clear()
    second = run_refresh(mode="mirror", home=home)
    assert second.success and not second.published
    assert second.version == first.version
    assert list_versions(snapshot_store_dir(home)) == [first.version]
    statuses = {status for _, status in mirror.requests}
    assert statuses == {"304"}, mirror.requests  # conditional GET: nothing re-downloaded
    con = duckdb.connect(str(warehouse_path(home)), read_only=True)
    try:
        assert one(con, "SELECT count(*) FROM parses") == len(SOURCES)  # nothing re-parsed
        assert one(con, "SELECT count(*) FROM fetch_log WHERE outcome = 'unchanged'") == len(
            SOURCES
        )
    finally:
        con.close()


def test_published_snapshot_answers_predictions(refreshed) -> None:
    home, outcome, _ = refreshed
    bp = BenchPress.load(outcome.version, store=snapshot_store_dir(home))
    predictions = bp.predict({"gpqa_diamond": 80, "hle": 20, "mmlu_pro": 80})
    assert len(predictions) >= 50
    provenance = bp.scores().filter(bp.scores()["benchmark_id"] == "gpqa_diamond")
    assert provenance["url"].str.starts_with("https://").all()
