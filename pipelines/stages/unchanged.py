"""What the matrix of a refresh is built from, as one key, so that a rerun that fetched nothing
new can stop after its sources and reuse the published snapshot instead of rebuilding it.

The matrix, the fit and the snapshot are functions of three things only (the same payloads give
the same snapshot, byte for byte): each source's current parse in the warehouse (a parse id is
new whenever a source's bytes or its parser changed), the settings that shape the matrix and
the fit (`BENCHPRESS_*` variables, but for those that only say where or how fast to fetch), and
the code that turns one into the other (a digest of the installed packages' files). The
publishing step records the key beside the version it published; a rerun whose key equals it,
and whose store still has that version as its newest, has nothing new to build.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping

import duckdb

from predictor.util.source_digest import source_digest
from warehouse.snapshots import current_parse_rows

# settings that say where state lives, where and how fast to fetch, how long to wait or how
# to read results files: they never change what a matrix holds
NOT_MATRIX_SETTINGS = frozenset(
    {
        "BENCHPRESS_HOME",
        "BENCHPRESS_FETCH_MODE",
        "BENCHPRESS_HTTP_MIRROR",
        "BENCHPRESS_REPLAY_ROOT",
        "BENCHPRESS_FETCH_DEADLINE",
        "BENCHPRESS_SOURCE_DEADLINE",
        "BENCHPRESS_RUN_DEADLINE",
        "BENCHPRESS_REFRESH_WORKERS",
        "BENCHPRESS_DUCKDB_LOCK_WAIT",
        "BENCHPRESS_READ_SECONDS",
        "BENCHPRESS_READ_MEMORY_MB",
        "BENCHPRESS_CALIBRATION_CACHE",  # keyed by everything the calibration depends on
    }
)
PACKAGES = ("pipelines", "warehouse", "predictor")


def matrix_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """The `BENCHPRESS_*` settings that may shape the matrix, the fit or the publish gate."""
    return {
        name: value
        for name, value in sorted(environ.items())
        if name.startswith("BENCHPRESS_") and name not in NOT_MATRIX_SETTINGS
    }


def code_digest() -> str:
    """sha256 over the files of the installed packages (path and bytes, in path order):
    another version, or an edited checkout, builds another matrix."""
    return source_digest(PACKAGES)


def matrix_inputs_key(
    con: duckdb.DuckDBPyConnection, environ: Mapping[str, str] | None = None
) -> str:
    """The key of what a matrix built now would be built from (see the module)."""
    parses = {source: list(row) for source, row in sorted(current_parse_rows(con).items())}
    document = {
        "parses": parses,
        "settings": matrix_settings(os.environ if environ is None else environ),
        "code": code_digest(),
    }
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def reusable_version(
    recorded: Mapping[str, object] | None, key: str, versions: list[str]
) -> str | None:
    """The published version a rerun reuses: the one recorded with this same key, when it is
    still the newest in the store; else None (the matrix is built)."""
    if not recorded or recorded.get("matrix_inputs") != key:
        return None
    version = str(recorded.get("version") or "")
    return version if versions and versions[-1] == version else None
