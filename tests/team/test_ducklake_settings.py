"""The shared warehouse (BENCHPRESS_WAREHOUSE=ducklake) before it writes, against real servers,
no mocks (tests.team.lake): a catalog that is down, a data store that is down, a missing bucket
and a wrong password stop `benchpress refresh` before it writes anything; settings that cannot
work name their variable; the migrations give the lake the local schema; a second writer waits
for the first and names it. (tests/team/test_ducklake_warehouse.py: two homes refreshing one
lake, a catalog lost mid-run, rebuilds as of a moment.)"""

from __future__ import annotations

import os
import time
from pathlib import Path

import duckdb
import pytest

from pipelines.team.postgres_local import LocalPostgres, free_port
from pipelines.team.s3_local import LocalS3
from tests.team.lake import CATALOG, DATA, Lake, benchpress, finish, new_lake, refresh, s3_keys
from warehouse import ducklake
from warehouse.db import connect, migrate

pytestmark = pytest.mark.slow


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
        "005_release_dates.sql",
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
