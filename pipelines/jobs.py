"""The refresh job (the whole graph) and its daily schedule."""

from __future__ import annotations

import dagster as dg

refresh_job = dg.define_asset_job(
    name="refresh",
    selection=dg.AssetSelection.all(),
    description="Fetch every leaderboard, rebuild the matrix, refit, check and publish.",
)

daily_refresh = dg.ScheduleDefinition(
    name="daily_refresh",
    job=refresh_job,
    cron_schedule="17 4 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
)
