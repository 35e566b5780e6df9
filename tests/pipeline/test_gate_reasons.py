"""A failed gate says why, as the check's own verdict, and names the setting of its threshold
(Dagster adds a generic "blocking asset check failed" trace to the step; the reason is the
check's description and a line of the run's log)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from pipelines.assets.fit import factorization
from pipelines.checks import loading_rule, matrix_problems, rank2_rule, rank2_structure, shift_rule
from pipelines.resources import default_resources
from pipelines.settings import check_thresholds


def test_rank2_failure_names_floor_and_its_variable() -> None:
    assert rank2_rule(0.55, 0.6) == (
        False,
        "top-2 variance share 0.550 < floor 0.600 "
        "(set by BENCHPRESS_CHECK_MIN_TOP2_VARIANCE_SHARE)",
    )
    assert rank2_rule(0.7, 0.6)[0]


def test_drift_and_matrix_failures_name_their_variables() -> None:
    t = check_thresholds()
    drift = {"loading_angles_deg": [41.5, 3.0], "common_benchmarks": 120}
    ok, text, _ = loading_rule(drift, t)
    assert not ok
    assert text == (
        "largest principal angle between benchmark-loading subspaces 41.5 deg > ceiling 30 deg "
        "(BENCHPRESS_CHECK_MAX_LOADING_ANGLE_DEG; 120 common benchmarks)"
    )
    ok, text, _ = shift_rule({"prediction_shift": {"median": 7.25}}, t)
    assert (ok, text) == (
        False,
        "median prediction shift on reference probe sets 7.25 points > ceiling 5 "
        "(BENCHPRESS_CHECK_MAX_PREDICTION_SHIFT)",
    )
    cells = pl.DataFrame(
        {
            "model_id": ["m1", "m2"],
            "benchmark_id": ["b1", "b1"],
            "score": [50.0, 60.0],
            "source": ["s", "s"],
            "payload_url": ["u", "u"],
        }
    )
    assert matrix_problems(cells, {"b1": "percent"}, 50, 50) == [
        "2 models < minimum 50 (BENCHPRESS_CHECK_MIN_MODELS)",
        "1 benchmarks < minimum 50 (BENCHPRESS_CHECK_MIN_BENCHMARKS)",
    ]


def test_a_check_whose_fit_did_not_stage_fails_with_that_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real `rank2_structure` check, run in process on an empty home: its verdict (not an
    exception from inside it) says nothing was staged, and the run's log says so too."""
    monkeypatch.setenv("BENCHPRESS_HOME", str(tmp_path / "home"))
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [factorization, rank2_structure],
        selection=dg.AssetSelection.checks(rank2_structure),
        resources=default_resources(),
        instance=instance,
        raise_on_error=False,
    )
    (evaluation,) = [
        e.event_specific_data
        for e in result.all_events
        if e.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION
    ]
    assert not evaluation.passed
    run_id = result.run_id
    assert evaluation.description == (
        f"nothing staged by run {run_id}: materialize `factorization` in the same run (a "
        "snapshot staged by another run is never used)"
    )
    errors = [
        entry.user_message
        for entry in instance.all_logs(run_id)
        if entry.level >= 40 and entry.user_message.startswith("rank2_structure failed: ")
    ]
    assert errors == [f"rank2_structure failed: {evaluation.description}"]
