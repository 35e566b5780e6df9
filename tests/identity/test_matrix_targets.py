"""Issue 4's targets on the embedded default, measured through the real pipeline (Dagster job,
DuckDB warehouse): the resolved matrix without the Open LLM Leaderboard has at least 300 models
x 150 benchmarks and 8,000 cells; frontier models present in several sources are one identity
per setting with cells from each source; `warehouse stats` reports per-source resolution."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipelines.transforms.matrix import build_matrix
from predictor.util.paths import warehouse_path
from tests.support.shared_home import CliRefreshed, copy_home
from warehouse.stats import warehouse_stats

pytestmark = pytest.mark.slow

FRONTIER = (
    "gpt-5",
    "gpt-5@medium",
    "claude-opus-4.5",
    "claude-sonnet-4@nothinking",
    "gemini-2.5-pro",
    "deepseek-r1-0528",
    "qwen3-235b",
    "kimi-k2",
    "o3-mini-high",
    "o3-high",
)


@pytest.fixture(scope="module")
def warehouse(cli_refreshed_template: CliRefreshed, tmp_path_factory) -> Path:
    """A copy of the home of the session's `benchpress refresh --mode replay` (tests/conftest.py;
    the fit's settings do not change the matrix: the snapshot keeps every cell)."""
    done = cli_refreshed_template.done
    assert done.returncode == 0, done.stderr[-3000:]
    return copy_home(cli_refreshed_template.home, tmp_path_factory.mktemp("targets") / "home")


def test_matrix_size_without_the_open_llm_leaderboard(warehouse) -> None:
    con = duckdb.connect(str(warehouse_path(warehouse)), read_only=True)
    try:
        normalized = con.execute(
            "SELECT * FROM normalized_scores WHERE source <> 'open_llm_leaderboard'"
        ).pl()
        published = con.execute(
            "SELECT count(DISTINCT model_id), count(DISTINCT benchmark_id), count(*)"
            " FROM matrix_cells"
        ).fetchone()
    finally:
        con.close()
    cells, conflicts = build_matrix(normalized)
    models, benchmarks = cells["model_id"].n_unique(), cells["benchmark_id"].n_unique()
    assert models >= 300 and benchmarks >= 150 and cells.height >= 8000, (
        models,
        benchmarks,
        cells.height,
    )
    assert conflicts.height > 0 and (conflicts["difference"] > 3).all()
    # the published matrix (all sources) holds at least as much
    assert published[0] >= models and published[2] >= cells.height


def test_frontier_models_have_cells_from_each_of_their_sources(warehouse) -> None:
    con = duckdb.connect(str(warehouse_path(warehouse)), read_only=True)
    try:
        cells = con.execute("SELECT model_id, source FROM matrix_cells").pl()
        rows = con.execute(
            "SELECT model_id, source FROM normalized_scores WHERE resolution = 'resolved'"
        ).pl()
    finally:
        con.close()
    for model_id in FRONTIER:
        observed = set(rows.filter(pl.col("model_id") == model_id)["source"])
        published = set(cells.filter(pl.col("model_id") == model_id)["source"])
        assert len(observed) >= 3, (model_id, observed)
        assert len(published) >= 3, (model_id, published)


def test_warehouse_stats_reports_per_source_resolution(warehouse) -> None:
    stats = warehouse_stats(warehouse_path(warehouse))
    for source, facts in stats["sources"].items():
        assert facts["resolution_rate"] is not None, source
    assert stats["sources"]["benchpress_matrix"]["resolution_rate"] == 1.0
    assert stats["sources"]["livebench"]["resolution_rate"] > 0.95
    assert stats["matrix"]["models"] >= 300 and stats["matrix"]["conflicts"] > 0
