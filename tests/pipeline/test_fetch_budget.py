"""Source and run deadlines over real loopback HTTP: a mirror that answers every file, each one
late, cannot hold a refresh for hours. The source that spends its budget fails stale with the
reason (how many of its files it got, which setting to raise) and the run goes on."""

from __future__ import annotations

import re
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines.assets.sources import build_source_assets, payloads_key
from pipelines.fetch.budget import DeadlineExceeded, FetchBudget
from pipelines.fetch.transports import Fetcher, FetchError
from pipelines.resources import check_settings, default_resources
from pipelines.settings import (
    RUN_DEADLINE_ENV,
    SOURCE_DEADLINE_ENV,
    FetchDeadlines,
    fetch_deadlines,
)
from pipelines.sources import SOURCES
from pipelines.stages.ingest import ingest_source
from pipelines.stages.parse import parse_source
from predictor.cli import main
from tests.support.mirror_server import MirrorServer, serve_trickle
from warehouse.db import connect
from warehouse.status import source_status

LLM_STATS_FILES = 337  # the listing and the 336 files it names, in the recorded payloads
LATE = 0.25  # seconds each llm_stats file is held back: 336 files would take 84 s
RAW_FILES = "/raw.githubusercontent.com/"  # every llm_stats file but the listing
EVALPLUS_PATH = "/evalplus.github.io/results.json"
SOURCE_FAILED = re.compile(
    r"^llm_stats: source deadline of 2s exceeded after (\d+) of 337 files "
    r"\(BENCHPRESS_SOURCE_DEADLINE\)$"
)


def last_fetch(con: duckdb.DuckDBPyConnection, source: str) -> tuple[str, str | None]:
    return con.execute(
        "SELECT outcome, error FROM fetch_log WHERE source = ? ORDER BY fetch_id DESC LIMIT 1",
        [source],
    ).fetchone()


def served(mirror: MirrorServer) -> int:
    return sum(status == "200" for _, status in mirror.requests)


def test_a_slow_mirror_stops_at_the_source_deadline(mirror_server: MirrorServer, tmp_path) -> None:
    """Each file 0.25 s late (well inside the 120 s per-URL deadline): 336 files would take
    84 s; the 2 s source budget stops it after a few, naming how many and the setting (the
    clock only checks it did not stop early, and ended far from the 84 s: a loaded machine
    may take seconds to finish the file in flight)."""
    mirror_server.delays[RAW_FILES] = LATE
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url, retries=0)
    started = time.monotonic()
    budget = FetchBudget.start(FetchDeadlines(source=2.0, run=1800.0))
    with connect(tmp_path / "warehouse.duckdb") as con:
        with pytest.raises(DeadlineExceeded) as caught:
            ingest_source(con, fetcher, SOURCES["llm_stats"], budget)
        elapsed = time.monotonic() - started
        outcome, error = last_fetch(con, "llm_stats")
        status = source_status(con)["llm_stats"]
    message = str(caught.value)
    match = SOURCE_FAILED.match(message)
    assert match, message
    done = int(match[1])
    assert 2 <= done < LLM_STATS_FILES  # the listing and at least one file, far from all
    assert done in (served(mirror_server) - 1, served(mirror_server))  # one may be in flight
    assert 2.0 <= elapsed < (LLM_STATS_FILES - 1) * LATE / 4
    assert isinstance(caught.value, FetchError)  # handled like any failed fetch
    assert (outcome, error) == ("failed", message)
    assert status["status"] == "stale" and status["error"] == message


def test_a_run_past_its_deadline_does_not_start_the_source(mirror_server, tmp_path) -> None:
    budget = FetchBudget.start(FetchDeadlines(source=600.0, run=2.0), time.time() - 5.0)
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url)
    with connect(tmp_path / "warehouse.duckdb") as con:
        with pytest.raises(DeadlineExceeded) as caught:
            ingest_source(con, fetcher, SOURCES["llm_stats"], budget)
        assert last_fetch(con, "llm_stats")[0] == "failed"
    assert str(caught.value) == (
        "llm_stats: run deadline of 2s exceeded before the source started (BENCHPRESS_RUN_DEADLINE)"
    )
    assert mirror_server.requests == []  # not one request


def test_the_source_budget_cuts_one_slow_download_short(mirror_server, tmp_path) -> None:
    """A body trickling for 60 s with a 120 s per-URL deadline: the source's 1 s budget ends
    it, the source goes stale and its last good parse stays current."""
    source = SOURCES["evalplus"]
    with connect(tmp_path / "warehouse.duckdb") as con:
        ingest_source(con, Fetcher("mirror", mirror=mirror_server.base_url), source)
        good = parse_source(con, source)
        mirror_server.faults[EVALPLUS_PATH] = serve_trickle(limit=60.0)
        started = time.monotonic()
        budget = FetchBudget.start(FetchDeadlines(source=1.0, run=1800.0))
        with pytest.raises(DeadlineExceeded) as caught:
            ingest_source(con, Fetcher("mirror", mirror=mirror_server.base_url), source, budget)
        elapsed = time.monotonic() - started
        again = parse_source(con, source)
        status = source_status(con)["evalplus"]
    assert str(caught.value) == (
        "evalplus: source deadline of 1s exceeded after 0 of 1 files (BENCHPRESS_SOURCE_DEADLINE)"
    )
    assert 1.0 <= elapsed < 60.0 / 3  # the budget, not the end of the trickle
    assert again.reused and again.parse_id == good.parse_id
    assert status["status"] == "stale" and status["error"] == str(caught.value)


def test_the_run_deadline_bounds_every_source_and_the_run_goes_on(
    mirror_server: MirrorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three payload assets in one real Dagster run (one step after another): evalplus is
    fetched, llm_stats is stopped part-way by the run's deadline (counted from the run's
    start in the instance), swebench never starts; each failure is the source's stale WARN
    check, not a failed step, so the run itself succeeds. The 20 s leave a loaded machine
    room to start the run and fetch evalplus before the deadline."""
    monkeypatch.setenv("BENCHPRESS_HTTP_MIRROR", mirror_server.base_url)
    monkeypatch.setenv(RUN_DEADLINE_ENV, "20")
    mirror_server.delays[RAW_FILES] = LATE  # llm_stats alone would take 84 s
    names = ("evalplus", "llm_stats", "swebench")  # the in-process executor runs them in order
    assets = [a for name in names for a in build_source_assets(SOURCES[name])]
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize(
            assets,
            instance=instance,
            resources=default_resources(tmp_path / "home", "mirror"),
            selection=[payloads_key(SOURCES[name]) for name in names],
            raise_on_error=False,
        )
    outcomes = {}
    for event in result.get_asset_materialization_events():
        materialization = event.event_specific_data.materialization
        meta = {k: v.value for k, v in materialization.metadata.items()}
        outcomes[materialization.asset_key.to_user_string()] = (meta["outcome"], meta.get("error"))
    checks = {
        e.event_specific_data.asset_key.to_user_string(): e.event_specific_data.passed
        for e in result.all_events
        if e.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION
    }
    assert result.success
    assert outcomes["evalplus_payloads"] == ("new", None)
    state, error = outcomes["llm_stats_payloads"]
    assert state == "failed"
    assert re.fullmatch(
        r"llm_stats: run deadline of 20s exceeded after \d+ of 337 files "
        r"\(BENCHPRESS_RUN_DEADLINE\)",
        error,
    ), error
    assert outcomes["swebench_payloads"] == (
        "failed",
        "swebench: run deadline of 20s exceeded before the source started "
        "(BENCHPRESS_RUN_DEADLINE)",
    )
    assert checks == {
        "evalplus_payloads": True,
        "llm_stats_payloads": False,
        "swebench_payloads": False,
    }


def test_deadline_settings_default_and_are_checked(monkeypatch, capsys) -> None:
    for name in (SOURCE_DEADLINE_ENV, RUN_DEADLINE_ENV):
        monkeypatch.delenv(name, raising=False)
    assert fetch_deadlines() == FetchDeadlines(source=600.0, run=1800.0)
    monkeypatch.setenv(SOURCE_DEADLINE_ENV, "45")
    monkeypatch.setenv(RUN_DEADLINE_ENV, "90.5")
    assert fetch_deadlines() == FetchDeadlines(source=45.0, run=90.5)
    bad_values = [(SOURCE_DEADLINE_ENV, "soon"), (RUN_DEADLINE_ENV, "0"), (RUN_DEADLINE_ENV, "nan")]
    for name, bad in bad_values:
        monkeypatch.setenv(name, bad)
        with pytest.raises(ValueError, match=name):
            check_settings("replay")
        assert main(["refresh", "--mode", "replay"]) == 2  # before anything runs
        err = capsys.readouterr().err
        assert err.startswith(f"benchpress: error: {name} must be a ") and err.count("\n") == 1
        monkeypatch.setenv(name, "45")
