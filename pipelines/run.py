"""Run the refresh job in-process against a real Dagster instance under BENCHPRESS_HOME."""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import logging
import os
import re
import shutil
import socket
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.locking import (
    HOST_TAG,
    LEASE_TAG,
    claim_run_lease,
    recover_abandoned_runs,
    refresh_lock,
    release_run_lease,
)
from pipelines.parallel import (
    ingest_in_parallel,
    matrix_asset_keys,
    resource_config,
    source_asset_keys,
    tell_step,
)
from pipelines.resources import check_settings, default_resources
from pipelines.settings import PUBLISH_URI_ENV, refresh_workers
from pipelines.stages.unchanged import matrix_inputs_key, reusable_version
from pipelines.team.instance import InstanceLost, settings_file, storage_loss_reported
from predictor.snapshots.reader import SnapshotError, list_versions, verify, version_key
from predictor.util.paths import benchpress_home, dagster_home, snapshot_store_dir, warehouse_path
from predictor.util.text_safety import StreamWrapper
from warehouse.db import open_waiting
from warehouse.ducklake import warehouse_backend

REPO_DAGSTER_YAML = Path(__file__).resolve().parent.parent / "dagster.yaml"


MANAGED_MARK = "# managed by benchpress-llm"  # first line of a home's dagster.yaml we may replace
# sha256 of the repo's dagster.yaml as released before MANAGED_MARK existed: a home's copy equal
# to one of them was never edited, so it is replaced too (or it would never get run monitoring)
EARLIER_REPO_CONFIGS = frozenset(
    {"990d7d52647a78fca846656ea327bf89a5c1919aa8bc015f81b292eae0dbb6c1"}
)


def ensure_dagster_home(home: Path | None = None) -> Path:
    """BENCHPRESS_HOME/dagster with the repo's dagster.yaml in it (the refresh's instance), or
    deploy/dagster-team.yaml with BENCHPRESS_INSTANCE=team (`pipelines.team.instance`).

    A copy that still starts with `MANAGED_MARK` is replaced when the repo's file changed, so
    a fix to the instance settings (run monitoring, pools) reaches homes made before it; a copy
    without the mark was edited on purpose and is left alone."""
    target = dagster_home(home)
    target.mkdir(parents=True, exist_ok=True)
    config = target / "dagster.yaml"
    source = settings_file()  # BENCHPRESS_INSTANCE: the repo's dagster.yaml or the team profile
    if not source.exists():
        return target
    wanted = source.read_bytes()
    current = config.read_bytes() if config.exists() else None
    managed = current is not None and (
        current.startswith(MANAGED_MARK.encode())
        or hashlib.sha256(current).hexdigest() in EARLIER_REPO_CONFIGS
    )
    if current is None or (current != wanted and managed):
        scratch = config.with_name(".dagster.yaml.new")
        scratch.write_bytes(wanted)
        scratch.replace(config)  # atomic: a starting UI never reads half a file
    return target


@dataclass
class RefreshOutcome:
    success: bool
    version: str | None = None
    published: bool = False
    failed_checks: list[str] = field(default_factory=list)  # blocking: "check: description"
    warnings: list[str] = field(default_factory=list)  # failed WARN checks (stale sources)
    failed_steps: list[str] = field(default_factory=list)
    source_outcomes: dict[str, str] = field(default_factory=dict)
    recovered_runs: list[str] = field(default_factory=list)  # runs of a killed refresh, closed
    # why the run fails although its steps succeeded: no source could be fetched, or (with
    # fail_on_stale) a source is stale; one line (`judge_sources`)
    failure: str | None = None
    # the published version is a bundled one whose inputs this run reproduced, published as
    # shipped (`warehouse.snapshots.publish`): the same content as the package's snapshot
    reproduced: bool = False
    # the latest published version, staged again instead of refitting: this run's matrix had
    # its inputs, so nothing new was built (`pipelines.assets.fit.reuse_published`)
    reused: str | None = None

    @property
    def stale_sources(self) -> list[str]:
        """Sources whose fetch or parse failed this run: their last good data is used."""
        return sorted(s for s, state in self.source_outcomes.items() if "FAILED" in state)

    @property
    def unfetched_sources(self) -> list[str]:
        return sorted(
            s for s, state in self.source_outcomes.items() if state.startswith(FETCH_FAILED)
        )


FETCH_FAILED = "FETCH FAILED"
NOTHING_FETCHED_CHECK = "normalized_scores.sources_fetched"  # `pipelines.checks`


def judge_sources(outcome: RefreshOutcome, fail_on_stale: bool = False) -> RefreshOutcome:
    """Fail `outcome` (success False, `failure` saying why in one line) when no source could
    be fetched at all (a refresh of nothing but old data: the network or the mirror is down),
    or, with `fail_on_stale`, when any source is stale. Returns `outcome`."""
    sources, unfetched = outcome.source_outcomes, outcome.unfetched_sources
    if sources and len(unfetched) == len(sources):
        first = sources[unfetched[0]].partition(": ")[2]
        outcome.failure = (
            f"no source could be fetched ({len(unfetched)} of {len(sources)} failed; "
            f"first: {first}); {_latest_text(outcome)}"
        )
        # the blocking check that stopped the publish says the same: one line, not two
        outcome.failed_checks = [
            c for c in outcome.failed_checks if not c.startswith(f"{NOTHING_FETCHED_CHECK}:")
        ]
    elif fail_on_stale and outcome.stale_sources:
        stale = outcome.stale_sources
        outcome.failure = (
            f"{len(stale)} of {len(sources)} sources stale (--fail-on-stale): "
            f"{', '.join(stale)}; {_latest_text(outcome)}"
        )
    if outcome.failure is not None:
        outcome.success = False
    return outcome


def _latest_text(outcome: RefreshOutcome) -> str:
    if outcome.version is None:
        return "nothing was published"
    if outcome.published:
        return f"snapshot {outcome.version} was published from their last good data"
    return f"latest stays {outcome.version}"


class _CurrentStderr(logging.StreamHandler):
    """A handler writing to whatever `sys.stderr` is when a record comes (the command's
    terminal-safe stream, or a test's capture)."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self) -> Any:  # type: ignore[override]
        return sys.stderr


@dg.logger(
    {
        "log_level": dg.Field(str, is_required=False, default_value="INFO"),
        "name": dg.Field(str, is_required=False, default_value="dagster"),
    },
    description="Dagster's console log line for line, without colour codes: `benchpress` "
    "escapes every control character it prints (a name from a payload must not steer the "
    "terminal), so colour codes would show as text.",
)
def plain_console_logger(init_context: dg.InitLoggerContext) -> logging.Logger:
    config = init_context.logger_config
    logger = logging.Logger(config["name"], level=str(config["log_level"]).upper())
    handler = _CurrentStderr()
    handler.setFormatter(
        logging.Formatter(
            "%(asctime)s - %(name)s - %(levelname)s - %(message)s", "%Y-%m-%d %H:%M:%S %z"
        )
    )
    logger.addHandler(handler)
    return logger


@dataclass(frozen=True)
class StepProgress:
    """One step of the refresh job started or finished (for a progress bar)."""

    step: str  # step key: the asset (or asset check) being computed
    finished: bool  # False: it started; True: it succeeded, failed or was skipped
    done: int  # steps finished so far
    total: int  # steps in the job


StepCallback = Callable[[StepProgress], None]


class _StepCounter:
    """Turns "step started / finished" into `StepProgress` for a progress callback; a callback
    that raises is dropped, it never fails the run."""

    def __init__(self, progress: StepCallback, total: int):
        self.progress: StepCallback | None = progress
        self.total = total
        self.finished: set[str] = set()

    def __call__(self, step: str, finished: bool) -> None:
        if self.progress is None:
            return
        if finished:
            self.finished.add(step)
        try:
            self.progress(StepProgress(step, finished, len(self.finished), self.total))
        except Exception:  # a progress bar must not break a refresh
            self.progress = None

    def settle(self, why: str) -> None:
        """The refresh ended before the job's other steps because `why`: a full bar."""
        self.total = len(self.finished | {why})
        self(why, True)


def execute_with_progress(
    job: dg.JobDefinition,
    instance: dg.DagsterInstance,
    progress: StepCallback | _StepCounter | None = None,
    **kwargs,
) -> dg.ExecuteInProcessResult:
    """`job.execute_in_process(instance=instance, **kwargs)`, telling `progress` as each step
    starts and finishes (a `_StepCounter` goes on counting from the steps it has seen).

    Steps are observed through `DagsterInstance.add_event_listener` for the run's id (each
    event as the in-process executor stores it), so the job itself is unchanged (no hooks, no
    extra events). A callback that raises is dropped; it never fails the run."""
    if progress is None or not hasattr(instance, "add_event_listener"):
        return job.execute_in_process(instance=instance, **kwargs)
    run_id = kwargs.pop("run_id", None) or str(uuid.uuid4())
    count = (
        progress
        if isinstance(progress, _StepCounter)
        else _StepCounter(progress, len(job.graph.nodes))  # one step per op node
    )

    instance.add_event_listener(run_id, lambda entry: tell_step(entry.dagster_event, count))
    return job.execute_in_process(instance=instance, run_id=run_id, **kwargs)


def _refresh_job_def() -> dg.JobDefinition:
    """The code location's refresh job (`pipelines.definitions`), with the plain console log."""
    # deferred: the code location (every asset) takes ~2 s to load; `benchpress ui` needs none
    from pipelines.definitions import defs

    return defs.resolve_job_def("refresh").with_logger_defs({"console": plain_console_logger})


def parallel_refresh_job() -> dg.JobDefinition:
    """The refresh job on the multiprocess executor (its workers set in the run config), as
    `benchpress refresh --workers N` runs it with its plain console log; each step process
    rebuilds it from this module-level function (`dg.reconstructable`)."""
    return _parallel_refresh_job()


@functools.cache
def _parallel_refresh_job() -> dg.JobDefinition:
    from pipelines.definitions import defs  # deferred: ~2 s; `benchpress ui` loads none of it

    job = dg.define_asset_job(
        "refresh", selection=dg.AssetSelection.all(), executor_def=dg.multiprocess_executor
    )
    parallel = dg.Definitions(
        assets=defs.assets,
        asset_checks=defs.asset_checks,
        jobs=[job],
        resources=defs.resources,
    )
    return parallel.resolve_job_def("refresh").with_logger_defs({"console": plain_console_logger})


def _execute(
    job: dg.JobDefinition,
    instance: dg.DagsterInstance,
    lease: str,
    workers: int,
    resources: dict[str, dg.ConfigurableResource],
    log_level: str,
    progress: StepCallback | None,
) -> tuple[list[Any], str | None]:
    """The refresh's Dagster runs, each tagged with this machine's name, and the published
    version reused when nothing new could be built (else None).

    A first serial refresh is one run in this process (run id `lease`). Otherwise the sources'
    steps run first (run id `lease`; with `workers` > 1 in parallel processes,
    `pipelines.parallel`) and then the rest in this process (a second run under the lease),
    which does not start when the first failed, nor, for a serial rerun, when the matrix would
    be built from what the newest published snapshot was built from
    (`pipelines.stages.unchanged`)."""
    count = _StepCounter(progress, len(job.graph.nodes)) if progress else None
    loggers = {"console": {"config": {"log_level": log_level}}}
    tags = {HOST_TAG: socket.gethostname()}  # whose runs these are, on a shared instance
    recorded = _reusable_record(instance) if workers == 1 else None
    if workers == 1 and recorded is None:
        serial = execute_with_progress(
            job,
            instance,
            count,
            run_id=lease,
            tags=tags,
            resources=resources,
            run_config={"loggers": loggers},
            raise_on_error=False,
        )
        return [serial], None
    # a subset of the job takes its resources as config
    run_config = {"loggers": loggers, "resources": resource_config(resources)}
    if workers == 1:
        ingest = execute_with_progress(
            job,
            instance,
            count,
            run_id=lease,
            tags=tags,
            asset_selection=source_asset_keys(),
            run_config=run_config,
            raise_on_error=False,
        )
    else:
        ingest = ingest_in_parallel(
            dg.reconstructable(parallel_refresh_job),
            instance,
            lease,
            workers,
            run_config,
            count,
            log_level,
            tags,
        )
    if not ingest.success:
        return [ingest], None
    reused = _unchanged_version(recorded, resources) if recorded is not None else None
    if reused is not None:
        if count is not None:
            count.settle("nothing new")
        return [ingest], reused
    rest = execute_with_progress(
        job,
        instance,
        count,
        tags={**tags, LEASE_TAG: lease},
        asset_selection=matrix_asset_keys(job),
        run_config=run_config,
        raise_on_error=False,
    )
    return [ingest, rest], None


def _reusable_record(instance: dg.DagsterInstance) -> dict[str, Any] | None:
    """What the newest publishing step recorded (its version and matrix inputs' key), when a
    rerun may reuse it: a local warehouse, and no shared store to push to (a push that failed
    is retried by building again); None otherwise, or before anything was published."""
    if warehouse_backend() != "duckdb" or os.environ.get(PUBLISH_URI_ENV, "").strip():
        return None
    event = instance.get_latest_materialization_event(dg.AssetKey("published_snapshot"))
    materialization = event.asset_materialization if event is not None else None
    if materialization is None:
        return None
    metadata = {k: v.value for k, v in materialization.metadata.items()}
    return metadata if metadata.get("matrix_inputs") else None


def _unchanged_version(
    recorded: dict[str, Any], resources: dict[str, dg.ConfigurableResource]
) -> str | None:
    """The version to reuse when the matrix would be built from what it was built from
    (`pipelines.stages.unchanged`), read after the sources' steps; else None."""
    home = resources["warehouse"].home_path
    with contextlib.closing(open_waiting(warehouse_path(home), read_only=True)) as con:
        key = matrix_inputs_key(con)
    return reusable_version(recorded, key, list_versions(snapshot_store_dir(home)))


def run_refresh(
    mode: str | None = None,
    home: Path | None = None,
    log_level: str = "CRITICAL",
    accept_drift: str | None = None,
    wait: float = 0.0,
    progress: StepCallback | None = None,
    workers: int | None = None,
    fail_on_stale: bool = False,
) -> RefreshOutcome:
    """Materialize the whole graph once; report what was published and what stopped it.

    One refresh per home at a time: raises `pipelines.locking.RefreshLocked` (naming the
    holder) when another one still runs after `wait` seconds, be it another `run_refresh`
    (the flock on `refresh.lock`) or a run started from the Dagster UI or the schedule (the
    run lease in `refresh.run`, claimed here for this run before it starts). `progress`
    (optional) is called as each step starts and finishes (`StepProgress`). `workers`
    (default BENCHPRESS_REFRESH_WORKERS, else 1): with N > 1 the steps run in up to N
    processes (`pipelines.parallel`), the sources side by side. A setting that cannot work
    (see `resources.check_settings`) raises ValueError before the run. A run in which no
    source could be fetched fails (`judge_sources`), and so, with `fail_on_stale`, does one
    that left any source stale."""
    check_settings(mode, accept_drift)  # ValueError naming the setting, before any run starts
    workers = refresh_workers(workers)
    home = (home or benchpress_home()).resolve()
    job = _refresh_job_def()
    started = time.monotonic()
    run_id = str(uuid.uuid4())
    with (
        disk_full_reported(home, quiet=log_level != "DEBUG"),  # one line, no traceback
        storage_loss_reported(home, quiet=log_level != "DEBUG"),  # team profile: PostgreSQL lost
        refresh_lock(home, wait=wait),
        dg.DagsterInstance.from_config(str(ensure_dagster_home(home))) as instance,
    ):
        recovered = recover_abandoned_runs(instance)  # a killed refresh's runs hold pool slots
        claim_run_lease(home, run_id, instance, wait=max(wait - (time.monotonic() - started), 0))
        resources = default_resources(home, mode, accept_drift, workers)
        try:
            results, reused = _execute(
                job, instance, run_id, workers, resources, log_level, progress
            )
        finally:
            release_run_lease(home, run_id)
    success = all(result.success for result in results)
    outcome = RefreshOutcome(success=success, recovered_runs=recovered)
    if reused is not None:  # nothing new: the sources' steps ran, the matrix's were not needed
        outcome.version, outcome.published, outcome.reused = reused, False, reused
    failures: dict[str, list[str]] = {}  # root cause -> the steps it failed, in run order
    for event in (event for result in results for event in result.all_events):
        if event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION:
            evaluation = event.event_specific_data
            if not evaluation.passed:
                text = (
                    f"{evaluation.asset_key.to_user_string()}.{evaluation.check_name}: "
                    f"{evaluation.description or 'failed'}"
                )
                if evaluation.severity == dg.AssetCheckSeverity.WARN:
                    outcome.warnings.append(text)
                else:
                    outcome.failed_checks.append(text)
        elif event.event_type == dg.DagsterEventType.STEP_FAILURE:
            error = event.event_specific_data.error
            if error is not None and "DagsterAssetCheckFailedError" in error.cls_name:
                continue  # already reported with its figures as a failed check
            failures.setdefault(root_cause(error), []).append(event.step_key)
            failure = event.event_specific_data.user_failure_data
            meta = {k: v.value for k, v in failure.metadata.items()} if failure else {}
            if event.step_key == "published_snapshot" and "version" in meta:
                outcome.version = str(meta["version"])  # published locally, then the push failed
                outcome.published = bool(meta["published"])
        elif event.event_type == dg.DagsterEventType.ASSET_MATERIALIZATION:
            materialization = event.event_specific_data.materialization
            key = materialization.asset_key.to_user_string()
            meta = {k: v.value for k, v in materialization.metadata.items()}
            if key.endswith("_payloads"):
                source = key.removesuffix("_payloads")
                state = str(meta.get("outcome"))
                if state == "failed":
                    state = f"{FETCH_FAILED}, keeping last good data: {meta.get('error')}"
                outcome.source_outcomes[source] = state
            elif key.endswith("_source_scores") and meta.get("outcome") == "failed":
                source = key.removesuffix("_source_scores")
                outcome.source_outcomes[source] = (
                    f"PARSE FAILED, keeping last good data: {meta.get('error')}"
                )
            if key == "published_snapshot":
                outcome.version = str(meta["version"])
                outcome.published = bool(meta["published"])
                outcome.reproduced = bool(meta.get("reproduced", False))
                outcome.reused = str(meta.get("reused_snapshot") or "") or None
    outcome.failed_steps = [f"{', '.join(steps)}: {cause}" for cause, steps in failures.items()]
    outcome.success = success and outcome.version is not None and not outcome.failed_checks
    return judge_sources(outcome, fail_on_stale)


_ERROR_CLASS = re.compile(r"^[\w.]*(?:Error|Exception|Failure): ")


def root_cause(error: Any) -> str:
    """What went wrong in a failed step, in the user's terms: Dagster wraps an exception raised
    by an asset in its own step-execution error, whose message names only the op; the
    innermost cause holds the asset's message (a missing mirror URL, diverged stores).
    `error`: Dagster's SerializableErrorInfo (message, cls_name, cause)."""
    if error is None:
        return "failed (no error recorded)"
    while error.cause is not None and error.cls_name.startswith("Dagster"):
        error = error.cause  # Dagster's own wrappers; a `dg.Failure` already says it all
    return _ERROR_CLASS.sub("", error.message.strip()) or error.cls_name


# ------------------------------------------------------------------------------- disk full
FULL_BELOW = 1 << 20  # bytes free under which a storage I/O error is taken for a full disk
_FULL_TEXTS = ("no space left on device", "database or disk is full", "disk quota exceeded")


class DiskFull(OSError):
    """The refresh stopped on a full disk; the message says where, and what state the home is
    in (was a snapshot published, does it verify). An OSError, so `benchpress` prints it as
    its one-line error."""


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and every exception behind it (`__cause__`, `__context__` unless it was
    suppressed with `from None`, SQLAlchemy's `orig`)."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        error = todo.pop(0)
        if id(error) in seen:
            continue
        seen.add(id(error))
        yield error
        context = None if error.__suppress_context__ else error.__context__  # `from None`
        for nxt in (error.__cause__, context, getattr(error, "orig", None)):
            if isinstance(nxt, BaseException):
                todo.append(nxt)


def free_bytes(path: Path) -> int:
    """Bytes an unprivileged writer may still use on the filesystem holding `path`."""
    for folder in (path, *path.parents):
        if folder.exists():
            return shutil.disk_usage(folder).free
    return 0


def disk_full_reason(exc: BaseException, where: Path) -> str | None:
    """`No space left on device` (or the quota's reason) when `exc` or an exception behind it
    says a disk is full: ENOSPC / EDQUOT, SQLite's "database or disk is full", or SQLite's
    "disk I/O error" while the filesystem of `where` has less than FULL_BELOW left (what
    SQLite reports when its journal cannot grow). None for anything else."""
    errors = list(_chain(exc))
    for error in errors:
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            return os.strerror(error.errno)
        if any(text in str(error).lower() for text in _FULL_TEXTS):
            return os.strerror(errno.ENOSPC)
    if any("disk i/o error" in str(e).lower() for e in errors) and free_bytes(where) < FULL_BELOW:
        return os.strerror(errno.ENOSPC)
    return None


def _where_it_filled(exc: BaseException, home: Path) -> tuple[str, Path]:
    """What was being written (in words) and the path whose filesystem filled up."""
    for error in _chain(exc):
        if isinstance(error, OSError) and error.filename:
            return f"while writing {error.filename}", Path(str(error.filename))
    if any(type(e).__module__.startswith(("sqlite3", "sqlalchemy")) for e in _chain(exc)):
        return f"while Dagster recorded the run in {dagster_home(home)}", dagster_home(home)
    return f"in {home}", home


def published_state(store: Path, before: set[str]) -> str:
    """What the store holds now compared with `before`: the version this run published and
    whether it verifies, or that none was published (and which one stays latest)."""
    versions = list_versions(store) if store.is_dir() else []
    new = sorted(set(versions) - before, key=version_key)
    if not new:
        latest = f"; {versions[-1]} stays the latest" if versions else " yet"
        return f"no snapshot was published{latest}"
    version = new[-1]
    try:
        verify(store / version, version)
    except SnapshotError as exc:
        return (
            f"snapshot {version} was published but does not verify ({exc}); check it with "
            f"`benchpress snapshots verify {version}`"
        )
    return f"snapshot {version} was published and verifies"


# what Dagster writes to stderr itself when its event log refuses a record (the error, its SQL
# and parameters: several lines per record)
STORAGE_NOISE = "Exception while writing logger call to event log"


class _HeldStorageNoise(StreamWrapper):
    """stderr during a quiet run: Dagster's own `STORAGE_NOISE` writes are held back, to be
    dropped when the one-line `DiskFull` says it all, or written after all otherwise."""

    def __init__(self, raw: Any):
        super().__init__(raw)
        self.held: list[str] = []

    def write(self, text: str) -> int:
        if text.startswith(STORAGE_NOISE):
            self.held.append(text)
            return len(text)
        return self.raw.write(text)


@contextlib.contextmanager
def disk_full_reported(home: Path, quiet: bool = True) -> Iterator[None]:
    """Turn a full disk inside the block into one `DiskFull` line instead of the storage
    layer's traceback (Dagster's SQLite storage prints ~80 lines): where it filled, how much
    is free, whether this run published a snapshot and whether it verifies, what to do.
    `quiet` (not with --verbose): Dagster's own messages about its failing writes are
    dropped too when the disk was full."""
    store = snapshot_store_dir(home)
    before = set(list_versions(store)) if store.is_dir() else set()
    stderr = sys.stderr
    held = _HeldStorageNoise(stderr) if quiet else None
    if held is not None:
        sys.stderr = held
    full = False
    try:
        yield
    except (DiskFull, InstanceLost):  # reported in one line already (lost Postgres too)
        full = True
        raise
    except Exception as exc:
        doing, path = _where_it_filled(exc, home)
        reason = disk_full_reason(exc, path)
        if reason is None:
            raise
        full = True
        raise DiskFull(
            f"disk full ({reason}, {free_bytes(path):,} bytes free) {doing}; "
            f"{published_state(store, before)}; free space and run `benchpress refresh` again"
        ) from exc
    finally:
        if held is not None:
            sys.stderr = stderr
            if not full:  # not the disk: whatever Dagster said is worth reading
                stderr.writelines(held.held)
