"""The shared warehouse (BENCHPRESS_WAREHOUSE=ducklake) in the tests against real servers: a
lake on a real PostgreSQL catalog (tests.support.postgres_server) with its data files in a real
S3-compatible server on loopback (moto's server mode, `pipelines.team.s3_local`), the
`benchpress` command run in processes of its own. The servers' fixtures are in conftest.py."""

from __future__ import annotations

import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import psycopg2

from pipelines.team.postgres_local import LocalPostgres
from pipelines.team.s3_local import LocalS3
from tests.faults.refreshing import TABLE_QUERIES, _digest, benchpress_command, refresh_env
from warehouse import ducklake

TIMEOUT = 1500  # two refreshes sharing a loaded 2-core machine
CATALOG = "the shared warehouse's catalog (PostgreSQL)"
DATA = "the shared warehouse's data store (S3)"


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
    server.query(f"CREATE DATABASE {database}", autocommit=True)
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
