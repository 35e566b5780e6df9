"""Write, stage and publish immutable snapshots (format and verification: predictor.snapshots).

Staging writes the data files to a directory named by their content hash; publishing copies a
staged, checked directory into the store under a new calendar version, atomically (write to a
temporary name, then rename), refusing to overwrite and publishing nothing when the content
equals the newest published snapshot.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl

from predictor.snapshots import (
    DATA_FILES,
    FORMAT_VERSION,
    MANIFEST,
    SnapshotError,
    content_hash,
    list_versions,
    listed_files,
    read_manifest,
    sha256_file,
    verify,
    version_key,
)
from predictor.stores import write_index


@dataclass(frozen=True)
class SnapshotTables:
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
    """Write the data files; returns {file name: sha256}."""
    directory.mkdir(parents=True, exist_ok=True)
    _write_parquet(tables.cells, directory / "cells.parquet")
    _write_parquet(tables.models, directory / "models.parquet")
    _write_parquet(tables.benchmarks, directory / "benchmarks.parquet")
    _write_parquet(tables.aliases, directory / "aliases.parquet")
    _write_parquet(tables.conflicts, directory / "conflicts.parquet")
    (directory / "fit.json").write_text(
        json.dumps(tables.fit, sort_keys=True, separators=(",", ":")), "utf-8"
    )
    names = list(DATA_FILES)
    if tables.residuals is not None:
        _write_parquet(tables.residuals, directory / "residuals.parquet")
        names.append("residuals.parquet")
    return {name: sha256_file(directory / name) for name in names}


def stage(tables: SnapshotTables, staging_root: Path, facts: dict[str, Any]) -> tuple[str, Path]:
    """Write tables to `staging_root/<content_hash>/` with a draft manifest (no version yet)."""
    scratch = staging_root / f".tmp-{os.getpid()}-{datetime.now(UTC).timestamp():.0f}"
    if scratch.exists():
        shutil.rmtree(scratch)
    hashes = write_tables(tables, scratch)
    digest = content_hash(hashes)
    draft = {"format_version": FORMAT_VERSION, "content_hash": digest, "files": hashes, **facts}
    (scratch / MANIFEST).write_text(json.dumps(draft, indent=2, sort_keys=True) + "\n", "utf-8")
    target = staging_root / digest
    if target.exists():
        shutil.rmtree(scratch)
    else:
        os.replace(scratch, target)
    return digest, target


def next_version(store: Path, today: date) -> str:
    prefix = f"{today.year}.{today.month:02d}.{today.day:02d}"
    same_day = [
        version_key(v)[3]
        for v in list_versions(store)
        if version_key(v)[:3] == version_key(prefix + ".1")[:3]
    ]
    return f"{prefix}.{max(same_day, default=0) + 1}"


def _seal(version_dir: Path) -> None:
    """Published files are read-only (immutability is also checked by hash on every load)."""
    for name in [*listed_files(read_manifest(version_dir), version_dir), MANIFEST]:
        path = version_dir / name
        if path.stat().st_mode & 0o222:
            with contextlib.suppress(PermissionError):  # someone else's store: leave it
                path.chmod(0o444)


@dataclass(frozen=True)
class PublishResult:
    version: str
    published: bool  # False when the content equals the newest snapshot already published
    path: Path
    content_hash: str
    parent: str | None


def publish(
    staged: Path,
    store: Path,
    today: date | None = None,
    extra_manifest: dict[str, Any] | None = None,
) -> PublishResult:
    """Publish a staged snapshot as the next version unless its content is already latest."""
    draft = verify(staged)
    store.mkdir(parents=True, exist_ok=True)
    versions = list_versions(store)
    parent = versions[-1] if versions else None
    if parent is not None:
        latest = read_manifest(store / parent)
        if latest.get("content_hash") == draft["content_hash"]:
            _seal(store / parent)  # a publish killed after its rename left them writable
            write_index(store)  # stores published before index.json existed get one
            return PublishResult(parent, False, store / parent, draft["content_hash"], None)
    version = next_version(store, today or datetime.now(UTC).date())
    target = store / version
    if target.exists():
        raise SnapshotError(f"refusing to overwrite published snapshot {version}")
    scratch = store / f".publishing-{version}-{os.getpid()}"
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir()
    for name in listed_files(draft, staged):
        shutil.copyfile(staged / name, scratch / name)
    manifest = {
        **draft,
        **(extra_manifest or {}),
        "version": version,
        "parent": parent,
        "published_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    (scratch / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", "utf-8")
    verify(scratch)
    os.rename(scratch, target)  # atomic on one filesystem; fails if target appeared meanwhile
    _seal(target)
    write_index(store)  # {"versions": [...]}: how static (https) mirrors of the store are listed
    return PublishResult(version, True, target, draft["content_hash"], parent)
