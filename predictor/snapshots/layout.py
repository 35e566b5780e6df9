"""What a snapshot holds, in one place: its format version, its tables and their files, the
columns of its cells table and the fields of its manifest.

The writer (`warehouse.snapshots`), the reader (`predictor.snapshots.reader`) and the matrix that
becomes the cells table (`pipelines.transforms.matrix`) all take the layout from here, so a new
table, column or manifest field is added once. Nothing here reads or writes a file.

A snapshot is a folder `<store>/<version>/`: the data files below, `manifest.json` (which lists
each data file's sha256 and the content hash over them) and `digest` (the manifest's own
digest); a store's root has `index.json` (its versions and their digests).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DIGEST_FILE = "digest"  # "sha256:<64 hex>\n": the digest of the manifest next to it
INDEX = "index.json"  # at a store's root: {"versions": [...], "digests": {version: digest}}

# ------------------------------------------------------------------------------- tables
# Parquet tables every snapshot has, in canonical order (the `Snapshot` / `SnapshotTables`
# fields of the same names).
TABLES = ("cells", "models", "benchmarks", "aliases", "conflicts")
FIT = "fit"  # the fitted state (model and benchmark ids, the completer's state), as JSON
# Tables added after the format was first published: a snapshot may lack them (older versions),
# and a reader falls back to computing what they hold.
OPTIONAL_TABLES = ("residuals",)  # the leave-one-out check of every fitted cell


def table_file(table: str) -> str:
    """The file a table is stored in: `fit.json`, else `<table>.parquet`."""
    return f"{table}.json" if table == FIT else f"{table}.parquet"


DATA_FILES = (*(table_file(t) for t in TABLES), table_file(FIT))
OPTIONAL_FILES = tuple(table_file(t) for t in OPTIONAL_TABLES)

# --------------------------------------------------------------------------- cells table
# The score matrix's cells (`pipelines.transforms.matrix.build_matrix`), one per model and
# benchmark, with the provenance of the observation chosen for it.
MATRIX_CELL_COLUMNS = (
    "model_id",
    "benchmark_id",
    "score",
    "source",
    "payload_url",
    "payload_sha256",
    "fetched_at",
    "model_key",
    "n_observations",
    "row_ref",
    "model_name",
    "benchmark_key",
    "setting",
    "agent",
    "raw_value",
    "raw_unit",
    "n_sources",
)
CELL_RENAMES = {"payload_url": "url"}  # matrix column -> its name in the snapshot's cells
# The snapshot's cells table: the matrix's columns, renamed, in the same order.
CELL_COLUMNS = tuple(CELL_RENAMES.get(c, c) for c in MATRIX_CELL_COLUMNS)
# The columns `BenchPress.scores()` returns, in its order (each one a snapshot has: older
# snapshots lack the later columns).
SCORES_COLUMNS = (
    "model_id",
    "benchmark_id",
    "score",
    "source",
    "url",
    "fetched_at",
    "payload_sha256",
    "model_key",
    "n_observations",
    "row_ref",
    "model_name",
    "benchmark_key",
    "setting",
    "agent",
    "raw_value",
    "raw_unit",
    "n_sources",
)

# ----------------------------------------------------------------------------- manifest
# The manifest's fields: who writes each, and what it holds. Staging writes the draft (the
# first three and the stage's facts); publishing adds the run's facts and the version.
MANIFEST_FIELDS: Mapping[str, str] = {
    "format_version": "FORMAT_VERSION of the layout it was written in",
    "content_hash": "sha256 over the data files' names and hashes, independent of the version",
    "files": "data file -> sha256 of its bytes (DATA_FILES, and those of OPTIONAL_FILES present)",
    "counts": "models, benchmarks, cells, conflicts and the sources in the cells (staged)",
    "fit_params": "the fit's parameters (staged)",
    "quality": "the fit's held-out figures (staged)",
    "source_status": "each source's data age and last error (published)",
    "drift": "the drift checks' figures against the previous snapshot (published)",
    "accepted_drift": "drift checks whose failure was accepted for this snapshot (published)",
    "staged_by_run": "the refresh run that staged it (published)",
    "version": "YYYY.MM.DD.N; absent while staged, `as-of-...` for a rebuild",
    "parent": "the store's newest version when it was published, or null",
    "published_at": "UTC, in seconds",
    # a team's own matrix (`BenchPress.fit(...).save()`), kept in the private line
    "origin": '"own"; absent on the public line (`predictor.snapshots.private_line`)',
    # the pretrained snapshots bundled by `pipelines.bundle_pretrained` (no clock time)
    "description": "what the pretrained snapshot is",
    "built_by": "the function that built it",
    "payload": "the recorded payload it was built from (source, URL, sha256, time)",
}


def draft_manifest(
    file_hashes: dict[str, str], content_hash: str, facts: Mapping[str, Any]
) -> dict[str, Any]:
    """The manifest of a staged snapshot (no version yet)."""
    return {
        "format_version": FORMAT_VERSION,
        "content_hash": content_hash,
        "files": file_hashes,
        **facts,
    }


def published_manifest(
    draft: Mapping[str, Any],
    facts: Mapping[str, Any],
    version: str,
    parent: str | None,
    published_at: str,
) -> dict[str, Any]:
    """The manifest of a staged snapshot published as `version` after `parent`."""
    return {
        **draft,
        **facts,
        "version": version,
        "parent": parent,
        "published_at": published_at,
    }
