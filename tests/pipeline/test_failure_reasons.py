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
