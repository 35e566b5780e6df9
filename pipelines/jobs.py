"""The refresh job (the whole graph) and its daily schedule.

The schedule skips its tick while another refresh holds BENCHPRESS_HOME (a `benchpress
refresh`, or a run started from the UI), naming the holder; a run that starts anyway fails at
its first step (`pipelines.locking.hold_run_lease`), so two refreshes never interleave.
"""

from __future__ import annotations

import dagster as dg

from pipelines.locking import busy_with
from pipelines.parallel import refresh_executor
from pipelines.settings import refresh_workers
from predictor.util.paths import benchpress_home

# BENCHPRESS_REFRESH_WORKERS=1 (the default): every step in the run's own process, one after
# the other (a process per step made UI and schedule runs about 10x slower). N > 1: a process
# per step, up to N at once, forked from a server with the code loaded; the sources' steps then
# fetch and parse side by side while the "duckdb" pool keeps the matrix steps one at a time.
refresh_job = dg.define_asset_job(
    name="refresh",
    selection=dg.AssetSelection.all(),
    description="Fetch every leaderboard, rebuild the matrix, refit, check and publish.",
    executor_def=refresh_executor(refresh_workers()),
)


@dg.schedule(
    name="daily_refresh",
    job=refresh_job,
    cron_schedule="17 4 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="The refresh job at 04:17 UTC; skipped while another refresh holds the home.",
)
def daily_refresh(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
    home = benchpress_home()
    holder = busy_with(home, context.instance)
    if holder is not None:
        return dg.SkipReason(
            f"another refresh holds the lock of {home} ({holder.describe()}); not starting one"
        )
    return dg.RunRequest()
