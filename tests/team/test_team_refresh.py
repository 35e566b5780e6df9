"""`benchpress refresh` and `make dagster` on the team profile (BENCHPRESS_INSTANCE=team)
against a real PostgreSQL server (tests.support.postgres_server), no mocks: the run and its
event log are in PostgreSQL with the `duckdb` pool and run monitoring in force; a server that is
down or refuses the credentials stops the command before it writes anything; a server lost in
the middle of a run fails that run in one line, and once it is back the next refresh closes the
run and completes, with the warehouse and snapshots as an uninterrupted refresh leaves them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import dagster as dg
import pytest

from pipelines.definitions import defs
from pipelines.team.postgres_local import LocalPostgres, free_port
from tests.faults.refreshing import duckdb_intact, end_state, refresh_env
from tests.pipeline.test_dagster_ui import graphql
from tests.support.postgres_server import query
from tests.team.lake import finish, refresh

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 900  # a whole refresh on a loaded 2-core machine
SERVICE = "the Dagster instance's PostgreSQL"
WANTED_DAEMONS = {"SCHEDULER", "QUEUED_RUN_COORDINATOR", "MONITORING"}


def runs(server: LocalPostgres) -> list[tuple[str, str]]:
    return query(server, "SELECT run_id, status FROM runs ORDER BY create_timestamp")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status == 200
    except OSError:
        return False


def payload_steps_done(server: LocalPostgres) -> int:
    """Source-archiving steps finished so far (0 before Dagster has made its tables)."""
    import psycopg2.errors

    try:
        return query(
            server,
            "SELECT count(*) FROM event_logs WHERE dagster_event_type = 'STEP_SUCCESS'"
            " AND step_key LIKE '%_payloads'",
        )[0][0]
    except psycopg2.errors.UndefinedTable:
        return 0


@pytest.fixture(scope="module")
def team_refresh(postgres: LocalPostgres, tmp_path_factory: pytest.TempPathFactory):
    """One uninterrupted team refresh in a new home: (home, its CompletedProcess)."""
    home = tmp_path_factory.mktemp("team") / "home"
    return home, finish(refresh(home, postgres.env()))


def test_the_run_and_its_event_log_are_stored_in_postgres(team_refresh, postgres) -> None:
    home, done = team_refresh
    assert done.returncode == 0, done.stderr[-3000:]
    assert "snapshot published " in done.stdout
    ((run_id, status),) = runs(postgres)
    assert status == "SUCCESS"
    events = dict(
        query(
            postgres,
            "SELECT dagster_event_type, count(*) FROM event_logs WHERE run_id = %s GROUP BY 1",
            (run_id,),
        )
    )
    steps = len(defs.resolve_job_def("refresh").graph.nodes)
    assert events["PIPELINE_START"] == events["PIPELINE_SUCCESS"] == 1
    assert events["STEP_START"] == events["STEP_SUCCESS"] == steps
    assert "STEP_FAILURE" not in events
    # nothing of Dagster's storage stayed in the home: no SQLite run or event databases
    assert not list((home / "dagster").rglob("*.db"))
    deploy_yaml = REPO / "deploy" / "dagster-team.yaml"
    assert (home / "dagster" / "dagster.yaml").read_bytes() == deploy_yaml.read_bytes()


def test_the_duckdb_pool_and_run_monitoring_are_in_force(
    team_refresh, postgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, done = team_refresh
    assert done.returncode == 0, done.stderr[-3000:]
    pools = query(
        postgres, 'SELECT concurrency_key, "limit", using_default_limit FROM concurrency_limits'
    )
    assert pools == [("duckdb", 1, True)]  # created by the run, with dagster.yaml's default limit
    assert query(postgres, "SELECT count(*) FROM concurrency_slots WHERE run_id IS NOT NULL") == [
        (0,)
    ]  # the run gave its slot back
    for name, value in postgres.env().items():
        monkeypatch.setenv(name, value)
    with dg.DagsterInstance.from_config(str(home / "dagster")) as instance:
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.schedule_storage).__name__ == "PostgresScheduleStorage"
        assert instance.run_monitoring_enabled
        assert instance.run_monitoring_settings["free_slots_after_run_end_seconds"] == 60
        assert instance.run_monitoring_settings["max_resume_run_attempts"] == 0
        assert instance.event_log_storage.get_concurrency_info("duckdb").slot_count == 1


def test_the_password_is_never_printed_or_written_in_the_home(team_refresh, postgres) -> None:
    home, done = team_refresh
    secret = postgres.password.encode()
    assert secret not in (done.stdout + done.stderr).encode()
    written = [path for path in home.rglob("*") if path.is_file()]
    assert len(written) > 10
    assert [path for path in written if secret in path.read_bytes()] == []


def test_postgres_down_at_start_exits_2_and_writes_nothing(tmp_path, postgres) -> None:
    home = tmp_path / "home"
    port = free_port()  # nothing listens there
    env = {**postgres.env(), "BENCHPRESS_PG_PORT": str(port)}
    done = finish(refresh(home, env))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"benchpress: error: cannot reach {SERVICE} at 127.0.0.1:{port} "
        "(BENCHPRESS_PG_HOST, BENCHPRESS_PG_PORT): Connection refused"
    ]
    assert not home.exists()


def test_wrong_credentials_exit_2_without_the_password(tmp_path, postgres) -> None:
    home = tmp_path / "home"
    wrong = "not-the-password-0123"
    done = finish(refresh(home, {**postgres.env(), "BENCHPRESS_PG_PASSWORD": wrong}))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"benchpress: error: {SERVICE} at 127.0.0.1:{postgres.port} refused user 'benchpress': "
        'password authentication failed for user "benchpress" '
        "(check BENCHPRESS_PG_USER and BENCHPRESS_PG_PASSWORD)"
    ]
    assert wrong not in done.stdout + done.stderr
    assert not home.exists()


def test_make_dagster_refuses_to_start_without_postgres(tmp_path, postgres) -> None:
    home = tmp_path / "home"
    port = free_port()
    env = {**refresh_env(home, postgres.env()), "BENCHPRESS_PG_PORT": str(port)}
    done = subprocess.run(
        [sys.executable, "-m", "pipelines.ui", "--port", str(free_port())],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"make dagster: error: cannot reach {SERVICE} at 127.0.0.1:{port} "
        "(BENCHPRESS_PG_HOST, BENCHPRESS_PG_PORT): Connection refused"
    ]
    assert not home.exists()


def test_make_dagster_runs_the_daemon_on_postgres(tmp_path, own_postgres) -> None:
    """The UI and the daemon share the team instance: the daemon's heartbeats (schedules, run
    queue, run monitoring) land in PostgreSQL and the UI reports its PostgreSQL storage."""
    home = tmp_path / "home"
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "pipelines.ui", "--port", str(port)],
        env=refresh_env(home, own_postgres.env()),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        daemons: set[str] = set()
        serving = False
        while time.monotonic() < deadline and not (serving and daemons >= WANTED_DAEMONS):
            assert process.poll() is None, process.stdout.read()[-3000:]
            time.sleep(1)
            serving = serving or answers(f"http://127.0.0.1:{port}/server_info")
            try:
                rows = query(own_postgres, "SELECT daemon_type FROM daemon_heartbeats")
            except Exception:  # tables not created yet
                continue
            daemons = {row[0] for row in rows}
        assert daemons >= WANTED_DAEMONS, daemons
        assert serving, "the Dagster UI did not answer within 180 s"
        info = graphql(f"http://127.0.0.1:{port}", "{ instance { info } }")["instance"]["info"]
        assert "PostgresRunStorage" in info and "PostgresEventLogStorage" in info
        assert own_postgres.password not in info  # the UI shows the settings, not the secret
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        output = process.communicate(timeout=60)[0]
    assert f"Dagster instance: {home / 'dagster'}" in output
    assert "runs stored in PostgreSQL" in output
    assert own_postgres.password not in output


def test_postgres_lost_mid_run_fails_the_run_and_the_next_one_completes(
    tmp_path, own_postgres, team_refresh
) -> None:
    reference, clean = team_refresh
    assert clean.returncode == 0, clean.stderr[-3000:]
    home = tmp_path / "home"
    env = own_postgres.env()
    running = refresh(home, env)
    # stop the server once two sources are archived in the warehouse: the run is in its third
    # step, with work of this run already written
    deadline = time.monotonic() + TIMEOUT
    done_steps = 0
    while done_steps < 2:
        assert running.poll() is None, running.communicate()
        assert time.monotonic() < deadline, "the refresh did not get going"
        time.sleep(0.2)
        done_steps = payload_steps_done(own_postgres)
    (failed_run,) = [run_id for run_id, _ in runs(own_postgres)]
    own_postgres.stop("immediate")  # as when its machine goes away
    lost = finish(running)
    assert lost.returncode == 1
    assert lost.stderr.splitlines()[-1] == (
        f"benchpress: error: lost {SERVICE} at 127.0.0.1:{own_postgres.port} during the run "
        "(BENCHPRESS_PG_HOST, BENCHPRESS_PG_PORT): Connection refused; the run did not finish. "
        "The warehouse keeps what finished steps wrote; once PostgreSQL is back, "
        "`benchpress refresh` closes the unfinished run and completes"
    )
    assert "Traceback" not in lost.stderr
    assert "Retrying failed database connection" not in lost.stderr
    assert duckdb_intact(home)["raw_payloads"] > 0  # the warehouse opens, with this run's work

    own_postgres.start()  # same data, same port
    again = finish(refresh(home, env))
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"closed run {failed_run} of a refresh that was killed" in again.stdout
    statuses = dict(runs(own_postgres))
    assert statuses.pop(failed_run) == "FAILURE"
    assert list(statuses.values()) == ["SUCCESS"]
    # the same warehouse and snapshots as the uninterrupted refresh (every snapshot verifies)
    ours, theirs = end_state(home), end_state(reference)
    assert ours.tables == theirs.tables
    assert ours.versions == theirs.versions and ours.content_hashes == theirs.content_hashes
    assert ours.store_leftovers == ()
