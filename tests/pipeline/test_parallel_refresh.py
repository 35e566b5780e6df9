"""`benchpress refresh --workers N`: the sources fetch and parse in parallel processes, each
source fetching several URLs at once, while warehouse writes stay one at a time; the result
is the same snapshot a serial refresh builds, byte for byte.

One parallel refresh of the recorded payloads (replay transport, 2 workers) serves the tests
of this module; the fetch tests use the loopback mirror."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines.fetch.plan import fetch_source
from pipelines.fetch.transports import Fetcher, FetchError
from pipelines.locking import HOST_TAG, recover_abandoned_runs
from pipelines.parallel import LEASE_TAG
from pipelines.run import REPO_DAGSTER_YAML, RefreshOutcome, StepProgress, run_refresh
from pipelines.settings import refresh_workers
from pipelines.sources import SOURCES
from predictor.snapshots.reader import list_versions, read_manifest, verify
from predictor.util.paths import bundled_snapshot_dir
from tests.faults.refreshing import run_benchpress
from tests.support.mirror_server import MirrorServer, serve_status
from tests.support.shared_home import is_machine_setting
from tests.support.snapshots import assert_same_content

pytestmark = pytest.mark.slow

SOURCE_STEPS = 2 * len(SOURCES)  # payloads and source scores of each source
ALL_STEPS = 35  # those, 4 matrix assets and 9 separate checks (one_metric_per_column the 9th)
RECORDED_PAYLOADS = 356  # llm_stats' listing and 336 files, and 19 files of the other sources


@dataclass
class ParallelRefresh:
    home: Path
    outcome: RefreshOutcome
    progress: list[StepProgress]
    instance_dir: Path


@pytest.fixture(scope="module")
def parallel(tmp_path_factory: pytest.TempPathFactory) -> ParallelRefresh:
    home = tmp_path_factory.mktemp("parallel") / "home"
    seen: list[StepProgress] = []
    patch = pytest.MonkeyPatch()
    patch.setenv("BENCHPRESS_HOME", str(home))
    try:
        outcome = run_refresh(mode="replay", home=home, workers=2, progress=seen.append)
    finally:
        patch.undo()
    return ParallelRefresh(home, outcome, seen, home / "dagster")


def _runs(refresh: ParallelRefresh) -> list[dg.DagsterRun]:
    with dg.DagsterInstance.from_config(str(refresh.instance_dir)) as instance:
        return list(reversed(instance.get_runs()))  # oldest first


def _step_spans(refresh: ParallelRefresh, run_id: str) -> dict[str, tuple[float, float, str]]:
    """step -> (started, ended, pid) from the run's event log."""
    spans: dict[str, list] = {}
    with dg.DagsterInstance.from_config(str(refresh.instance_dir)) as instance:
        for entry in instance.all_logs(run_id):
            event = entry.dagster_event
            if event is None or event.step_key is None:
                continue
            span = spans.setdefault(event.step_key, [None, None, None])
            if event.event_type == dg.DagsterEventType.STEP_START:
                span[0] = entry.timestamp
                span[2] = event.pid
            elif event.event_type == dg.DagsterEventType.STEP_SUCCESS:
                span[1] = entry.timestamp
    return {step: tuple(span) for step, span in spans.items()}  # type: ignore[misc]


def test_a_parallel_refresh_publishes_the_snapshot_a_serial_one_builds(
    parallel: ParallelRefresh,
) -> None:
    assert parallel.outcome.success and parallel.outcome.published, parallel.outcome
    assert parallel.outcome.source_outcomes == {source: "new" for source in SOURCES}
    store = parallel.home / "snapshots"
    (version,) = list_versions(store)
    published = verify(store / version)
    (shipped_version,) = list_versions(bundled_snapshot_dir())
    shipped_dir = bundled_snapshot_dir() / shipped_version
    # the bundled snapshot is what `make bundle` (a serial refresh) built from the same bytes
    assert_same_content(published, read_manifest(shipped_dir), store / version, shipped_dir)


def test_the_sources_ran_side_by_side_in_processes_of_their_own(
    parallel: ParallelRefresh,
) -> None:
    ingest, matrix = _runs(parallel)
    assert ingest.tags[LEASE_TAG] == matrix.tags[LEASE_TAG]  # one refresh, one lease
    sources = _step_spans(parallel, ingest.run_id)
    assert len(sources) == SOURCE_STEPS
    assert all(step.endswith(("_payloads", "_source_scores")) for step in sources)
    assert len({pid for _, _, pid in sources.values()}) == SOURCE_STEPS  # a process per step
    events = sorted(
        [(start, 1) for start, _, _ in sources.values()]
        + [(end, -1) for _, end, _ in sources.values()]
    )
    running, most = 0, 0
    for _, change in events:
        running += change
        most = max(most, running)
    assert most == 2  # two at a time: --workers 2, never more
    rest = _step_spans(parallel, matrix.run_id)
    assert len(rest) == ALL_STEPS - SOURCE_STEPS
    assert {"normalized_scores", "factorization", "published_snapshot"} <= set(rest)
    assert len({pid for _, _, pid in rest.values()}) == 1  # in the refresh's own process


def test_writes_stayed_whole_one_fetch_and_one_parse_per_source(
    parallel: ParallelRefresh,
) -> None:
    with duckdb.connect(str(parallel.home / "warehouse.duckdb"), read_only=True) as con:
        fetches = con.execute(
            "SELECT source, outcome, len(payload_ids) FROM fetch_log ORDER BY source"
        ).fetchall()
        parses = con.execute("SELECT source, status FROM parses ORDER BY source").fetchall()
        payloads = con.execute("SELECT count(*), count(DISTINCT payload_id) FROM raw_payloads")
        (count, distinct) = payloads.fetchone()
        orphans = con.execute(
            "SELECT count(*) FROM source_scores WHERE parse_id NOT IN (SELECT parse_id FROM parses)"
        ).fetchone()[0]
    assert [(source, outcome) for source, outcome, _ in fetches] == [
        (source, "new") for source in sorted(SOURCES)
    ]
    assert sum(n for _, _, n in fetches) == count == distinct == RECORDED_PAYLOADS
    assert parses == [(source, "ok") for source in sorted(SOURCES)]
    assert orphans == 0


def test_progress_counts_every_step_of_both_runs(parallel: ParallelRefresh) -> None:
    finished = [step for step in parallel.progress if step.finished]
    assert len({step.step for step in finished}) == ALL_STEPS
    assert finished[-1].done == finished[-1].total == ALL_STEPS
    assert finished[-1].step == "published_snapshot"


def test_a_source_fetches_its_files_several_at_a_time_in_url_order(
    mirror_server: MirrorServer,
) -> None:
    source = SOURCES["llm_stats"]
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url)
    mirror_server.delays["/raw.githubusercontent.com/"] = 0.005  # each file answered late
    serial = fetch_source(fetcher, source)
    assert mirror_server.max_in_flight == 1
    together = fetch_source(fetcher, source, concurrency=4)
    assert mirror_server.max_in_flight == 4
    assert [p.url for p in together] == [p.url for p in serial]
    assert [p.sha256 for p in together] == [p.sha256 for p in serial]
    assert len(together) == 337


def test_the_first_failing_url_in_order_is_the_one_reported(
    mirror_server: MirrorServer,
) -> None:
    source = SOURCES["llm_stats"]
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url)
    urls = [p.url for p in fetch_source(fetcher, source)]  # listing first, then its files
    early, late = urls[8], urls[40]
    for url in (early, late):
        mirror_server.faults[mirror_path(url)] = serve_status(404)
    mirror_server.delays[mirror_path(early)] = 0.3  # the later URL fails first in time
    with pytest.raises(FetchError) as failed:
        fetch_source(fetcher, source, concurrency=8)
    assert failed.value.url == early
    assert str(failed.value).endswith(": HTTP 404")


def mirror_path(url: str) -> str:
    return "/" + url.split("://", 1)[1]


def test_workers_must_be_a_whole_number_in_range(monkeypatch: pytest.MonkeyPatch) -> None:
    assert refresh_workers() == 1
    assert refresh_workers(4) == 4
    monkeypatch.setenv("BENCHPRESS_REFRESH_WORKERS", "3")
    assert refresh_workers() == 3
    assert refresh_workers("2") == 2  # the flag wins
    with pytest.raises(ValueError, match=r"^--workers='two' is not a whole number of workers$"):
        refresh_workers("two")
    with pytest.raises(ValueError, match=r"^--workers='0' must be between 1 and 32$"):
        refresh_workers(0)
    monkeypatch.setenv("BENCHPRESS_REFRESH_WORKERS", "lots")
    with pytest.raises(ValueError, match="^BENCHPRESS_REFRESH_WORKERS='lots' is not a whole"):
        refresh_workers()


def test_the_command_refuses_a_bad_worker_count_before_anything_runs(tmp_path: Path) -> None:
    done = run_benchpress(tmp_path / "home", "refresh", "--workers", "0")
    assert done.returncode == 2
    assert done.stderr == "benchpress: error: --workers='0' must be between 1 and 32\n"
    assert not (tmp_path / "home" / "warehouse.duckdb").exists()


DIES_MID_RUN = textwrap.dedent(
    """
    import os, signal, sys
    import dagster as dg

    @dg.asset
    def dies() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    job = dg.Definitions(
        assets=[dies], jobs=[dg.define_asset_job("dies", selection="*")]
    ).resolve_job_def("dies")
    with dg.DagsterInstance.from_config(sys.argv[1]) as instance:
        job.execute_in_process(instance=instance, tags={"benchpress/host": sys.argv[2]})
    """
)


def test_runs_of_another_machine_are_never_taken_for_abandoned(tmp_path: Path) -> None:
    dagster_home = tmp_path / "dagster"
    dagster_home.mkdir()
    shutil.copyfile(REPO_DAGSTER_YAML, dagster_home / "dagster.yaml")
    for host in ("build-2.internal", socket.gethostname()):  # its process id means nothing here
        done = subprocess.run(
            [sys.executable, "-c", DIES_MID_RUN, str(dagster_home), host], timeout=120
        )
        assert done.returncode == -signal.SIGKILL
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        elsewhere, here = sorted(
            instance.get_runs(), key=lambda r: r.tags[HOST_TAG] == socket.gethostname()
        )
        assert elsewhere.tags[HOST_TAG] == "build-2.internal"
        assert recover_abandoned_runs(instance) == [here.run_id]
        assert instance.get_run_by_id(here.run_id).status == dg.DagsterRunStatus.FAILURE
        assert instance.get_run_by_id(elsewhere.run_id).status == dg.DagsterRunStatus.STARTED


def test_the_ui_job_runs_its_steps_in_processes_when_workers_are_set() -> None:
    show = (
        "from pipelines.definitions import defs; "
        "e = defs.resolve_job_def('refresh').executor_def; "
        "c = e.config_schema; "
        "print(e.name, c.resolve_config({}).value if e.name != 'in_process' else '')"
    )
    for workers, expected in (("", "in_process"), ("3", "multiprocess")):
        done = subprocess.run(
            [sys.executable, "-c", show],
            env={**os.environ, "BENCHPRESS_REFRESH_WORKERS": workers},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split()[0] == expected
        if workers:
            assert "'max_concurrent': 3" in done.stdout and "forkserver" in done.stdout


@pytest.mark.parametrize(
    ("setting", "error"),
    [
        (
            {"BENCHPRESS_REFRESH_WORKERS": "many"},
            "BENCHPRESS_REFRESH_WORKERS='many' is not a whole number of workers",
        ),
        (
            {"BENCHPRESS_WAREHOUSE": "ducklake"},
            "BENCHPRESS_WAREHOUSE=ducklake keeps the warehouse in a DuckLake lakehouse "
            "configured from the environment; not set: BENCHPRESS_DUCKLAKE_CATALOG",
        ),
    ],
)
def test_make_dagster_refuses_settings_that_cannot_work(
    tmp_path: Path, setting: dict[str, str], error: str
) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not is_machine_setting(k)}
    done = subprocess.run(
        [sys.executable, "-m", "pipelines.ui", "--port", "3999"],
        env={**env, "BENCHPRESS_HOME": str(home), **setting},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"make dagster: error: {error}")
    assert done.stdout == "" and not home.exists()  # nothing started, nothing written
