"""A refresh with the sources' steps in parallel processes (`benchpress refresh --workers N`).

Two runs under one refresh lease: first the sources' fetch and parse steps on Dagster's
multiprocess executor, each step in a process of its own forked from a server that has the code
loaded already (a fresh interpreter would spend about 3 s importing it per step); they hold the
warehouse only for short transactions (`pipelines.assets.sources`), so up to N of them work
side by side. Then the matrix, fit, check and publish steps in this process, one after the
other as in a serial refresh: they depend on each other, and a process each would only add
its start-up time. The job the step processes rebuild is `pipelines.run.parallel_refresh_job`,
where the refresh's runs are built; the lease the runs are tagged with is `pipelines.locking`'s.

Everything a step needs from this refresh travels in the run's config (home, fetch transport,
accepted drift), and the fork server is restarted when the environment changed since it
started, so a step never works with settings of an earlier refresh of the same process.
"""

from __future__ import annotations

import multiprocessing.forkserver
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import dagster as dg

from pipelines.assets.sources import payloads_key, scores_key
from pipelines.locking import LEASE_TAG
from pipelines.sources import SOURCES

if TYPE_CHECKING:
    from dagster._core.definitions.reconstruct import ReconstructableJob

PRELOAD = ["pipelines.definitions"]
POLL_SECONDS = 0.25

_server_environment: dict[str, str] | None = None  # os.environ when the fork server started


def multiprocess_config(workers: int) -> dict[str, Any]:
    """Dagster's multiprocess executor with up to `workers` step processes, forked from a
    server that has the code loaded."""
    return {
        "max_concurrent": workers,
        "start_method": {"forkserver": {"preload_modules": PRELOAD}},
    }


def refresh_executor(workers: int) -> dg.ExecutorDefinition:
    """The executor of the refresh job in the Dagster UI and the schedule: every step in the
    run's process for 1 worker, else a process per step, up to `workers` at once."""
    if workers <= 1:
        return dg.in_process_executor
    return dg.multiprocess_executor.configured(multiprocess_config(workers))


def resource_config(resources: dict[str, dg.ConfigurableResource]) -> dict[str, Any]:
    """Run config giving every field of `resources` its value now (an `EnvVar` read from the
    environment, an unset one left to its default)."""
    config: dict[str, Any] = {}
    for key, resource in resources.items():
        fields = {}
        for name in type(resource).model_fields:
            value = getattr(resource, name)
            if isinstance(value, dg.EnvVar):
                value = os.environ.get(value.env_var_name)
                if value is None:
                    continue
            fields[name] = value
        config[key] = {"config": fields}
    return config


def _fresh_fork_server() -> None:
    """Stop the fork server of an earlier parallel refresh of this process when the
    environment changed since it started (its step processes would inherit the old one)."""
    global _server_environment
    server = multiprocessing.forkserver._forkserver  # type: ignore[attr-defined]
    current = dict(os.environ)
    running = getattr(server, "_forkserver_pid", None) is not None
    if running and _server_environment != current and hasattr(server, "_stop"):
        server._stop()
    _server_environment = current


StepEvent = Callable[[str, bool], None]  # (step key, finished)
_STEP_DONE = frozenset(
    {
        dg.DagsterEventType.STEP_SUCCESS,
        dg.DagsterEventType.STEP_FAILURE,
        dg.DagsterEventType.STEP_SKIPPED,
    }
)


def tell_step(event: dg.DagsterEvent | None, on_step: StepEvent) -> None:
    """Call `on_step` when `event` starts or ends a step (succeeded, failed or skipped)."""
    if event is None or event.step_key is None:
        return
    if event.event_type == dg.DagsterEventType.STEP_START:
        on_step(event.step_key, False)
    elif event.event_type in _STEP_DONE:
        on_step(event.step_key, True)


@contextmanager
def watching_steps(instance: dg.DagsterInstance, lease: str, on_step: StepEvent) -> Iterator[None]:
    """Call `on_step` as the steps of the run tagged with `lease` start and finish, read from
    the instance's event log (the step processes write it, not this one)."""
    stop = threading.Event()

    def poll() -> None:
        run_id, cursor = None, None
        while True:
            finished = stop.is_set()
            try:
                if run_id is None:
                    runs = instance.get_runs(dg.RunsFilter(tags={LEASE_TAG: lease}), limit=1)
                    run_id = runs[0].run_id if runs else None
                if run_id is not None:
                    records = instance.get_records_for_run(run_id, cursor=cursor)
                    cursor = records.cursor
                    for record in records.records:
                        tell_step(record.event_log_entry.dagster_event, on_step)
            except Exception:  # noqa: BLE001 - a progress bar must not break a refresh
                return
            if finished:
                return
            stop.wait(POLL_SECONDS)

    thread = threading.Thread(target=poll, name="refresh-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


def source_asset_keys() -> list[dg.AssetKey]:
    """The keys of every source's payloads and source scores (what runs in parallel)."""
    return [key for s in SOURCES.values() for key in (payloads_key(s), scores_key(s))]


def matrix_asset_keys(job: dg.JobDefinition) -> list[dg.AssetKey]:
    """Every other asset of the refresh job: matrix, fit and publish (run after the sources)."""
    sources = set(source_asset_keys())
    return sorted(set(job.asset_layer.asset_graph.get_all_asset_keys()) - sources)


@contextmanager
def logging_at(instance: dg.DagsterInstance, level: str) -> Iterator[dg.DagsterInstance]:
    """`instance` with Dagster's own console log at `level`: a step process logs that it
    started before the run's loggers exist, at the instance's level (DEBUG unless set), which
    would put Dagster's log on the terminal of a quiet `benchpress refresh`."""
    ref = instance.get_ref()
    settings = dict(ref.settings or {})
    settings["python_logs"] = {**(settings.get("python_logs") or {}), "python_log_level": level}
    with dg.DagsterInstance.from_ref(ref._replace(settings=settings)) as quieter:
        yield quieter


def ingest_in_parallel(
    job: ReconstructableJob,
    instance: dg.DagsterInstance,
    lease: str,
    workers: int,
    run_config: dict[str, Any],
    on_step: StepEvent | None = None,
    log_level: str = "CRITICAL",
    tags: dict[str, str] | None = None,
) -> dg.JobExecutionResult:
    """Run the sources' steps of `job` (the refresh job on the multiprocess executor, as each
    step process rebuilds it) in up to `workers` processes, tagged with `lease` (the refresh
    lease its steps hold) and `tags`; return the result once the run has ended. `log_level`:
    Dagster's console log of the run and its step processes."""
    _fresh_fork_server()
    config = {**run_config, "execution": {"config": multiprocess_config(workers)}}
    tags = {**(tags or {}), LEASE_TAG: lease}
    keys = source_asset_keys()
    with logging_at(instance, log_level) as quiet:
        if on_step is None:
            return dg.execute_job(job, quiet, config, tags, asset_selection=keys)
        with watching_steps(quiet, lease, on_step):
            return dg.execute_job(job, quiet, config, tags, asset_selection=keys)
