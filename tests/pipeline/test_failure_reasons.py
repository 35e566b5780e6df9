"""What `benchpress refresh` prints for a failed step: the asset's own reason, not the wrapper
Dagster puts around it (real Dagster runs of tiny assets, in process)."""

from __future__ import annotations

import dagster as dg

from pipelines.run import root_cause


def failure_of(asset: dg.AssetsDefinition) -> object:
    result = dg.materialize([asset], raise_on_error=False)
    (event,) = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE]
    return event.event_specific_data.error


def test_an_exception_raised_by_an_asset_is_reported_by_its_message() -> None:
    @dg.asset
    def payloads() -> None:
        raise ValueError("mode 'mirror' needs a mirror base URL (BENCHPRESS_HTTP_MIRROR)")

    error = failure_of(payloads)
    assert "DagsterExecutionStepExecutionError" in error.cls_name  # what Dagster reports
    assert root_cause(error) == "mode 'mirror' needs a mirror base URL (BENCHPRESS_HTTP_MIRROR)"


def test_a_failure_is_reported_by_its_description_not_its_cause() -> None:
    @dg.asset
    def published() -> None:
        try:
            raise OSError("connection reset")
        except OSError as exc:
            raise dg.Failure(description="published 2026.11.30.2 locally, not pushed") from exc

    assert root_cause(failure_of(published)) == "published 2026.11.30.2 locally, not pushed"
    assert root_cause(None) == "failed (no error recorded)"


def test_a_fetch_mode_that_cannot_work_fails_a_ui_run_once_at_start(tmp_path) -> None:
    """UI and schedule runs do not pass `benchpress refresh`'s settings check: the fetcher
    resource refuses the mode when the run starts, before any step (not once per source)."""
    from pipelines.definitions import defs
    from pipelines.resources import default_resources

    job = defs.resolve_job_def("refresh")
    assert job.executor_def is dg.in_process_executor  # one process: resources start once
    with dg.DagsterInstance.ephemeral() as instance:
        result = job.execute_in_process(
            instance=instance,
            resources=default_resources(tmp_path, mode="bogus"),
            raise_on_error=False,
        )
    kinds = [e.event_type for e in result.all_events]
    assert not result.success and dg.DagsterEventType.STEP_START not in kinds
    (failure,) = [e for e in result.all_events if e.event_type.value == "RESOURCE_INIT_FAILURE"]
    assert "mode must be one of ('live', 'mirror', 'replay'), got 'bogus'" in str(
        failure.event_specific_data.error.cause or failure.event_specific_data.error
    )


def test_only_failed_drift_checks_are_offered_the_accept_route() -> None:
    from pipelines.assets.fit import accept_route
    from warehouse.snapshots import CheckRecord

    def record(name: str, passed: bool) -> CheckRecord:
        return CheckRecord("run", name, "factorization", "abc", passed, False, "")

    drift = {
        n: record(n, n != "cells_not_lost") for n in ("cells_not_lost", "holdout_error_stable")
    }
    assert "--accept-drift cells_not_lost`" in accept_route(drift)
    assert "BENCHPRESS_ACCEPT_DRIFT=cells_not_lost)" in accept_route(drift)
    rank2 = {"rank2_structure": record("rank2_structure", False)}
    assert accept_route(rank2).startswith("these checks cannot be accepted (only drift checks")


def test_metadata_tables_escape_leaderboard_strings_and_round_floats() -> None:
    import polars as pl

    from pipelines.stages.quality import frame_markdown

    frame = pl.DataFrame({"model_id": ["a|b", "[x](y)"], "score": [92.30000000000001, None]})
    assert frame_markdown(frame, limit=1).splitlines() == [
        "| model\\_id | score |",
        "|---|---|",
        "| a\\|b | 92.3 |",
        "",
        "... 1 more rows",
    ]
    assert frame_markdown(frame).splitlines()[-1] == "| \\[x\\](y) |  |"
