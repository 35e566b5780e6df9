"""Read and verify published matrix snapshots (the format is defined here; writers live in
`warehouse.snapshots`). A snapshot is a directory `<store>/<version>/` holding data files and a
`manifest.json` that lists each file's sha256 and the content hash over all of them."""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from predictor.paths import bundled_snapshot_dir, snapshot_store_dir

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DATA_FILES = (
    "cells.parquet",
    "models.parquet",
    "benchmarks.parquet",
    "aliases.parquet",
    "conflicts.parquet",
    "fit.json",
)
# Files added after the format was first published: a snapshot may lack them (older versions),
# and a reader falls back to computing what they hold.
OPTIONAL_FILES = ("residuals.parquet",)
VERSION_PATTERN = re.compile(r"^(\d{4})\.(\d{1,2})\.(\d{1,2})\.(\d+)$")


class SnapshotError(RuntimeError):
    """A snapshot is missing, malformed or does not match its recorded hashes."""


class BrokenSnapshotWarning(UserWarning):
    """A version was passed over (e.g. resolving "latest") because its manifest is broken."""


def version_key(version: str) -> tuple[int, ...]:
    match = VERSION_PATTERN.fullmatch(version)  # `$` alone would accept a trailing newline
    if not match:
        raise SnapshotError(f"not a snapshot version: {version!r} (expected e.g. 2026.11.30.1)")
    return tuple(int(part) for part in match.groups())


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def content_hash(file_hashes: dict[str, str]) -> str:
    """One hash for the snapshot's content: independent of version, time and file order."""
    lines = "".join(f"{name}:{file_hashes[name]}\n" for name in sorted(file_hashes))
    return hashlib.sha256(lines.encode()).hexdigest()


def list_versions(store: Path) -> list[str]:
    """Published versions in a store, oldest first (directories with a manifest only)."""
    if not store.is_dir():
        return []
    found = [
        entry.name
        for entry in store.iterdir()
        if VERSION_PATTERN.fullmatch(entry.name) and (entry / MANIFEST).is_file()
    ]
    return sorted(found, key=version_key)


def default_stores() -> list[Path]:
    """Where `load` looks: the local store under BENCHPRESS_HOME, then the bundled one."""
    return [snapshot_store_dir(), bundled_snapshot_dir()]


def resolve_version(version: str, stores: list[Path]) -> Path:
    """The directory of `version` (or the newest for "latest") in the first store that has it.

    A pinned version whose manifest is broken or names another version is an error; "latest"
    passes over such versions with a `BrokenSnapshotWarning`, so one bad folder in the local
    store does not stop every default command."""
    if version == "latest":
        return _newest_valid(stores)
    version_key(version)  # validates the string before it touches a path
    for store in stores:
        candidate = store / version
        if (candidate / MANIFEST).is_file():
            read_version_manifest(candidate)
            return candidate
    known = sorted({v for s in stores for v in list_versions(s)}, key=version_key)
    raise SnapshotError(f"snapshot {version} not found; published versions: {known or 'none'}")


def _newest_valid(stores: list[Path]) -> Path:
    """The newest version across all stores whose manifest reads; on a tie the earlier store
    (local) wins."""
    candidates = sorted(
        (
            (version_key(v), -rank, store / v)
            for rank, store in enumerate(stores)
            for v in list_versions(store)
        ),
        reverse=True,
    )
    if not candidates:
        raise SnapshotError("no published snapshot found in " + ", ".join(str(s) for s in stores))
    for *_, directory in candidates:
        try:
            read_version_manifest(directory)
        except SnapshotError as exc:
            warnings.warn(
                f"skipping snapshot {directory.name}: {exc}", BrokenSnapshotWarning, stacklevel=3
            )
            continue
        return directory
    raise SnapshotError(
        "no valid published snapshot in " + ", ".join(str(s) for s in stores) + " (all broken)"
    )


@dataclass(frozen=True)
class Snapshot:
    """A loaded, verified snapshot: manifest plus its tables."""

    path: Path
    manifest: dict[str, Any]
    cells: pl.DataFrame
    models: pl.DataFrame
    benchmarks: pl.DataFrame
    aliases: pl.DataFrame
    conflicts: pl.DataFrame
    fit: dict[str, Any]
    residuals: pl.DataFrame | None = None  # leave-one-out check of every fitted cell

    @property
    def version(self) -> str:
        return str(self.manifest["version"])


def listed_files(manifest: dict[str, Any], where: object) -> list[str]:
    """The data files a manifest lists, in canonical order; every required file, no stranger."""
    files = manifest.get("files")
    names = set(files) if isinstance(files, dict) else set()
    missing = sorted(set(DATA_FILES) - names)
    unknown = sorted(names - set(DATA_FILES) - set(OPTIONAL_FILES))
    if missing or unknown:
        raise SnapshotError(
            f"{where}: manifest lists {sorted(names)}; expected {list(DATA_FILES)} plus "
            f"optionally {list(OPTIONAL_FILES)} (missing {missing}, unknown {unknown})"
        )
    return [name for name in (*DATA_FILES, *OPTIONAL_FILES) if name in names]


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of a snapshot directory (published or staged), checked for shape first:
    a hand-made or truncated file is a SnapshotError naming it, never an AttributeError."""
    path = directory / MANIFEST
    try:
        manifest = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SnapshotError(f"{path}: unreadable manifest ({exc})") from None
    return check_manifest(manifest, path)


def check_manifest(manifest: object, where: object) -> dict[str, Any]:
    """`manifest` if it has the shape every reader relies on (shared by local and remote
    stores): a JSON object of the supported format listing the data files and their hashes."""
    if not isinstance(manifest, dict):
        raise SnapshotError(
            f"{where}: manifest must be a JSON object, got {type(manifest).__name__}"
        )
    if manifest.get("format_version") != FORMAT_VERSION:
        raise SnapshotError(
            f"{where}: format_version {manifest.get('format_version')!r} is not supported"
        )
    listed_files(manifest, where)
    if not all(isinstance(h, str) for h in manifest["files"].values()):
        raise SnapshotError(f"{where}: manifest file hashes must be strings")
    if not isinstance(manifest.get("content_hash"), str):
        raise SnapshotError(f"{where}: manifest has no content_hash")
    version = manifest.get("version")  # absent while staged; "as-of-..." for a rebuild
    if "version" in manifest and not (isinstance(version, str) and version):
        raise SnapshotError(f"{where}: manifest has an invalid version {version!r}")
    return manifest


def expect_version(manifest: dict[str, Any], version: str, where: object) -> None:
    """A store folder must hold the version it is named after: a folder copied or renamed by
    hand would otherwise load other content under the requested version."""
    if manifest.get("version") != version:
        raise SnapshotError(
            f"{where}: {version}/{MANIFEST} describes version {manifest.get('version')!r} "
            "(copied or renamed by hand?)"
        )


def read_version_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of a published version's folder, which must describe that version."""
    manifest = read_manifest(directory)
    expect_version(manifest, directory.name, directory.parent)
    return manifest


def verify(directory: Path, version: str | None = None) -> dict[str, Any]:
    """Check every data file against the manifest; raise on any difference (tampering).

    `version`: the version the folder is expected to hold (a store's folder name); staged and
    scratch directories have none."""
    manifest = read_manifest(directory)
    if version is not None:
        expect_version(manifest, version, directory.parent)
    recorded: dict[str, str] = manifest["files"]
    for name, expected in recorded.items():
        path = directory / name
        if not path.is_file():
            raise SnapshotError(f"{directory}: missing {name}")
        actual = sha256_file(path)
        if actual != expected:
            raise SnapshotError(
                f"snapshot {manifest.get('version')}: {name} has sha256 {actual[:12]}..., "
                f"manifest says {expected[:12]}... (modified after publishing?)"
            )
    if content_hash(recorded) != manifest.get("content_hash"):
        raise SnapshotError(f"{directory}: content hash does not match the file hashes")
    return manifest


def load_snapshot(directory: Path) -> Snapshot:
    manifest = verify(directory)
    return Snapshot(
        path=directory,
        manifest=manifest,
        cells=pl.read_parquet(directory / "cells.parquet"),
        models=pl.read_parquet(directory / "models.parquet"),
        benchmarks=pl.read_parquet(directory / "benchmarks.parquet"),
        aliases=pl.read_parquet(directory / "aliases.parquet"),
        conflicts=pl.read_parquet(directory / "conflicts.parquet"),
        fit=json.loads((directory / "fit.json").read_text("utf-8")),
        residuals=(
            pl.read_parquet(directory / "residuals.parquet")
            if "residuals.parquet" in manifest["files"]
            else None
        ),
    )
