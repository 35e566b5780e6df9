"""Dagster resources: the DuckDB warehouse, the fetch transport and the snapshot store, and the
`duckdb` pool that keeps the steps writing the warehouse one at a time.

Configured from environment variables (BENCHPRESS_HOME, BENCHPRESS_FETCH_MODE,
BENCHPRESS_HTTP_MIRROR, BENCHPRESS_REPLAY_ROOT) through `dg.EnvVar` where they are set.

Every step that touches BENCHPRESS_HOME uses `warehouse`, so that resource holds the refresh
for its run (`pipelines.locking.hold_run_lease`): a run started from the UI or the schedule
fails at its first step while another refresh holds the home, whoever started it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import duckdb

from pipelines.fetch.transports import Fetcher
from pipelines.locking import RefreshLocked, hold_run_lease, lease_of
from pipelines.settings import (
    check_thresholds,
    fetch_deadlines,
    fit_params,
    guard_thresholds,
    parse_accepted,
    refresh_workers,
)
from pipelines.team.instance import check_instance
from predictor.util.paths import benchpress_home, snapshot_store_dir, warehouse_path
from warehouse.db import connect
from warehouse.ducklake import check_warehouse

DUCKDB_POOL = "duckdb"  # one writer at a time: dagster.yaml sets the pool limit to 1


class WarehouseResource(dg.ConfigurableResource):
    """The state directory: DuckDB file, staging area and snapshot store live under `home`."""

    home: str

    @property
    def home_path(self) -> Path:
        return Path(self.home).resolve()

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """Hold the refresh lease of this home for the run (once per step process)."""
        run = context.run
        if run is None:  # built outside a run (direct invocation): nothing to hold
            return
        try:
            hold_run_lease(self.home_path, lease_of(run), context.instance)
        except RefreshLocked as exc:
            raise dg.Failure(
                description=(
                    f"another refresh holds the lock of {self.home_path} "
                    f"({exc.holder.describe()}); run {run.run_id} does not start a second "
                    "one. Re-run it once that refresh has finished."
                ),
                metadata={
                    "holder_run_id": exc.holder.run_id or "",
                    "holder_pid": str(exc.holder.pid or ""),
                },
                allow_retries=False,
            ) from None

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with connect(warehouse_path(self.home_path)) as con:
            yield con

    @property
    def staging_dir(self) -> Path:
        return self.home_path / "staging"

    @property
    def store_dir(self) -> Path:
        return snapshot_store_dir(self.home_path)


class FetcherResource(dg.ConfigurableResource):
    """Which transport fetches payloads: live URLs, an HTTP mirror, or the bundled replay;
    `concurrency`: how many URLs of one source are fetched at once (the refresh's workers)."""

    mode: str = "replay"
    mirror: str = ""
    replay_root: str = ""
    concurrency: int = 1

    def fetcher(self) -> Fetcher:
        return Fetcher(
            mode=self.mode,
            mirror=self.mirror or None,
            replay_root=self.replay_root or None,
        )

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """A mode or mirror that cannot work fails the run once, when the resource starts,
        with the reason (a UI or schedule run would otherwise fail every fetch step)."""
        self.fetcher()
        fetch_deadlines()  # the same for a source or run deadline that is not a number


class PublishGateResource(dg.ConfigurableResource):
    """Explicit, documented override of drift checks for intended changes.

    `accept_drift` names drift checks (comma-separated, or `all`) whose failure is accepted
    for this run; the published manifest records what was accepted.
    """

    accept_drift: str = ""


def _env_or(name: str, default: str) -> str | dg.EnvVar:
    return dg.EnvVar(name) if os.environ.get(name) else default


def default_resources(
    home: Path | None = None,
    mode: str | None = None,
    accept_drift: str | None = None,
    workers: int | None = None,
) -> dict[str, dg.ConfigurableResource]:
    """Resources from the environment; explicit arguments (CLI flags, tests) take precedence."""
    return {
        "warehouse": WarehouseResource(
            home=str(home) if home else _env_or("BENCHPRESS_HOME", str(benchpress_home()))
        ),
        "fetcher": FetcherResource(
            mode=mode or _env_or("BENCHPRESS_FETCH_MODE", "replay"),
            mirror=_env_or("BENCHPRESS_HTTP_MIRROR", ""),
            replay_root=_env_or("BENCHPRESS_REPLAY_ROOT", ""),
            concurrency=workers or refresh_workers(),
        ),
        "publish_gate": PublishGateResource(
            accept_drift=accept_drift
            if accept_drift is not None
            else _env_or("BENCHPRESS_ACCEPT_DRIFT", "")
        ),
    }


def check_settings(mode: str | None = None, accept_drift: str | None = None) -> None:
    """Raise ValueError naming the setting when the environment cannot run a refresh (an unknown
    fetch mode, mirror mode without BENCHPRESS_HTTP_MIRROR, a threshold that is not a number,
    an unknown drift check): checked once before the run, as each would otherwise fail every
    step that reads it, with Dagster's wrapper in front of the reason."""
    Fetcher(
        mode=mode or os.environ.get("BENCHPRESS_FETCH_MODE") or "replay",
        mirror=os.environ.get("BENCHPRESS_HTTP_MIRROR") or None,
        replay_root=os.environ.get("BENCHPRESS_REPLAY_ROOT") or None,
    )
    check_thresholds()
    guard_thresholds()
    fit_params()
    fetch_deadlines()  # BENCHPRESS_SOURCE_DEADLINE, BENCHPRESS_RUN_DEADLINE
    refresh_workers()  # BENCHPRESS_REFRESH_WORKERS
    parse_accepted(
        accept_drift if accept_drift is not None else os.environ.get("BENCHPRESS_ACCEPT_DRIFT", "")
    )
    check_instance()  # BENCHPRESS_INSTANCE; for `team`, its PostgreSQL answers (host:port named)
    check_warehouse()  # BENCHPRESS_WAREHOUSE; for `ducklake`, its catalog and S3 answer
