"""Mirror published snapshots to a shared store (s3://, or another directory) for consumers on
other machines. The local store stays the pipeline's source of truth: versions are numbered and
published there first, then copied unchanged, so a remote version is byte-identical to the local
one and pushing again is a no-op."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from predictor.snapshots.reader import SnapshotError, list_versions, verify
from predictor.snapshots.stores import SnapshotStore, open_store


@dataclass(frozen=True)
class RemotePublish:
    version: str
    uri: str
    pushed: bool  # False when the store already had this version with the same content


@dataclass(frozen=True)
class SyncResult:
    uri: str
    pushed: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)


def _writable(uri: str | Path) -> SnapshotStore:
    store = open_store(uri)
    if not store.writable:
        raise SnapshotError(f"{store.uri} is read-only: publish to s3:// or a directory")
    return store


def _push(store: SnapshotStore, local_version_dir: Path, known: set[str]) -> RemotePublish:
    manifest = verify(local_version_dir)
    version = str(manifest.get("version"))
    if version in known:
        remote = store.read_manifest(version)
        if remote.get("content_hash") != manifest["content_hash"]:
            raise SnapshotError(
                f"{store.uri} has snapshot {version} with content "
                f"{str(remote.get('content_hash'))[:12]}..., the local store has "
                f"{manifest['content_hash'][:12]}...: the stores diverged; versions are immutable, "
                "so fix the remote by hand"
            )
        return RemotePublish(version, store.uri, pushed=False)
    store.publish_dir(local_version_dir)
    return RemotePublish(version, store.uri, pushed=True)


def publish_to_store(local_version_dir: Path, uri: str | Path) -> RemotePublish:
    """Copy one published local snapshot to the store at `uri` (data files first, manifest
    last). Idempotent: a version already there with the same content hash is left alone; with a
    different content hash it is an error, never an overwrite."""
    store = _writable(uri)
    return _push(store, local_version_dir, set(store.list_versions()))


def sync_store(local_store_dir: Path, uri: str | Path) -> SyncResult:
    """Push every local version the remote lacks (oldest first, so parents land first), check
    the ones it has, and rewrite its index.json (repairing one left stale by a race)."""
    store = _writable(uri)
    known = set(store.list_versions())
    result = SyncResult(store.uri)
    for version in list_versions(local_store_dir):
        outcome = _push(store, local_store_dir / version, known)
        (result.pushed if outcome.pushed else result.present).append(version)
    store.write_index()
    return result


__all__ = ["RemotePublish", "SyncResult", "publish_to_store", "sync_store"]
