"""An unchanged rerun reuses what was built. `benchpress refresh` a second time over the same
recorded payloads stops after the sources' steps: the matrix would be built from what the
published snapshot was built from (`pipelines.stages.unchanged`), so it says so and publishes
nothing. When a matrix run does happen with the published snapshot's inputs (a setting that
changes nothing, a run from the Dagster UI), it stages that snapshot again instead of
refitting (the fit is deterministic), and Dagster's lineage shows every asset materialized,
with metadata saying what was reused."""

from __future__ import annotations

import subprocess

import dagster as dg
import pytest

from pipelines.sources import SOURCES
from pipelines.stages.fit import FitParams, method_label
from pipelines.stages.ingest import nothing_fetched
from predictor.snapshots.reader import (
    fitted_method,
    fitted_settings,
    list_versions,
    method_settings,
)
from predictor.util.paths import bundled_snapshot_dir, dagster_home, snapshot_store_dir
from tests.conftest import BIN
from tests.support.shared_home import CliRefreshed, subprocess_environment


def test_the_fit_is_named_before_it_runs() -> None:
    """`planned_identity` names the method as the fit will record it (the bundled one's)."""
    (bundled,) = list_versions(bundled_snapshot_dir())
    assert method_label() == fitted_method(bundled_snapshot_dir() / bundled)


def test_the_fit_s_hyperparameters_are_named_before_it_runs() -> None:
    """`planned_identity` names every hyperparameter as the fit records it: the bundled
    snapshot's (so a replay refresh reproduces it), and another default would not match."""
    (bundled,) = list_versions(bundled_snapshot_dir())
    planned = FitParams().completer().get_params()
    assert method_settings(planned) == fitted_settings(bundled_snapshot_dir() / bundled)
    assert method_settings({**planned, "n_keep": 80}) != method_settings(planned)


@pytest.mark.parametrize(
    ("outcomes", "fails"),
    [
        ({"a": "failed", "b": "failed"}, True),
        ({"a": "failed"}, True),  # b never fetched
        ({"a": "failed", "b": "unchanged"}, False),  # nothing new is not nothing fetched
        ({"a": "new", "b": "failed"}, False),
    ],
)
def test_nothing_fetched_is_every_newest_fetch_failed(outcomes: dict, fails: bool) -> None:
    problem = nothing_fetched(outcomes, ["a", "b"])
    assert (problem is not None) == fails
    if fails:
        assert problem.startswith("no source could be fetched: the newest fetch of each of the 2")


def _materialized_keys(instance: dg.DagsterInstance, run_id: str, asset: str) -> set[str]:
    """The metadata keys of `asset`'s materialization in run `run_id`."""
    (event,) = [
        e.dagster_event
        for e in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
        if e.dagster_event.asset_key == dg.AssetKey(asset)
    ]
    return set(event.event_specific_data.materialization.metadata)


@pytest.mark.slow
def test_an_unchanged_rerun_reuses_the_published_snapshot(cli_refreshed_home: CliRefreshed) -> None:
    home, first = cli_refreshed_home.home, cli_refreshed_home.done
    assert first.returncode == 0, first.stderr[-2000:]
    assert "nothing new" not in first.stdout  # a new home builds and fits
    store = snapshot_store_dir(home)
    (version,) = list_versions(store)

    def rerun(**env: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(BIN), "refresh", "--mode", "replay", "--no-progress"],
            capture_output=True,
            text=True,
            env=subprocess_environment(BENCHPRESS_HOME=str(home), **env),
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        lines = done.stdout.splitlines()
        assert [line for line in lines if line.startswith("  ")] == [
            f"  {source}: unchanged" for source in sorted(SOURCES)
        ]
        assert lines[len(SOURCES) :][:2] == [
            f"nothing new: reused snapshot {version}, built from the same inputs (not refitted)",
            f"snapshot unchanged (identical content), latest is {version}",
        ]
        assert done.stderr == ""
        assert list_versions(store) == [version]
        return done

    def runs(instance: dg.DagsterInstance) -> list[str]:
        records = instance.get_run_records(
            dg.RunsFilter(statuses=[dg.DagsterRunStatus.SUCCESS]), ascending=True
        )
        return [record.dagster_run.run_id for record in records]

    with dg.DagsterInstance.from_config(str(dagster_home(home))) as instance:
        (fitted,) = runs(instance)

    # nothing new: only the sources' steps run, the matrix's are not needed
    rerun()
    with dg.DagsterInstance.from_config(str(dagster_home(home))) as instance:
        (_, sources_only) = runs(instance)
        steps = {s.step_key for s in instance.get_run_step_stats(sources_only)}
        assert steps == {f"{s}_{kind}" for s in SOURCES for kind in ("payloads", "source_scores")}
        published = instance.get_latest_materialization_event(dg.AssetKey("published_snapshot"))
        assert published is not None and published.run_id == fitted

    # a setting set to its default value: the matrix is built, with the published inputs
    rerun(BENCHPRESS_MAX_UNRESOLVED_SHARE="0.15")
    with dg.DagsterInstance.from_config(str(dagster_home(home))) as instance:
        reused = runs(instance)[-1]
        assert reused not in (fitted, sources_only)

        def metadata(key: str) -> dict:
            event = instance.get_latest_materialization_event(dg.AssetKey(key))
            assert event is not None and event.run_id == reused  # still materialized
            return {k: v.value for k, v in event.asset_materialization.metadata.items()}

        factorization = metadata("factorization")
        assert factorization["reused_snapshot"] == version
        assert factorization["variance_share_top2"] > 0  # the snapshot's recorded figures
        published = metadata("published_snapshot")
        assert published["reused_snapshot"] == version and published["published"] is False
        checks = instance.event_log_storage.get_asset_check_execution_history(
            dg.AssetCheckKey(dg.AssetKey("factorization"), "predictions_stable"), limit=1
        )
        assert checks[0].run_id == reused
        evaluation = checks[0].event.dagster_event.event_specific_data
        assert evaluation.passed and evaluation.description.startswith(
            f"built from the same inputs as published snapshot {version}: nothing drifted"
        )
        # the fit is what an unchanged rerun no longer pays for: none of its products (the
        # table of every cell's leave-one-out residual) in the metadata. The time saved is
        # measured by `benchmarks/cli_latency.py --refresh`, not here: with the suite's
        # calibration cache the first fit itself takes seconds, too close for a timed test.
        fit_products = {"suspicious_scores"}
        assert fit_products <= _materialized_keys(instance, fitted, "factorization")
        assert "reused" in factorization and not fit_products & factorization.keys()
