"""The code location loads and shows the whole lineage: assets per stage, checks, schedule."""

from __future__ import annotations

import dagster as dg

from pipelines.definitions import defs
from pipelines.settings import DRIFT_CHECKS
from pipelines.sources import SOURCES


def test_lineage_has_every_stage() -> None:
    graph = defs.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    expected = {f"{s}_payloads" for s in SOURCES} | {f"{s}_source_scores" for s in SOURCES}
    expected |= {"normalized_scores", "score_matrix", "factorization", "published_snapshot"}
    assert keys == expected

    def parents(name: str) -> set[str]:
        node = graph.get(dg.AssetKey(name))
        return {key.to_user_string() for key in node.parent_keys}

    assert parents("livebench_source_scores") == {"livebench_payloads"}
    assert parents("normalized_scores") == {f"{s}_source_scores" for s in SOURCES}
    assert parents("score_matrix") == {"normalized_scores"}
    assert parents("factorization") == {"score_matrix"}
    assert parents("published_snapshot") == {"factorization"}


def test_groups_pools_and_blocking_checks() -> None:
    graph = defs.resolve_asset_graph()
    groups = {key.to_user_string(): graph.get(key).group_name for key in graph.get_all_asset_keys()}
    assert groups["epoch_ai_payloads"] == "ingest"
    assert groups["epoch_ai_source_scores"] == "parse"
    assert groups["normalized_scores"] == "normalize"
    assert groups["score_matrix"] == "matrix"
    assert groups["factorization"] == "fit"
    assert groups["published_snapshot"] == "publish"
    for key in graph.get_all_asset_keys():  # the sources hold the warehouse only briefly
        source = key.to_user_string().endswith(("_payloads", "_source_scores"))
        assert graph.get(key).pools == (set() if source else {"duckdb"}), key

    specs = [graph.get_check_spec(key) for key in graph.asset_check_keys]
    checks = {(spec.asset_key.to_user_string(), spec.name): spec for spec in specs}
    assert checks[("normalized_scores", "sources_fetched")].blocking  # nothing fetched
    assert checks[("score_matrix", "matrix_sanity")].blocking
    assert checks[("factorization", "rank2_structure")].blocking
    for name in DRIFT_CHECKS:
        assert checks[("factorization", name)].blocking, name
    assert ("livebench_payloads", "fetch_succeeded") in checks


def test_daily_schedule_runs_the_refresh_job() -> None:
    schedule = defs.resolve_schedule_def("daily_refresh")
    assert schedule.cron_schedule == "17 4 * * *"
    assert schedule.job_name == "refresh"
    job = defs.resolve_job_def("refresh")
    assert len(job.asset_layer.executable_asset_keys) == 2 * len(SOURCES) + 4
