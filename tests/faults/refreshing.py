"""`benchpress refresh` as a subprocess for the crash and concurrency tests: start it in a given
BENCHPRESS_HOME, follow Dagster's step log on its stderr, SIGKILL it at a chosen step event, and
read back the warehouse and snapshot store it leaves behind.

Kills are triggered from the log (`--verbose` prints every STEP_START, ASSET_MATERIALIZATION and
STEP_SUCCESS as it happens), so no hook in the pipeline is needed; when the assets call
`pipelines.crash_hook.crash_point`, `BENCHPRESS_CRASH_AFTER` kills at exact stage boundaries.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from predictor.snapshots.reader import list_versions, load_snapshot, read_manifest, verify
from predictor.util.paths import bundled_snapshot_dir, snapshot_store_dir, warehouse_path
from tests.support.shared_home import is_machine_setting

EVENT_LINE = re.compile(r" - \d+ - (?P<step>[A-Za-z0-9_]+) - (?P<event>[A-Z_]+) - ")
BLOCKED = "blocked by limit for pool"
EXIT_LOCKED = 3
# steps waiting for a pool slot this long, none started: the slot leaked (a leaked slot holds
# them forever; the step that has the slot may take a minute to start on a loaded machine)
STUCK_SECONDS = 120.0


class PoolSlotLeak(AssertionError):
    """The refresh waits forever for a `duckdb` pool slot held by a killed run."""


def benchpress_command() -> list[str]:
    script = Path(sys.executable).parent / "benchpress"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "predictor.cli"]


def run_benchpress(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed `benchpress` command on `home`, as a separate process (text output)."""
    return subprocess.run(
        [*benchpress_command(), *args],
        env=refresh_env(home),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def refresh_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not is_machine_setting(k) and k not in ("DAGSTER_HOME",)
    }
    env.update(
        {
            "BENCHPRESS_HOME": str(home),
            "BENCHPRESS_MIN_CELLS_PER_MODEL": os.environ.get(
                "BENCHPRESS_MIN_CELLS_PER_MODEL", "20"
            ),
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class Trigger:
    """Kill when `step` logs `event` (e.g. STEP_START, STEP_SUCCESS), after `delay` seconds."""

    step: str
    event: str
    delay: float = 0.0

    def __str__(self) -> str:
        return f"{self.event} {self.step}" + (f" +{self.delay:g}s" if self.delay else "")


@dataclass
class Refresh:
    """One `benchpress refresh` subprocess and what it printed."""

    proc: subprocess.Popen
    started: float
    stderr_lines: list[str] = field(default_factory=list)
    stdout: str = ""
    killed_at: str | None = None
    seconds: float = 0.0
    _reader: threading.Thread | None = None
    _trigger: Trigger | None = None
    _fired: threading.Event = field(default_factory=threading.Event)
    _first_blocked: float | None = None
    _step_starts: int = 0

    @classmethod
    def start(
        cls,
        home: Path,
        args: list[str] | None = None,
        kill_on: Trigger | None = None,
        env: dict[str, str] | None = None,
    ) -> Refresh:
        command = [*benchpress_command(), "refresh", "--mode", "replay", "--verbose", *(args or [])]
        proc = subprocess.Popen(
            command,
            cwd=home.parent,
            env=refresh_env(home, env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,  # its own process group: children are cleaned up with it
        )
        refresh = cls(proc, time.monotonic(), _trigger=kill_on)
        refresh._reader = threading.Thread(target=refresh._follow, daemon=True)
        refresh._reader.start()
        return refresh

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _follow(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line.rstrip("\n"))
            trigger = self._trigger
            match = EVENT_LINE.search(line)
            if BLOCKED in line and self._first_blocked is None:
                self._first_blocked = time.monotonic()
            if match and match["event"] == "STEP_START":
                self._step_starts += 1
            if (
                trigger
                and match
                and not self._fired.is_set()
                and (match["step"], match["event"]) == (trigger.step, trigger.event)
            ):
                self._fired.set()
                if trigger.delay:
                    time.sleep(trigger.delay)
                self.kill(str(trigger))

    def kill(self, why: str) -> None:
        """SIGKILL the refresh (the crash), then whatever it started in its process group."""
        if self.proc.poll() is None:
            self.killed_at = why
            os.kill(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def stuck(self) -> bool:
        """Steps wait for a pool slot and none has started for STUCK_SECONDS."""
        blocked = self._first_blocked
        return (
            blocked is not None
            and self._step_starts == 0
            and time.monotonic() - blocked > STUCK_SECONDS
        )

    def wait(self, timeout: float) -> int:
        """The exit code; raises PoolSlotLeak when the run waits forever for a pool slot."""
        deadline = time.monotonic() + timeout
        try:
            while self.proc.poll() is None:
                if self.stuck():
                    self.kill("stuck waiting for the duckdb pool slot")
                    raise PoolSlotLeak(
                        "the refresh waits forever for the 'duckdb' pool slot of a killed run "
                        f"(no step started in {STUCK_SECONDS:g}s):\n{self.tail(5)}"
                    )
                if time.monotonic() > deadline:
                    self.kill(f"still running after {timeout:g}s")
                    raise AssertionError(
                        f"refresh hung (killed after {timeout:g}s):\n{self.tail()}"
                    )
                time.sleep(0.2)
        finally:
            self.stdout = self.proc.stdout.read() if self.proc.stdout else ""
            self.proc.wait()
            self.seconds = time.monotonic() - self.started
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # stray children of a killed run
            if self._reader is not None:
                self._reader.join(timeout=10)
        return self.proc.returncode

    @property
    def stderr(self) -> str:
        return "\n".join(self.stderr_lines)

    def tail(self, lines: int = 15) -> str:
        text = [line for line in self.stderr_lines if "DEBUG" not in line] or self.stderr_lines
        return "\n".join([*text[-lines:], self.stdout[-2000:]])

    def events(self) -> list[tuple[str, str]]:
        return [
            (m["step"], m["event"]) for line in self.stderr_lines if (m := EVENT_LINE.search(line))
        ]


# ------------------------------------------------------------------------------- end states
TABLE_QUERIES = {
    # (source, url, sha256) of every archived payload: nothing lost, nothing archived twice
    "raw_payloads": "SELECT source, url, sha256, fetched_at, size_bytes FROM raw_payloads",
    # successful parses: the same payload sets through the same parser, each parsed once
    "parses": "SELECT source, payload_set_sha, parser_version, fetched_at, n_rows FROM parses"
    " WHERE status = 'ok'",
    "source_scores": "SELECT s.* EXCLUDE (parse_id), p.payload_set_sha FROM source_scores s"
    " JOIN parses p USING (parse_id)",
    "normalized_scores": "SELECT * EXCLUDE (parse_id) FROM normalized_scores",
    "matrix_cells": "SELECT * FROM matrix_cells",
    "matrix_conflicts": "SELECT * FROM matrix_conflicts",
    "staged_snapshots": "SELECT content_hash FROM staged_snapshots",
}


def _digest(rows: list[tuple]) -> str:
    text = "\n".join(sorted(repr(row) for row in rows))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class EndState:
    tables: dict[str, tuple[int, str]]  # table -> (rows, sha256 of the sorted rows)
    versions: tuple[str, ...]
    content_hashes: tuple[str, ...]  # per version
    store_leftovers: tuple[str, ...]  # scratch entries a killed publish left in the store


def end_state(home: Path) -> EndState:
    """What a home holds after a refresh: table contents and the published snapshots."""
    con = duckdb.connect(str(warehouse_path(home)), read_only=True)
    try:
        tables = {}
        for table, query in TABLE_QUERIES.items():
            rows = con.execute(query).fetchall()
            tables[table] = (len(rows), _digest(rows))
    finally:
        con.close()
    store = snapshot_store_dir(home)
    versions = tuple(list_versions(store))
    for version in versions:
        verify(store / version)  # every published file still matches its manifest hash
    return EndState(
        tables,
        versions,
        tuple(read_manifest(store / v)["content_hash"] for v in versions),
        tuple(
            sorted(
                p.name for p in store.iterdir() if p.name not in versions and p.name != "index.json"
            )
        )
        if store.is_dir()
        else (),
    )


def duckdb_intact(home: Path) -> dict[str, int]:
    """Open the warehouse (read-only) and count every table: a corrupt file fails here."""
    con = duckdb.connect(str(warehouse_path(home)), read_only=True)
    try:
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        return {n: con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}
    finally:
        con.close()


# ------------------------------------------------------------------------------- the readers
def seed_previous_version(home: Path, scratch: Path) -> str:
    """Publish the bundled snapshot's tables into `home`'s store as yesterday's version, so a
    refresh publishes a new version on top of one that readers are using."""
    from warehouse.snapshots import SnapshotTables, publish, stage

    bundled = bundled_snapshot_dir()
    snap = load_snapshot(bundled / list_versions(bundled)[-1])
    tables = SnapshotTables(
        snap.cells, snap.models, snap.benchmarks, snap.aliases, snap.conflicts, snap.fit
    )
    facts = {k: v for k, v in snap.manifest.items() if k in ("counts", "fit_params", "quality")}
    _, staged = stage(tables, scratch, facts)
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    return publish(staged, snapshot_store_dir(home), today=yesterday).version


class App:
    """`benchpress app` on a free loopback port, as its own process (a real reader)."""

    def __init__(self, home: Path, store: Path):
        command = [*benchpress_command(), "app", "--host", "127.0.0.1", "--port", "0"]
        self.proc = subprocess.Popen(
            [*command, "--store", str(store), "--quiet"],
            env=refresh_env(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        self.url = ""
        self.output: list[str] = []
        for line in self.proc.stdout:  # until it says where it listens (or exits)
            self.output.append(line)
            if "serving on " in line:
                self.url = line.split("serving on ", 1)[1].split()[0].rstrip("/")
                break
        if not self.url:
            self.stop()
            raise AssertionError(f"benchpress app did not start: {''.join(self.output)}")
        # keep draining its output so a chatty app never blocks on a full pipe
        threading.Thread(target=self.output.extend, args=(self.proc.stdout,), daemon=True).start()

    def get(self, path: str) -> tuple[int, Any, float]:
        started = time.monotonic()
        try:
            with urllib.request.urlopen(self.url + path, timeout=60) as answer:
                status, body = answer.status, answer.read()
        except urllib.error.HTTPError as exc:
            status, body = exc.code, exc.read()
        return status, json.loads(body or b"null"), time.monotonic() - started

    def warehouse_use(self) -> list[str]:
        """Open files of the app that belong to a DuckDB warehouse, and a loaded duckdb."""
        found = []
        fd_dir = Path(f"/proc/{self.proc.pid}/fd")
        for fd in fd_dir.iterdir() if fd_dir.is_dir() else []:
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if ".duckdb" in target:
                    found.append(target)
        maps = Path(f"/proc/{self.proc.pid}/maps")
        with contextlib.suppress(OSError):
            if "duckdb" in maps.read_text():
                found.append("the duckdb library is loaded")
        return found

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


@dataclass
class Sample:
    at: float
    what: str
    ok: bool
    seconds: float
    detail: str = ""


class Readers(threading.Thread):
    """Keep reading while a refresh writes: the app's API and an in-process `BenchPress`."""

    PROBES = {"gpqa_diamond": 70.0}

    def __init__(self, app: App, bench: Any, version: str):
        super().__init__(daemon=True)
        self.app, self.bench, self.version = app, bench, version
        self.samples: list[Sample] = []
        self.warehouse_use: list[str] = []
        self.stop_event = threading.Event()
        self.expected_app = self._app_prediction()[1]
        self.expected_bench = self._bench_prediction()

    def _app_prediction(self) -> tuple[int, Any, float]:
        status, body, seconds = self.app.get(
            f"/api/predict?version={self.version}&scores=gpqa_diamond%3D70"
        )
        return status, (body or {}).get("predictions"), seconds

    def _bench_prediction(self) -> dict[str, float]:
        return {b: p.score for b, p in self.bench.predict(self.PROBES).items()}

    def run(self) -> None:
        while not self.stop_event.is_set():
            now = time.monotonic()
            status, body, seconds = self.app.get("/api/versions")
            self.samples.append(Sample(now, "app versions", status == 200, seconds))
            status, predictions, seconds = self._app_prediction()
            same = status == 200 and predictions == self.expected_app
            self.samples.append(Sample(now, "app predict", same, seconds, str(status)))
            started = time.monotonic()
            same = self._bench_prediction() == self.expected_bench
            self.samples.append(Sample(now, "BenchPress", same, time.monotonic() - started))
            self.warehouse_use += self.app.warehouse_use()
            self.stop_event.wait(0.25)

    def stop(self) -> None:
        self.stop_event.set()
        self.join(timeout=120)
