"""The refresh job (the whole graph) and its daily schedule.

The schedule skips its tick while another refresh holds BENCHPRESS_HOME (a `benchpress
refresh`, or a run started from the UI), naming the holder; a run that starts anyway fails at
its first step (`pipelines.locking.hold_run_lease`), so two refreshes never interleave.
"""

from __future__ import annotations

import dagster as dg

from pipelines.locking import busy_with
from predictor.paths import benchpress_home

# In one process: every DuckDB writer is in the pool of 1, so steps run one at a time anyway;
# a process per step (the default) made UI and schedule runs about 10x slower than
# `benchpress refresh` and initialised the resources once per step.
refresh_job = dg.define_asset_job(
    name="refresh",
    selection=dg.AssetSelection.all(),
    description="Fetch every leaderboard, rebuild the matrix, refit, check and publish.",
    executor_def=dg.in_process_executor,
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
