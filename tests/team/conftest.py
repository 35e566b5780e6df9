"""Fixtures of the team-service tests: real PostgreSQL servers (tests.support.postgres_server)
and, for the shared warehouse, a real S3-compatible server (`pipelines.team.s3_local`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipelines.team.postgres_local import LocalPostgres
from pipelines.team.s3_local import LocalS3
from tests.support.postgres_server import running_postgres


@pytest.fixture(scope="session")
def postgres() -> Iterator[LocalPostgres]:
    """One server for the session; tests that stop it use `own_postgres` instead."""
    with running_postgres() as server:
        yield server


@pytest.fixture
def own_postgres() -> Iterator[LocalPostgres]:
    """A server of this test's own, free to be stopped and restarted."""
    with running_postgres() as server:
        yield server


@pytest.fixture(scope="module")
def s3() -> Iterator[LocalS3]:
    """An S3-compatible server with the bucket `team`, one per test file."""
    with LocalS3() as server:
        server.create_bucket("team")
        yield server
