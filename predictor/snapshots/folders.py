"""A folder given where a version is expected (`BenchPress.load(Path(...))`,
`BenchPress.from_pretrained(path)`): one snapshot folder, or a store such as `save(path)` wrote.

`save(path)` writes a store (`<path>/<version>/`), while a rebuild (`warehouse rebuild --out`)
writes one snapshot folder; both read back from the same path, so a user never has to know
which of the two a folder is. `load` takes a folder as a `Path` only: a string given to it is a
version, always checked as one, so a hostile version string never becomes a path.
"""

from __future__ import annotations

from pathlib import Path

from predictor.snapshots.layout import MANIFEST
from predictor.snapshots.reader import (
    SnapshotError,
    canonical_spelling,
    is_version,
    list_versions,
    resolve_version,
)


def folder_reference(reference: object) -> Path | None:
    """The folder a `Path` names (a `SnapshotError` when there is none); None for text."""
    if not isinstance(reference, Path):
        return None
    if not reference.is_dir():
        raise SnapshotError(f"{reference}: no such folder")
    return reference


def folder_hint(text: str) -> str | None:
    """What to do when text given as a version is no version but names a folder."""
    if text in ("", "latest") or is_version(text) or canonical_spelling(text) is not None:
        return None
    if not Path(text).is_dir():
        return None
    return (
        f"not a snapshot version: {text!r} is a folder; load a folder with "
        f"BenchPress.load(Path({text!r})) or BenchPress.from_pretrained({text!r})"
    )


def snapshot_in(folder: Path) -> tuple[Path, str | None]:
    """(snapshot directory, the version it must hold) of a folder: itself when it has a
    manifest (any version), else a store's newest version (which must hold that version)."""
    if (folder / MANIFEST).is_file():
        return folder, None
    if list_versions(folder):
        directory = resolve_version("latest", [folder])
        return directory, directory.name
    raise SnapshotError(
        f"{folder} holds no snapshot: no {MANIFEST} in it and no version folders "
        "(give a folder BenchPress.save or `warehouse rebuild --out` wrote)"
    )
