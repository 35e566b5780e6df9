"""`benchpress refresh` progress: step events observed from a real in-process Dagster run, a
bar on stderr only when asked for, and the refresh's own output unchanged."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import pipelines.run
from pipelines.cli.warehouse import stats_frame
from pipelines.run import RefreshOutcome, StepProgress, execute_with_progress
from predictor.cli import main
from predictor.util.paths import warehouse_path
from tests.support.shared_home import CLI_REFRESH, CliRefreshed
from warehouse.stats import warehouse_stats

BIN = Path(sys.executable).parent / "benchpress"
BAR = re.compile(r"refresh:\s+\d+%\|")


@dg.asset
def first() -> int:
    return 1


@dg.asset
def second(first: int) -> int:
    return first + 1


@dg.asset
def broken(first: int) -> int:
    raise RuntimeError("boom")


@dg.asset
def after_broken(broken: int) -> int:
    return broken


def tiny_job() -> dg.JobDefinition:
    defs = dg.Definitions(
        assets=[first, second, broken, after_broken],
        jobs=[dg.define_asset_job("tiny", selection=dg.AssetSelection.all())],
    )
    return defs.resolve_job_def("tiny")


def test_execute_job_reports_each_step_start_and_finish() -> None:
    seen: list[StepProgress] = []
    with dg.DagsterInstance.ephemeral() as instance:
        result = execute_with_progress(tiny_job(), instance, seen.append, raise_on_error=False)
    assert not result.success  # `broken` failed, `after_broken` never ran
    assert {s.total for s in seen} == {4}
    started = [s.step for s in seen if not s.finished]
    finished = [s.step for s in seen if s.finished]
    assert started[0] == "first" and set(started) == {"first", "second", "broken"}
    assert set(finished) == {"first", "second", "broken"}
    assert [s.done for s in seen if s.finished] == [1, 2, 3]
    for step in finished:  # every step is reported started before it is reported finished
        order = [s.finished for s in seen if s.step == step]
        assert order == [False, True]


def test_a_failing_callback_does_not_break_the_run() -> None:
    calls: list[StepProgress] = []

    def explode(step: StepProgress) -> None:
        calls.append(step)
        raise RuntimeError("bar broke")

    with dg.DagsterInstance.ephemeral() as instance:
        result = execute_with_progress(tiny_job(), instance, explode, raise_on_error=False)
        assert len(calls) == 1  # dropped after its first error
        assert result.output_for_node("second") == 2


def fake_refresh(**kwargs) -> RefreshOutcome:
    """`run_refresh` without Dagster: three steps, then published."""
    fake_refresh.kwargs = kwargs
    progress = kwargs.get("progress")
    if progress is not None:
        for done, step in enumerate(["a_payloads", "matrix", "published_snapshot"], start=1):
            progress(StepProgress(step, False, done - 1, 3))
            progress(StepProgress(step, True, done, 3))
    return RefreshOutcome(
        success=True, version="2026.01.01.1", published=True, source_outcomes={"a": "new"}
    )


def test_refresh_bar_only_when_asked(monkeypatch, capsys, benchpress_home: Path) -> None:
    monkeypatch.setattr(pipelines.run, "run_refresh", fake_refresh)
    assert main(["refresh"]) == 0
    plain = capsys.readouterr()
    assert fake_refresh.kwargs["progress"] is None  # not a terminal: no bar, no listener
    assert plain.err == ""
    state = f"state: {benchpress_home.resolve()} (set by BENCHPRESS_HOME)\n"
    assert plain.out == "  a: new\nsnapshot published 2026.01.01.1\n" + state

    assert main(["refresh", "--progress"]) == 0
    forced = capsys.readouterr()
    assert forced.out == plain.out  # what refresh prints is unchanged
    assert BAR.search(forced.err) and "3/3" in forced.err, forced.err

    assert main(["refresh", "--verbose"]) == 0  # auto never draws over Dagster's log
    assert fake_refresh.kwargs["progress"] is None


@pytest.mark.slow
def test_real_refresh_with_bar_then_csv_stats(cli_refreshed_home: CliRefreshed) -> None:
    """The whole job with `--progress` (the session's `benchpress refresh --mode replay
    --progress`, tests/conftest.py), then `warehouse stats --csv`."""
    home, done = cli_refreshed_home.home, cli_refreshed_home.done
    env = {**os.environ, "BENCHPRESS_HOME": str(home)}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN), *argv], capture_output=True, text=True, env=env, timeout=600, check=False
        )

    assert done.args[1:] == [*CLI_REFRESH]
    assert done.returncode == 0, done.stderr[-2000:]
    assert "snapshot published" in done.stdout and "%|" not in done.stdout
    steps = re.findall(r"(\d+)/(\d+) \[", done.stderr)
    assert BAR.search(done.stderr) and steps, done.stderr[-2000:]
    total = len(refresh_steps())
    assert {int(t) for _, t in steps} == {total}
    assert max(int(n) for n, _ in steps) == total  # every step finished

    stats = run("warehouse", "stats", "--csv")
    assert stats.returncode == 0 and stats.stderr == ""
    expected = stats_frame(warehouse_stats(warehouse_path(home)))
    got = pl.read_csv(io.StringIO(stats.stdout), schema_overrides=expected.schema)
    # age_days counts from now: the two reads are a few seconds apart
    assert_frame_equal(got.drop("age_days"), expected.drop("age_days"), check_exact=True)
    assert_frame_equal(got.select("age_days"), expected.select("age_days"), abs_tol=0.02)


def refresh_steps() -> list[str]:
    """The refresh job's op nodes: one step each."""
    from pipelines.definitions import defs

    return [node.name for node in defs.resolve_job_def("refresh").graph.nodes]
