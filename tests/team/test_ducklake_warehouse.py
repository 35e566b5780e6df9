"""The shared warehouse (BENCHPRESS_WAREHOUSE=ducklake) against real servers, no mocks: DuckLake's
catalog in a real PostgreSQL (tests.support.postgres_server) and its data files in a real
S3-compatible server on loopback (moto's server mode, `pipelines.team.s3_local`; AWS itself is
out of reach here). Two `benchpress refresh --mode replay` processes in two homes (two
"machines", each with its own Dagster instance) write one lake at the same time while a reader
checks what it sees; a catalog lost in the middle of a run fails that run and the next run
completes with the same warehouse as an uninterrupted one; `warehouse rebuild --as-of` reads the
lake's own snapshot of that moment. (What stops a refresh before it writes, the schema and the
write lock: tests/team/test_ducklake_settings.py, a file of its own so that `make test` can run
it beside this one.)"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipelines.sources import SOURCES as registered_sources
from pipelines.team.postgres_local import LocalPostgres
from pipelines.team.s3_local import LocalS3
from predictor.snapshots.reader import list_versions, read_manifest, verify
from predictor.util.paths import snapshot_store_dir
from tests.team.lake import (
    CATALOG,
    TIMEOUT,
    Lake,
    benchpress,
    finish,
    lake_state,
    new_lake,
    refresh,
)
from warehouse import ducklake
from warehouse.db import connect

pytestmark = pytest.mark.slow
SOURCES = len(registered_sources)  # the recorded sources of the replay mode
GONE = (  # what libpq says of a server that went away
    "Connection refused",
    "server closed the connection unexpectedly",
    "terminating connection due to administrator command",
)


INVARIANTS = {
    # a parse and its rows commit together: no rows without their parse, no parse short of rows
    "orphan_rows": "SELECT count(*) FROM source_scores s"
    " WHERE NOT EXISTS (SELECT 1 FROM parses p WHERE p.parse_id = s.parse_id)",
    "short_parses": "SELECT count(*) FROM parses p WHERE status = 'ok' AND n_rows <>"
    " (SELECT count(*) FROM source_scores s WHERE s.parse_id = p.parse_id)",
    # two machines never archive the same bytes twice, nor parse the same payload set twice
    "duplicate_payloads": "SELECT count(*) - count(DISTINCT (source, url, sha256))"
    " FROM raw_payloads",
    "duplicate_payload_ids": "SELECT count(*) - count(DISTINCT payload_id) FROM raw_payloads",
    "duplicate_parses": "SELECT count(*) - count(DISTINCT (source, payload_set_sha))"
    " FROM parses WHERE status = 'ok'",
    "duplicate_parse_ids": "SELECT count(*) - count(DISTINCT parse_id) FROM parses",
}


class Reader(threading.Thread):
    """Reads the lake over and over while the refreshes write it: every read is one snapshot."""

    def __init__(self, lake: Lake):
        super().__init__(daemon=True)
        self.lake = lake
        self.samples: list[dict[str, int]] = []
        self.errors: list[str] = []
        self.stop_event = threading.Event()

    def run(self) -> None:
        con = None
        while not self.stop_event.is_set():
            try:
                con = con or self.lake.reader()
                con.execute("BEGIN TRANSACTION")
                sample = {name: con.execute(sql).fetchone()[0] for name, sql in INVARIANTS.items()}
                sample["matrix_cells"] = con.execute(
                    "SELECT count(*) FROM matrix_cells"
                ).fetchone()[0]
                con.execute("COMMIT")
                self.samples.append(sample)
            except ducklake.WarehouseMissingError:
                pass  # no refresh has made the lake yet
            except duckdb.CatalogException:
                con.execute("ROLLBACK")  # the first refresh has not made every table yet
            except Exception as exc:  # noqa: BLE001 - reported by the test
                self.errors.append(f"{type(exc).__name__}: {exc}")
            time.sleep(0.3)
        if con is not None:
            con.close()


@dataclass(frozen=True)
class TwoHomes:
    lake: Lake
    homes: tuple[Path, Path]
    runs: tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]
    reader: Reader
    state: dict[str, tuple[int, str]]
    publish_uri: str
    finished_at: datetime


@pytest.fixture(scope="module")
def two_homes(
    postgres: LocalPostgres, s3: LocalS3, tmp_path_factory: pytest.TempPathFactory
) -> TwoHomes:
    """Two homes refresh one lake at the same time (each with its own local Dagster instance),
    publishing to one shared s3:// store, while a reader reads the lake."""
    lake = new_lake(postgres, s3)
    root = tmp_path_factory.mktemp("two-homes")
    uri = f"s3://team/snapshots-{lake.prefix}"
    env = lake.env(BENCHPRESS_PUBLISH_URI=uri)
    reader = Reader(lake)
    reader.start()
    homes = (root / "machine-a", root / "machine-b")
    started = [refresh(home, env) for home in homes]
    runs = tuple(finish(process) for process in started)
    reader.stop_event.set()
    reader.join(timeout=60)
    return TwoHomes(lake, homes, runs, reader, lake_state(lake), uri, datetime.now(UTC))


def test_two_homes_refresh_one_lake_at_the_same_time(two_homes: TwoHomes) -> None:
    for done in two_homes.runs:
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Traceback" not in done.stderr
    reader = two_homes.reader.lake.reader()
    try:
        counts = {
            name: reader.execute(sql).fetchone()[0]
            for name, sql in {
                "payload_urls": "SELECT count(DISTINCT (source, url)) FROM raw_payloads",
                "sources": "SELECT count(DISTINCT source) FROM parses",
                "fetches": "SELECT count(*) FROM fetch_log",
                "parsed_rows": "SELECT sum(n_rows) FROM parses WHERE status = 'ok'",
                "runs_staged": "SELECT count(*) FROM staging_runs",
                "runs_published": "SELECT count(*) FROM publish_log",
            }.items()
        }
        invariants = {name: reader.execute(sql).fetchone()[0] for name, sql in INVARIANTS.items()}
    finally:
        reader.close()
    state = two_homes.state
    # each recorded payload archived once and each source parsed once, whichever home got there
    # first; both runs fetched every source (a fetch_log row each) and staged and published
    assert state["raw_payloads"][0] == counts["payload_urls"]
    assert state["parses"][0] == counts["sources"] == SOURCES
    assert state["source_scores"][0] == counts["parsed_rows"]
    assert counts["fetches"] == 2 * SOURCES
    assert counts["runs_staged"] == counts["runs_published"] == 2
    assert set(invariants.values()) == {0}
    assert state["staged_snapshots"][0] == 1  # both fits staged the same content


def test_both_homes_publish_the_same_snapshot_to_the_shared_store(
    two_homes: TwoHomes, s3: LocalS3, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from predictor.snapshots.stores import open_store

    published = []
    for home, done in zip(two_homes.homes, two_homes.runs, strict=True):
        assert done.returncode == 0, done.stderr[-3000:]
        store = snapshot_store_dir(home)
        (version,) = list_versions(store)
        verify(store / version)
        published.append((version, read_manifest(store / version)["content_hash"]))
        assert f"snapshot published {version}" in done.stdout or (
            f"latest is {version}" in done.stdout
        )
    assert published[0] == published[1]
    version, content = published[0]
    for name, value in s3.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("BENCHPRESS_HOME", str(tmp_path / "consumer"))
    shared = open_store(two_homes.publish_uri)
    assert shared.list_versions() == [version]
    assert shared.read_manifest(version)["content_hash"] == content
    # a consumer on a third machine predicts from the shared store
    answer = benchpress(
        tmp_path / "consumer",
        s3.env(),
        "predict",
        "--scores",
        "gpqa_diamond=80,mmlu_pro=80",
        "--store",
        two_homes.publish_uri,
        "--version",
        version,
        "--json",
    )
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout)["version"] == version


def test_readers_only_ever_see_committed_states(two_homes: TwoHomes) -> None:
    reader = two_homes.reader
    assert reader.errors == []
    assert len(reader.samples) >= 10
    final_cells = two_homes.state["matrix_cells"][0]
    for sample in reader.samples:
        assert {k: v for k, v in sample.items() if k != "matrix_cells"} == dict.fromkeys(
            INVARIANTS, 0
        )
        assert sample["matrix_cells"] in (0, final_cells)  # replaced whole, never half
    assert reader.samples[-1]["matrix_cells"] == final_cells


def test_warehouse_stats_reads_the_lake_from_a_third_home(
    two_homes: TwoHomes, tmp_path: Path
) -> None:
    done = benchpress(tmp_path / "reader", two_homes.lake.env(), "warehouse", "stats", "--json")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert stats["warehouse"] == (
        f"the DuckLake at {two_homes.lake.where} (data in s3://team/{two_homes.lake.prefix}/)"
    )
    assert len(stats["sources"]) == SOURCES
    assert stats["matrix"]["cells"] == two_homes.state["matrix_cells"][0]
    assert not (tmp_path / "reader").exists()  # a reader writes nothing in its home


def test_the_password_is_never_printed_or_written(two_homes: TwoHomes) -> None:
    secret = two_homes.lake.server.password.encode()
    for done in two_homes.runs:
        assert secret not in (done.stdout + done.stderr).encode()
    written = [p for home in two_homes.homes for p in home.rglob("*") if p.is_file()]
    assert len(written) > 20
    assert [p for p in written if secret in p.read_bytes()] == []
    assert not any(home.joinpath("warehouse.duckdb").exists() for home in two_homes.homes)


# ---------------------------------------------------------------------- lost mid-run, rebuild
def test_catalog_lost_mid_run_fails_the_run_and_the_next_one_completes(
    tmp_path: Path, own_postgres: LocalPostgres, s3: LocalS3, two_homes: TwoHomes
) -> None:
    lake = new_lake(own_postgres, s3)
    home = tmp_path / "home"
    running = refresh(home, lake.env())
    deadline = time.monotonic() + TIMEOUT
    archived = 0
    while archived < 2:  # stop the catalog once two sources are archived
        assert running.poll() is None, running.communicate()
        assert time.monotonic() < deadline, "the refresh did not get going"
        time.sleep(0.2)
        try:
            reader = lake.reader()
            try:
                archived = reader.execute(
                    "SELECT count(DISTINCT source) FROM fetch_log"
                ).fetchone()[0]
            finally:
                reader.close()
        except Exception:  # noqa: BLE001 - the lake is not made yet
            archived = 0
    own_postgres.stop("immediate")  # as when its machine goes away
    lost = finish(running)
    assert lost.returncode == 1
    assert "Traceback" not in lost.stderr
    failed = [line for line in lost.stderr.splitlines() if line.startswith("step failed: ")]
    assert failed, lost.stderr
    # the step in flight lost the catalog, the steps after it could not reach it
    said = re.compile(
        rf"step failed: [\w, ]+: (cannot reach|lost) {re.escape(CATALOG)} at {lake.where} "
        rf"\(BENCHPRESS_DUCKLAKE_CATALOG\): ({'|'.join(GONE)})"
    )
    assert [line for line in failed if not said.match(line)] == []
    assert lost.stderr.splitlines()[-1] == (
        "benchpress: refresh did not publish; the previous snapshot stays latest"
    )
    assert own_postgres.password not in lost.stdout + lost.stderr

    own_postgres.start()  # same data, same port
    again = finish(refresh(home, lake.env()))
    assert again.returncode == 0, again.stderr[-3000:]
    # the same warehouse as two homes refreshing without a fault, and a snapshot that verifies
    assert lake_state(lake) == two_homes.state
    store = snapshot_store_dir(home)
    (version,) = list_versions(store)
    verify(store / version)
    assert (
        read_manifest(store / version)["content_hash"]
        == read_manifest(snapshot_store_dir(two_homes.homes[0]) / version)["content_hash"]
    )


def test_rebuild_as_of_reads_the_lake_snapshot_of_that_moment(
    two_homes: TwoHomes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backfill written after the moment, with rows dated before it, stays out of a rebuild
    as of that moment: the lake is read as it was then, not filtered by fetch dates."""
    lake, moment = two_homes.lake, two_homes.finished_at
    env = lake.env(BENCHPRESS_MIN_CELLS_PER_MODEL="20")

    def rebuild(out: str) -> tuple[str, dict]:
        done = benchpress(
            tmp_path / "reader", env, "warehouse", "rebuild", "--as-of", moment.isoformat(),
            "--out", str(tmp_path / out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        (staged,) = [p for p in (tmp_path / out).iterdir() if p.is_dir()]
        return staged.name, read_manifest(staged)

    before, manifest = rebuild("before")
    for name, value in lake.env().items():
        monkeypatch.setenv(name, value)
    with connect() as con:  # a backfill: livecodebench re-imported with dates before `moment`
        from warehouse.scores import record_parse

        (parse_id, payload_ids, fetched_at) = con.execute(
            "SELECT parse_id, payload_ids, fetched_at FROM parses WHERE source = 'livecodebench'"
        ).fetchone()
        rows = con.execute(
            "SELECT * EXCLUDE (parse_id) FROM source_scores WHERE parse_id = ?", [parse_id]
        ).pl()
        record_parse(
            con,
            source="livecodebench",
            set_sha="backfill",
            payload_ids=list(payload_ids),
            fetched_at=fetched_at,
            parsed_at=datetime.now(UTC),
            parser_version="livecodebench:backfill",
            rows=rows.with_columns(pl.col("value") / 2),
        )
    after, manifest_after = rebuild("after")
    assert after == before  # the same content: the backfill came later
    lake_snapshot = manifest["ducklake_snapshot"]  # the lake snapshot both read
    assert manifest_after["ducklake_snapshot"] == lake_snapshot
    assert datetime.fromisoformat(lake_snapshot["committed_at"]) <= moment
    with connect(read_only=True) as con:  # fetch dates alone would have let it in
        from warehouse.scores import current_parses

        current = current_parses(con, moment).filter(pl.col("source") == "livecodebench")
        assert current["parse_id"].item() != parse_id
