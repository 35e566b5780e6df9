"""The shared warehouse (BENCHPRESS_WAREHOUSE=ducklake) against real servers, no mocks: DuckLake's
catalog in a real PostgreSQL (tests.support.postgres_server) and its data files in a real
S3-compatible server on loopback (moto's server mode, `pipelines.team.s3_local`; AWS itself is
out of reach here). Two `benchpress refresh --mode replay` processes in two homes (two
"machines", each with its own Dagster instance) write one lake at the same time while a reader
checks what it sees; a catalog that is down, a data store that is down and a wrong password
stop the refresh before it writes; a catalog lost in the middle of a run fails that run and the
next run completes with the same warehouse as an uninterrupted one; `warehouse rebuild --as-of`
reads the lake's own snapshot of that moment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import psycopg2
import pytest

from pipelines.team.postgres_local import LocalPostgres, free_port
from pipelines.team.s3_local import LocalS3
from predictor.paths import snapshot_store_dir
from predictor.snapshots import list_versions, read_manifest, verify
from tests.faults.refreshing import TABLE_QUERIES, _digest, benchpress_command, refresh_env
from warehouse import ducklake
from warehouse.db import connect, migrate

pytestmark = pytest.mark.slow
TIMEOUT = 1500  # two refreshes sharing a loaded 2-core machine
CATALOG = "the shared warehouse's catalog (PostgreSQL)"
DATA = "the shared warehouse's data store (S3)"
SOURCES = 11  # the recorded sources of the replay mode
GONE = (  # what libpq says of a server that went away
    "Connection refused",
    "server closed the connection unexpectedly",
    "terminating connection due to administrator command",
)


# ------------------------------------------------------------------------------ the servers
@pytest.fixture(scope="module")
def s3() -> Iterator[LocalS3]:
    with LocalS3() as server:
        server.create_bucket("team")
        yield server


@dataclass
class Lake:
    """One lake: a catalog database on a server and a data prefix in the bucket."""

    server: LocalPostgres
    s3: LocalS3
    database: str
    prefix: str = field(default_factory=lambda: f"lake-{uuid.uuid4().hex[:8]}")

    def env(self, **extra: str) -> dict[str, str]:
        return {
            **self.s3.env(),
            "BENCHPRESS_WAREHOUSE": "ducklake",
            "BENCHPRESS_DUCKLAKE_CATALOG": (
                f"postgresql://{self.server.user}@{self.server.host}:{self.server.port}/"
                f"{self.database}"
            ),
            "BENCHPRESS_DUCKLAKE_PASSWORD": self.server.password,
            "BENCHPRESS_DUCKLAKE_DATA": f"s3://team/{self.prefix}",
            **extra,
        }

    @property
    def where(self) -> str:
        return f"{self.server.host}:{self.server.port}/{self.database}"

    def reader(self) -> duckdb.DuckDBPyConnection:
        return ducklake.LakeConnection(ducklake.lake_settings(self.env()), read_only=True).open()

    def catalog_tables(self) -> list[str]:
        return [
            row[0]
            for row in self.query(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
            )
        ]

    def query(self, sql: str) -> list[tuple]:
        connection = psycopg2.connect(
            host=self.server.host,
            port=self.server.port,
            user=self.server.user,
            password=self.server.password,
            dbname=self.database,
        )
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql)
                return cursor.fetchall()
        finally:
            connection.close()


def new_lake(server: LocalPostgres, s3: LocalS3) -> Lake:
    """A lake with a catalog database of its own on `server`."""
    database = f"lake_{uuid.uuid4().hex[:8]}"
    connection = psycopg2.connect(
        host=server.host,
        port=server.port,
        user=server.user,
        password=server.password,
        dbname=server.database,
    )
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {database}")
    finally:
        connection.close()
    return Lake(server, s3, database)


def s3_keys(s3: LocalS3, prefix: str) -> list[str]:
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=s3.endpoint,
        aws_access_key_id="x",
        aws_secret_access_key="x",
        region_name="us-east-1",
    )
    listed = client.list_objects_v2(Bucket="team", Prefix=prefix + "/")
    return [item["Key"] for item in listed.get("Contents", [])]


def lake_state(lake: Lake) -> dict[str, tuple[int, str]]:
    """(rows, digest) of each table the crash tests compare, read in one lake snapshot."""
    con = lake.reader()
    try:
        con.execute("BEGIN TRANSACTION")
        state = {}
        for table, sql in TABLE_QUERIES.items():
            rows = con.execute(sql).fetchall()
            state[table] = (len(rows), _digest(rows))
        con.execute("COMMIT")
        return state
    finally:
        con.close()


# ------------------------------------------------------------------------------- refreshing
def refresh(home: Path, env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*benchpress_command(), "refresh", "--mode", "replay", "--no-progress", *args],
        env=refresh_env(home, env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen) -> subprocess.CompletedProcess:
    out, err = process.communicate(timeout=TIMEOUT)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def benchpress(home: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*benchpress_command(), *args],
        env=refresh_env(home, env),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
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
    from predictor.stores import open_store

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


# ----------------------------------------------------------------------- faults at start
def test_catalog_down_at_start_exits_2_and_writes_nothing(
    tmp_path: Path, postgres: LocalPostgres, s3: LocalS3
) -> None:
    lake = Lake(postgres, s3, "lake")
    port = free_port()
    env = {**lake.env(), "BENCHPRESS_DUCKLAKE_CATALOG": f"postgresql://u@127.0.0.1:{port}/lake"}
    done = finish(refresh(tmp_path / "home", env))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"benchpress: error: cannot reach {CATALOG} at 127.0.0.1:{port}/lake "
        "(BENCHPRESS_DUCKLAKE_CATALOG): Connection refused"
    ]
    assert not (tmp_path / "home").exists()
    assert s3_keys(s3, lake.prefix) == []


def test_s3_down_at_start_exits_2_and_writes_nothing(
    tmp_path: Path, postgres: LocalPostgres, s3: LocalS3
) -> None:
    lake = new_lake(postgres, s3)
    port = free_port()
    done = finish(refresh(tmp_path / "home", lake.env(AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}")))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"benchpress: error: cannot reach {DATA} s3://team/{lake.prefix}/ at "
        f"http://127.0.0.1:{port} (BENCHPRESS_DUCKLAKE_DATA, AWS_ENDPOINT_URL): "
        "Could not connect to server"
    ]
    assert not (tmp_path / "home").exists()
    assert lake.catalog_tables() == []  # no DuckLake catalog was made


def test_missing_bucket_and_wrong_password_exit_2(
    tmp_path: Path, postgres: LocalPostgres, s3: LocalS3
) -> None:
    lake = new_lake(postgres, s3)
    done = finish(refresh(tmp_path / "a", lake.env(BENCHPRESS_DUCKLAKE_DATA="s3://nobucket/x")))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"benchpress: error: {DATA} at {s3.endpoint} has no bucket 'nobucket' "
        "(BENCHPRESS_DUCKLAKE_DATA)"
    ]
    wrong = "not-the-password-4711"
    done = finish(refresh(tmp_path / "b", lake.env(BENCHPRESS_DUCKLAKE_PASSWORD=wrong)))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"benchpress: error: {CATALOG} at {lake.where} refused user 'benchpress': "
        'password authentication failed for user "benchpress" '
        "(check BENCHPRESS_DUCKLAKE_CATALOG and BENCHPRESS_DUCKLAKE_PASSWORD)"
    ]
    assert wrong not in done.stdout + done.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    assert lake.catalog_tables() == []


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"BENCHPRESS_WAREHOUSE": "lake"},
            "BENCHPRESS_WAREHOUSE='lake' is not a warehouse backend; choose duckdb or ducklake "
            "(default duckdb)",
        ),
        (
            {"BENCHPRESS_WAREHOUSE": "ducklake"},
            "BENCHPRESS_WAREHOUSE=ducklake keeps the warehouse in a DuckLake lakehouse configured "
            "from the environment; not set: BENCHPRESS_DUCKLAKE_CATALOG (postgresql://USER@HOST:"
            "PORT/DATABASE of its catalog), BENCHPRESS_DUCKLAKE_DATA (s3://BUCKET/PREFIX of its "
            "data files)",
        ),
        (
            {
                "BENCHPRESS_WAREHOUSE": "ducklake",
                "BENCHPRESS_DUCKLAKE_CATALOG": "postgresql://u:hunter2@db:5432/lake",
                "BENCHPRESS_DUCKLAKE_DATA": "s3://b/p",
            },
            "BENCHPRESS_DUCKLAKE_CATALOG holds a password: put it in "
            "BENCHPRESS_DUCKLAKE_PASSWORD instead (the catalog address is shown in messages, "
            "the password never)",
        ),
        (
            {
                "BENCHPRESS_WAREHOUSE": "ducklake",
                "BENCHPRESS_DUCKLAKE_CATALOG": "db:5432/lake",
                "BENCHPRESS_DUCKLAKE_DATA": "s3://b/p",
            },
            "BENCHPRESS_DUCKLAKE_CATALOG must look like postgresql://USER@HOST:PORT/DATABASE; "
            "it does not start with postgresql://",
        ),
        (
            {
                "BENCHPRESS_WAREHOUSE": "ducklake",
                "BENCHPRESS_DUCKLAKE_CATALOG": "postgresql://u@db/lake",
                "BENCHPRESS_DUCKLAKE_DATA": "/srv/lake",
            },
            "BENCHPRESS_DUCKLAKE_DATA must be s3://BUCKET/PREFIX, got '/srv/lake'",
        ),
        (
            {
                "BENCHPRESS_WAREHOUSE": "ducklake",
                "BENCHPRESS_DUCKLAKE_CATALOG": "postgresql://u@db/lake",
                "BENCHPRESS_DUCKLAKE_DATA": "s3://b/p",
                "AWS_ACCESS_KEY_ID": "",
            },
            "BENCHPRESS_WAREHOUSE=ducklake writes its data files to S3 with the credentials of "
            "the standard AWS variables; not set: AWS_ACCESS_KEY_ID",
        ),
    ],
)
def test_bad_settings_name_the_variable_and_exit_2(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    full = {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", **env}
    done = benchpress(tmp_path / "home", full, "refresh", "--mode", "replay")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"benchpress: error: {message}"]
    assert "hunter2" not in done.stderr
    assert not (tmp_path / "home").exists()


# ------------------------------------------------------------------------ schema and locks
def test_migrations_give_the_lake_the_local_schema_without_keys(
    tmp_path: Path, postgres: LocalPostgres, s3: LocalS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = new_lake(postgres, s3)
    columns = (
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns"
        " WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
    )
    local = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        migrate(local)
        local_columns = local.execute(columns).fetchall()
        local_keys = local.execute(
            "SELECT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'"
            " ORDER BY 1"
        ).fetchall()
    finally:
        local.close()
    for name, value in lake.env().items():
        monkeypatch.setenv(name, value)
    with connect() as con:
        lake_columns = con.execute(columns.replace("'main'", "'main' AND table_catalog = 'lake'"))
        lake_columns = lake_columns.fetchall()
        applied = con.execute("SELECT name FROM schema_migrations ORDER BY version").fetchall()
    assert lake_columns == local_columns  # same tables, columns, types and NOT NULLs
    assert [row[0] for row in applied] == [
        "001_initial.sql",
        "002_identity.sql",
        "003_drift.sql",
        "004_publish_gate.sql",
    ]
    # the local file keeps its keys (the lake has none: DuckLake cannot enforce them)
    assert [row[0] for row in local_keys] == [
        "check_results",
        "fetch_log",
        "matrix_cells",
        "parses",
        "publish_log",
        "raw_payloads",
        "schema_migrations",
        "staged_snapshots",
        "staging_runs",
    ]
    sequences = lake.query("SELECT sequencename FROM pg_sequences ORDER BY 1")
    assert sequences == [
        ("benchpress_fetch_ids",),
        ("benchpress_parse_ids",),
        ("benchpress_payload_ids",),
    ]


def test_lake_ddl_refuses_what_it_cannot_translate() -> None:
    with pytest.raises(ValueError, match="a migration uses 'UNIQUE', which DuckLake cannot run"):
        ducklake.lake_ddl("CREATE TABLE t (a VARCHAR UNIQUE);")


def test_a_second_writer_waits_for_the_first_then_names_it(
    postgres: LocalPostgres, s3: LocalS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = new_lake(postgres, s3)
    for name, value in lake.env().items():
        monkeypatch.setenv(name, value)
    with connect() as first:
        first.execute("SELECT 1")
        monkeypatch.setenv("BENCHPRESS_DUCKDB_LOCK_WAIT", "0.5")
        started = time.monotonic()
        with pytest.raises(ducklake.WarehouseBusyError) as busy, connect():
            pass
        assert time.monotonic() - started >= 0.5
        message = str(busy.value)
        assert message.startswith(
            f"the shared warehouse at {lake.where} is being written by benchpress warehouse "
            f"writer pid {os.getpid()} on "
        )
        assert message.endswith("; waited 0.5s (BENCHPRESS_DUCKDB_LOCK_WAIT)")
        with connect(read_only=True) as reading:  # readers never wait for the writer
            assert reading.execute("SELECT count(*) FROM raw_payloads").fetchone() == (0,)
    with connect() as second:  # the lock went with the first connection
        second.execute("SELECT 1")


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
