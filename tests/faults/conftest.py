"""Fixtures of the fault suite, and the fault x source table printed at the end of the session.

- `fault_mirror`: one loopback mirror of the recorded payloads for the whole session; each cell
  installs its own responders (and they are removed afterwards).
- `seeded_warehouse(source_id)`: a DuckDB warehouse holding one good ingest + parse of a source,
  built once per source and copied for every cell, so each cell starts from "last good data".
- `fast_fit` (autouse): full refreshes in this directory fit only models with at least 20 cells
  (`BENCHPRESS_MIN_CELLS_PER_MODEL`), a few hundred rows instead of thousands. Every code path is
  the same; the suite stays within its time budget on a shared 2-core machine.
- `uninterrupted`: one `benchpress refresh --mode replay` subprocess, uninterrupted, in a home
  whose store already holds a previous version; meanwhile `benchpress app` (its own process)
  and a loaded `BenchPress` keep reading, and, once the refresh holds the refresh lock, a second
  refresh is started in the same home. Its end state is what the crash tests must reproduce.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, Fetcher
from pipelines.locking import lock_path, read_holder
from pipelines.sources import SOURCES
from pipelines.stages.ingest import ingest_source
from pipelines.stages.parse import parse_source
from predictor import BenchPress
from predictor.util.paths import snapshot_store_dir
from tests.faults.faults import FAULTS, RESULTS, Stalls, applicable
from tests.faults.refreshing import (
    App,
    EndState,
    Readers,
    Refresh,
    end_state,
    seed_previous_version,
)
from tests.support.mirror_server import MirrorServer
from warehouse.db import connect

FAST_FIT_ENV = {"BENCHPRESS_MIN_CELLS_PER_MODEL": "20"}
COLUMN_NAMES = {  # short column headings for the printed table
    "benchpress_matrix": "bp_matrix",
    "open_llm_leaderboard": "open_llm",
    "livecodebench": "lcb",
}


@pytest.fixture(autouse=True)
def fast_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in FAST_FIT_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture(scope="session")
def fault_mirror() -> Iterator[MirrorServer]:
    server = MirrorServer(DEFAULT_REPLAY_ROOT).start()
    assert server._server is not None
    # faults abort connections on purpose: keep socketserver from printing their tracebacks
    server._server.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
    Stalls.release.clear()
    try:
        yield server
    finally:
        Stalls.release.set()  # let stalled handler threads finish
        server.stop()


@pytest.fixture(scope="session")
def seeded_warehouse(
    fault_mirror: MirrorServer, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], Path]:
    """source id -> a closed DuckDB file with one good ingest + parse of that source."""
    root = tmp_path_factory.mktemp("seeded")
    built: dict[str, Path] = {}

    def seeded(source_id: str) -> Path:
        if source_id not in built:
            path = root / f"{source_id}.duckdb"
            fault_mirror.faults.clear()
            fetcher = Fetcher("mirror", mirror=fault_mirror.base_url, retries=0)
            with connect(path) as con:
                ingest_source(con, fetcher, SOURCES[source_id])
                parse_source(con, SOURCES[source_id])
            built[source_id] = path
        return built[source_id]

    return seeded


REFRESH_ARGS = ["--accept-drift", "all"]  # the previous version is the bundled snapshot
REFRESH_TIMEOUT = 900.0


@dataclass
class UninterruptedRun:
    home: Path
    previous: str  # the version in the store before the refresh
    refresh: Refresh
    exit_code: int
    rival: Refresh  # started while `refresh` held the lock
    rival_exit_code: int
    rival_ended_first: bool  # `refresh` was still running when the rival had exited
    readers: Readers
    app: App
    end: EndState


@pytest.fixture(scope="session")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UninterruptedRun]:
    root = tmp_path_factory.mktemp("uninterrupted")
    home = root / "home"
    previous = seed_previous_version(home, root / "seed-staging")
    app = App(home, snapshot_store_dir(home))
    try:
        bench = BenchPress.load(previous, store=snapshot_store_dir(home))
        readers = Readers(app, bench, previous)
        readers.start()
        refresh = Refresh.start(home, REFRESH_ARGS)
        deadline = time.monotonic() + 300
        while read_holder(lock_path(home)).pid != refresh.pid:
            assert refresh.proc.poll() is None, refresh.tail()
            assert time.monotonic() < deadline, "the refresh never took the lock"
            time.sleep(0.1)
        rival = Refresh.start(home, REFRESH_ARGS)
        rival_code = rival.wait(timeout=REFRESH_TIMEOUT)
        rival_ended_first = refresh.proc.poll() is None
        code = refresh.wait(timeout=REFRESH_TIMEOUT)
        after_publish(readers, refresh.started + refresh.seconds)
        readers.stop()
        yield UninterruptedRun(
            home,
            previous,
            refresh,
            code,
            rival,
            rival_code,
            rival_ended_first,
            readers,
            app,
            end_state(home),
        )
    finally:
        app.stop()


def after_publish(readers: Readers, ended: float, timeout: float = 300) -> None:
    """Wait for a whole round of reads (app versions, app predict, BenchPress) begun after
    the refresh ended at `ended` (on the monotonic clock)."""
    deadline = time.monotonic() + timeout
    while sum(sample.at > ended for sample in readers.samples) < 3:  # the three reads
        assert readers.is_alive() and time.monotonic() < deadline, "no reads after the publish"
        time.sleep(0.1)


@pytest.fixture
def warehouse_copy(tmp_path: Path) -> Callable[[Path], Path]:
    def copy(template: Path) -> Path:
        target = tmp_path / "warehouse.duckdb"
        shutil.copyfile(template, target)
        return target

    return copy


def fault_table() -> list[str]:
    """The fault x source table of the outcomes recorded this session (empty if none)."""
    if not RESULTS:
        return []
    heads = {s: COLUMN_NAMES.get(s, s) for s in SOURCES}
    cells = {
        (f.name, s): RESULTS.get((f.name, s), "n.a." if not applicable(f, s) else "-")
        for f in FAULTS
        for s in SOURCES
    }
    width = {s: max(len(heads[s]), *(len(cells[(f.name, s)]) for f in FAULTS)) for s in SOURCES}
    first = max(len(f.label) for f in FAULTS)
    lines = [
        "fault".ljust(first) + " | " + " | ".join(heads[s].ljust(width[s]) for s in SOURCES),
        "-" * first + "-+-" + "-+-".join("-" * width[s] for s in SOURCES),
    ]
    for fault in FAULTS:
        row = " | ".join(cells[(fault.name, s)].ljust(width[s]) for s in SOURCES)
        lines.append(fault.label.ljust(first) + " | " + row)
    counts: dict[str, int] = {}
    for value in cells.values():
        counts[value] = counts.get(value, 0) + 1
    lines.append("cells: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    lines += [
        "rejected: a clear FetchError/ParseError, last good data kept and reported stale",
        "degraded: parsed; nothing lost without a rejected reason; names stored verbatim",
        "CRASH: another exception; LOSS: rows gone without a reason; BAD: faulty data taken as "
        "good; xfail: known, fix in the issue 9 report",
    ]
    return lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from tests.faults.faults import DETAILS, HOSTILE_NAMES

    lines = fault_table()
    if not lines:
        return
    terminalreporter.section("fault x source -> outcome")
    for line in lines:
        terminalreporter.write_line(line)
    hostile = [key for key in DETAILS if key[0] in HOSTILE_NAMES]
    verbatim = [key for key in hostile if "stored verbatim" in DETAILS[key]]
    notes = sorted((key, text) for key, text in DETAILS.items() if key not in verbatim)
    if verbatim:
        terminalreporter.write_line(
            f"hostile names: stored verbatim, tables intact, in {len(verbatim)} of "
            f"{len(hostile)} degraded cells"
        )
    if notes:
        terminalreporter.write_line("other degraded and known-issue cells:")
        for (fault, source), text in notes:
            terminalreporter.write_line(f"  {fault} x {source}: {text}")
