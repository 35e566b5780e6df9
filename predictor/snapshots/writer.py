"""Write a snapshot's files (layout: `predictor.snapshots.layout`): its tables, deterministic
byte for byte, and its manifest with the `digest` file; and the next calendar version.

Pure file writing, no warehouse: the pipeline's publishing (`warehouse.snapshots`) and
`BenchPress.save` (a team's own fitted matrix) write through the same functions, so a
snapshot is one format wherever it comes from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl

from predictor.snapshots.layout import (
    DIGEST_FILE,
    FIT,
    MANIFEST,
    OPTIONAL_TABLES,
    TABLES,
    table_file,
)
from predictor.snapshots.reader import digest_file_bytes, manifest_digest, sha256_file, version_key


@dataclass(frozen=True)
class SnapshotTables:
    """A snapshot's tables (`predictor.snapshots.layout.TABLES`, `FIT`, `OPTIONAL_TABLES`)."""

    cells: pl.DataFrame
    models: pl.DataFrame
    benchmarks: pl.DataFrame
    aliases: pl.DataFrame
    conflicts: pl.DataFrame
    fit: dict[str, Any]
    residuals: pl.DataFrame | None = None  # leave-one-out check of every fitted cell


def _write_parquet(frame: pl.DataFrame, path: Path) -> None:
    # fixed settings so the same frame gives the same bytes on every run
    frame.write_parquet(path, compression="zstd", compression_level=3, statistics=False)


def write_tables(tables: SnapshotTables, directory: Path) -> dict[str, str]:
    """Write the data files; returns {file name: sha256}, in the layout's order."""
    directory.mkdir(parents=True, exist_ok=True)
    names = []
    for table in TABLES:
        names.append(table_file(table))
        _write_parquet(getattr(tables, table), directory / names[-1])
    names.append(table_file(FIT))
    (directory / names[-1]).write_text(
        json.dumps(tables.fit, sort_keys=True, separators=(",", ":")), "utf-8"
    )
    for table in OPTIONAL_TABLES:
        frame = getattr(tables, table)
        if frame is not None:
            names.append(table_file(table))
            _write_parquet(frame, directory / names[-1])
    return {name: sha256_file(directory / name) for name in names}


def write_manifest(directory: Path, manifest: dict[str, Any]) -> str:
    """Write `manifest.json` and its `digest` file; returns the digest (`sha256:<64 hex>`).

    The digest is taken over the manifest as read back from the text written, so it is what
    every reader computes."""
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    digest = manifest_digest(json.loads(text))
    (directory / DIGEST_FILE).write_bytes(digest_file_bytes(digest))
    (directory / MANIFEST).write_text(text, "utf-8")
    return digest


def next_version(taken: Iterable[str], today: date) -> str:
    """Today's next free calendar version (`YYYY.MM.DD.N`, the one canonical spelling:
    `predictor.snapshots.reader.VERSION_PATTERN`) given the version names `taken`."""
    prefix = f"{today.year}.{today.month:02d}.{today.day:02d}"
    same_day = [
        version_key(v)[3] for v in taken if version_key(v)[:3] == version_key(prefix + ".1")[:3]
    ]
    return f"{prefix}.{max(same_day, default=0) + 1}"
