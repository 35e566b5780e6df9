"""Snapshot versions: their one spelling, their order, and the versions a store folder holds.

Kept apart from `predictor.snapshots.reader` (which loads Polars to read the tables) so that
`benchpress --version`, which lists the bundled snapshot, starts without Polars or NumPy.
`predictor.snapshots.reader` re-exports every name here."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from predictor.snapshots.layout import MANIFEST

# One spelling per version: YYYY.MM.DD.N in ASCII digits, month and day in two digits, N
# without leading zeros (what `warehouse.snapshots.next_version` writes). `[0-9]`, not `\d`:
# `\d` also matches other scripts' digits (٢٠٢٦), which would name a second folder.
VERSION_PATTERN = re.compile(
    r"([0-9]{4})\.(0[1-9]|1[0-2])\.(0[1-9]|[12][0-9]|3[01])\.([1-9][0-9]{0,5})"
)
_LOOSE_VERSION = re.compile(r"(\d{4})\.(\d{1,2})\.(\d{1,2})\.(\d{1,6})")  # for the hint only


class SnapshotError(RuntimeError):
    """A snapshot is missing, malformed or does not match its recorded hashes."""


# ------------------------------------------------------------------------------- versions
def is_version(text: object) -> bool:
    """True for a version in its one canonical spelling (and a real calendar day)."""
    match = VERSION_PATTERN.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups()[:3])
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def canonical_spelling(text: str) -> str | None:
    """The canonical spelling of a version written another way (`٢٠٢٦.11.30.2`,
    `2026.11.30.02`, `2026.1.5.1`), or None when `text` is no version at all."""
    match = _LOOSE_VERSION.fullmatch(text)
    if match is None:
        return None
    year, month, day, number = (int(part) for part in match.groups())
    spelled = f"{year:04d}.{month:02d}.{day:02d}.{number}"
    return spelled if is_version(spelled) else None


def check_version(version: object) -> str:
    """`version` if it is one, in its canonical spelling; checked before it is used in any
    path, key or URL (no traversal, no second spelling of one version)."""
    if is_version(version):
        return str(version)
    spelled = canonical_spelling(version) if isinstance(version, str) else None
    if spelled is not None:
        raise SnapshotError(
            f"not a snapshot version: {version!r} (the canonical spelling is {spelled})"
        )
    raise SnapshotError(f"not a snapshot version: {version!r} (expected e.g. 2026.11.30.1)")


def check_misspelled_version(text: object) -> None:
    """Raise `check_version`'s SnapshotError (naming the canonical spelling) when `text` is a
    version written another way; anything else passes (it is checked where it is used)."""
    if isinstance(text, str) and not is_version(text) and canonical_spelling(text) is not None:
        check_version(text)


def version_key(version: str) -> tuple[int, ...]:
    check_version(version)
    match = VERSION_PATTERN.fullmatch(version)
    assert match is not None  # checked just above
    return tuple(int(part) for part in match.groups())


def list_versions(store: Path) -> list[str]:
    """Published versions in a store, oldest first (directories with a manifest only)."""
    if not store.is_dir():
        return []
    found = [
        entry.name
        for entry in store.iterdir()
        if is_version(entry.name) and (entry / MANIFEST).is_file()
    ]
    return sorted(found, key=version_key)
