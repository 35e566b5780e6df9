"""The private line: where a team's own matrices (`BenchPress.fit(frame).save()`) are kept,
apart from the public line that `benchpress refresh` publishes and `BenchPress.load()` reads.

Saved into the public store (`$BENCHPRESS_HOME/snapshots`), a 15 x 8 matrix of a team's own
benchmarks would become the public `latest`: every default `load()` and `benchpress predict`
would answer from it (and fail on public benchmarks), and a refresh with a shared store would
push it there. So own matrices go to `$BENCHPRESS_HOME/private/snapshots`, beside the private
models' store, are read only when asked for (`BenchPress.load(private=True)`, `--store`) and
can be removed (`remove_version`); published public versions are immutable and never removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from predictor.snapshots.layout import MANIFEST
from predictor.snapshots.reader import (
    SnapshotError,
    check_version,
    is_version,
    list_versions,
    read_manifest_check,
)
from predictor.snapshots.stores import LocalStore, open_store, write_index
from predictor.util.paths import (
    PRIVATE_STORE_DIR,
    benchpress_home,
    bundled_snapshot_dir,
    snapshot_store_dir,
)

OWN_ORIGIN = "own"  # the manifest's "origin" of a matrix fitted from a team's frame
OWN_DESCRIPTION = "fitted in memory from a scores frame (BenchPress.fit)"  # older saves: only this
PUBLISH_URI_ENV = "BENCHPRESS_PUBLISH_URI"  # the shared store a refresh pushes to (pipelines)


class RemovalRefused(SnapshotError):
    """`remove_version` was asked to remove a version that is not an own matrix."""


def private_store_dir(home: Path | None = None) -> Path:
    """The private line's store folder (created by the first `save()`)."""
    return (home or benchpress_home()) / PRIVATE_STORE_DIR / "snapshots"


def private_store() -> LocalStore:
    """The private line as a store to read; a clear error while nothing was saved there."""
    root = private_store_dir()
    if not root.is_dir():
        raise SnapshotError(
            f"no own matrix saved yet ({root} does not exist): "
            "BenchPress.fit(frame).save() keeps one there"
        )
    return LocalStore(root)


def is_own(manifest: dict[str, Any]) -> bool:
    """True for a matrix fitted from a team's frame, also one saved before "origin" existed."""
    return manifest.get("origin") == OWN_ORIGIN or manifest.get("description") == OWN_DESCRIPTION


def _local_root(store: str | Path) -> Path | None:
    """The folder of a local store reference (path or file://), None for a remote one."""
    if isinstance(store, Path):
        return store.expanduser().resolve()
    scheme = urlsplit(store).scheme.lower() if "://" in store else ""
    if scheme == "":
        return Path(store).expanduser().resolve()
    if scheme == "file":
        return Path(unquote(urlsplit(store).path)).resolve()
    return None


def _same_store(a: str | Path, b: str | Path) -> bool:
    root_a, root_b = _local_root(a), _local_root(b)
    if root_a is not None or root_b is not None:
        return root_a == root_b
    return str(a).rstrip("/") == str(b).rstrip("/")


def check_own_target(store: str | Path) -> None:
    """Refuse the public line (the home's public store, the shared store a refresh pushes to)
    as the place to save an own matrix: it would become the public `latest`."""
    shared = os.environ.get(PUBLISH_URI_ENV, "").strip()
    public = [(snapshot_store_dir(), "the public snapshot store")]
    if shared:
        public.append((shared, f"the shared store {PUBLISH_URI_ENV} publishes to"))
    for where, what in public:
        if _same_store(store, where):
            raise SnapshotError(
                f"refusing to save an own matrix into {what} ({store}): it would become the "
                "public latest that BenchPress.load() and `benchpress predict` answer from; "
                "save() with no argument keeps it in your private line, or give another folder"
            )


def public_versions() -> set[str]:
    """Version names of the public line on this machine, which a new own version does not
    take: a version string then names one matrix, whichever line it is looked up in."""
    return {*list_versions(snapshot_store_dir()), *list_versions(bundled_snapshot_dir())}


def private_hint(error: SnapshotError, version: str) -> SnapshotError:
    """`error` (a version not found in the public line), saying so when the private line has
    that version: it is loaded only when asked for."""
    if not is_version(version) or not (private_store_dir() / version / MANIFEST).is_file():
        return error
    return SnapshotError(
        f"{error}; {version} is one of your own matrices: load it with "
        f"BenchPress.load({version!r}, private=True), or --store {private_store_dir()} "
        "on the command line"
    )


@dataclass(frozen=True)
class Removed:
    version: str
    store: Path  # the store folder it was removed from


def remove_version(version: str, store: str | Path | None = None) -> Removed:
    """Remove own matrix `version` from a local store: by default from the private line, else
    (an own matrix an older release saved there) from the home's public store; with `store`,
    from that folder. A version that is not an own matrix (a published public one, one that
    ships with the package) is refused with `RemovalRefused`: published versions are immutable
    and others may pin them."""
    check_version(version)
    private = private_store_dir()
    if store is None:
        roots = [private, snapshot_store_dir()]
    else:
        target = open_store(store)
        if not isinstance(target, LocalStore):
            raise RemovalRefused(
                f"{target.uri} is a remote store: `snapshots remove` removes versions from "
                "folders on this machine only"
            )
        target.require_root()
        roots = [target.root]
    for root in roots:
        folder = root / version
        if not (folder.exists() or folder.is_symlink()):
            continue
        if _local_root(root) != _local_root(private):
            _check_own(folder, version, root)
        _remove_folder(root, version)
        return Removed(version, root)
    if store is None and version in list_versions(bundled_snapshot_dir()):
        raise RemovalRefused(
            f"snapshot {version} ships with the package and cannot be removed; "
            "`snapshots remove` removes your own matrices"
        )
    own = list_versions(private if store is None else roots[0])
    where = "your private line" if store is None else str(roots[0])
    raise SnapshotError(f"snapshot {version} not found in {where}; versions there: {own or 'none'}")


def _check_own(folder: Path, version: str, root: Path) -> None:
    try:
        manifest = read_manifest_check(folder, version).manifest
    except SnapshotError as exc:
        raise RemovalRefused(
            f"snapshot {version} in {root} is left in place: its manifest cannot be read to tell "
            f"whether it is an own matrix ({exc})"
        ) from None
    if not is_own(manifest):
        raise RemovalRefused(
            f"snapshot {version} in {root} is a published public version: published versions "
            "are immutable and may be pinned elsewhere, so `snapshots remove` leaves them; it "
            "removes your own matrices (`benchpress snapshots list --private`)"
        )


def _remove_folder(root: Path, version: str) -> None:
    """Take the version out of the listing at once (a rename), then delete its files (made
    read-only when published) and rewrite the store's index."""
    scratch = root / f".removing-{version}-{os.getpid()}"
    try:
        os.rename(root / version, scratch)
    except OSError as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
        raise SnapshotError(f"could not remove snapshot {version} from {root}: {reason}") from None
    if scratch.is_symlink() or scratch.is_file():
        scratch.unlink()
    else:
        for child in scratch.rglob("*"):
            with contextlib.suppress(OSError):
                child.chmod(0o755 if child.is_dir() else 0o644)
        shutil.rmtree(scratch, ignore_errors=True)
    write_index(root)
