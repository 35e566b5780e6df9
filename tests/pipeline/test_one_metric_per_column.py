"""The publish-time check `one_metric_per_column`: a benchmark column whose cells from different
sources or cited documents form two far-apart clusters (two metrics in one column, as LongFact's
hallucination rates beside the Seed 2.0 model card's score) stops the publish; the columns of
the bundled snapshot pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from pipelines.bundle_pretrained import recorded_payload
from pipelines.definitions import defs
from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath
from pipelines.identity.registry import load_registry
from pipelines.identity.resolve import resolve
from pipelines.run import run_refresh
from pipelines.sources import benchpress_matrix
from pipelines.stages.clusters import ALLOW_ENV, cluster_problems
from pipelines.stages.snapshot import GATE_CHECKS
from pipelines.transforms.matrix import build_matrix
from predictor.snapshots.pretrained import pretrained_root
from predictor.snapshots.reader import list_versions
from predictor.util.paths import snapshot_store_dir

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "predictor" / "data" / "snapshots"
SEED2_CARD = benchpress_matrix.SEED2_MODEL_CARD
OPENAI_POST = "https://openai.com/index/introducing-gpt-5-for-developers/"


def paper_rows(merge_longfact: bool) -> pl.DataFrame:
    """The recorded BenchPress matrix parsed and resolved; `merge_longfact` puts the Seed 2.0
    card's LongFact cells back into the rate's column, as the payload has them."""
    data, entry = recorded_payload()
    frame = benchpress_matrix.parse({benchpress_matrix.URL: data})
    if merge_longfact:
        column = pl.col("extra").str.json_path_match("$.matrix_column")
        frame = frame.with_columns(pl.coalesce(column, "benchmark_key").alias("benchmark_key"))
    frame = frame.with_columns(
        pl.lit(1, pl.Int64).alias("parse_id"),
        pl.lit(entry["sha256"]).alias("payload_sha256"),
        pl.lit(None, pl.Datetime("us", "UTC")).alias("fetched_at"),
    )
    return resolve(frame, load_registry())


def scales() -> dict[str, str]:
    return dict(load_registry().benchmarks.select("benchmark_id", "scale").iter_rows())


def test_longfact_as_the_payload_mixes_it_is_flagged_with_both_clusters() -> None:
    rows = paper_rows(merge_longfact=True)
    cells, _ = build_matrix(rows)
    problems, split = cluster_problems(cells, rows, scales())
    assert split.select(
        "benchmark_id", "n_low", "low_min", "low_max", "n_high", "high_min", "high_max", "gap"
    ).rows() == [
        ("longfact_concepts", 7, 0.7, 5.2, 5, 92.8, 99.7, 87.6),
        ("longfact_objects", 7, 1.1, 8.9, 5, 92.9, 99.2, 84.0),
    ]
    assert split["low_origins"].to_list() == [[f"benchpress_matrix: {OPENAI_POST}"]] * 2
    assert split["high_origins"].to_list() == [[f"benchpress_matrix: {SEED2_CARD}"]] * 2
    assert problems[0].startswith(
        "benchmark longfact_concepts holds two separate clusters from different origins: "
        f"7 cells 0.7 to 5.2 (benchpress_matrix: {OPENAI_POST}) and 5 cells 92.8 to 99.7 "
        f"(benchpress_matrix: {SEED2_CARD}), a gap of 87.6 = 12.7 x the wider group's spread"
    )
    assert problems[0].endswith(f"list the benchmark in {ALLOW_ENV} once reviewed as one metric")
    allowed = frozenset({"longfact_concepts", "longfact_objects"})
    assert cluster_problems(cells, rows, scales(), allowed)[0] == []


def test_the_parsed_paper_matrix_has_one_metric_per_column() -> None:
    rows = paper_rows(merge_longfact=False)
    cells, _ = build_matrix(rows)
    assert cluster_problems(cells, rows, scales())[0] == []


def origins_of_bundled(cells: pl.DataFrame) -> pl.DataFrame:
    """The paper matrix's parsed rows (citations) for a bundled snapshot's cells; the other
    sources cite no document per cell, so their origin is the source."""
    data, entry = recorded_payload()
    frame = benchpress_matrix.parse({benchpress_matrix.URL: data})
    return frame.with_columns(pl.lit(entry["sha256"]).alias("payload_sha256"))


@pytest.mark.parametrize(
    "folder",
    [
        *(BUNDLED / v for v in list_versions(BUNDLED)),
        pretrained_root() / "microsoft-benchpress-v1",
    ],
    ids=lambda p: p.name,
)
def test_the_normal_columns_of_the_bundled_snapshots_pass(folder: Path) -> None:
    """Every column of the shipped data but LongFact's (the two metrics the current bundle
    still mixes, until it is rebuilt from the parser that splits them)."""
    cells = pl.read_parquet(folder / "cells.parquet").rename({"url": "payload_url"})
    assert cells["benchmark_id"].n_unique() > 130
    normal = cells.filter(~pl.col("benchmark_id").is_in(["longfact_concepts", "longfact_objects"]))
    assert cluster_problems(normal, origins_of_bundled(cells), scales())[0] == []


def test_the_check_is_blocking_on_the_matrix_and_part_of_the_gate() -> None:
    graph = defs.resolve_asset_graph()
    specs = {graph.get_check_spec(k).name: graph.get_check_spec(k) for k in graph.asset_check_keys}
    spec = specs["one_metric_per_column"]
    assert spec.blocking and spec.asset_key.to_user_string() == "score_matrix"
    assert ALLOW_ENV in spec.description
    assert "one_metric_per_column" in GATE_CHECKS


def card_moved(root: Path) -> Path:
    """The replay root with the Seed 2.0 card cited at another address (the next LongFact: a
    second metric from a document the parser does not know), served as fetched now."""
    shutil.copytree(DEFAULT_REPLAY_ROOT, root)
    rel = replay_relpath(benchpress_matrix.URL)
    path = root / rel
    moved = "https://example.org/seed2/model-card.pdf"
    path.write_bytes(path.read_bytes().replace(SEED2_CARD.encode(), moved.encode()))
    index_path = root / "_sources" / "benchpress_matrix.recorded.json"
    index = json.loads(index_path.read_text())
    index.pop(rel)
    index_path.write_text(json.dumps(index))
    return root


@pytest.mark.slow
def test_a_refresh_with_two_metrics_in_one_column_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("BENCHPRESS_REPLAY_ROOT", str(card_moved(tmp_path / "root")))
    outcome = run_refresh(mode="replay", home=home)
    assert not outcome.success and outcome.version is None
    assert list_versions(snapshot_store_dir(home)) == []
    (failed,) = outcome.failed_checks
    assert failed.startswith(
        "score_matrix.one_metric_per_column: benchmark longfact_concepts holds two separate "
        "clusters from different origins: 7 cells 0.7 to 5.2"
    )
    assert "5 cells 92.8 to 99.7 (benchpress_matrix: https://example.org/seed2/model-card.pdf)" in (
        failed
    )
    assert "benchmark longfact_objects holds two separate clusters" in failed
