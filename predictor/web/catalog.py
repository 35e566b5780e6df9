"""Which snapshot versions the app serves, and the loaded `BenchPress` for each.

Loading a version verifies every hash and restores the fit (about half a second), so the last
few are kept in memory. Versions are immutable, so a cached one never goes stale; only the
listing (what `latest` means) is re-read, at most every few seconds.

The catalog also knows where the team's private models come from (`predictor.private`, the
store under BENCHPRESS_HOME): read when asked, kept apart from every snapshot.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from predictor.api import BenchPress
from predictor.private import PrivateModel, private_models
from predictor.snapshots.reader import SnapshotError, default_stores, load_snapshot, version_key
from predictor.snapshots.stores import LocalStore, SnapshotStore, StoreUnreachable, open_store
from predictor.util.paths import bundled_snapshot_dir
from predictor.web.errors import ApiError, not_found

log = logging.getLogger("benchpress.app")

LISTING_TTL_SECONDS = 5.0
PrivateSource = Callable[[], list[PrivateModel]]


class Catalog:
    """The stores behind the app: `--store` alone, else the default ones (local, bundled)."""

    def __init__(
        self,
        store: str | Path | None = None,
        stores: Sequence[str | Path] | None = None,
        capacity: int = 4,
        private: PrivateSource | None = None,
        home: Path | None = None,
    ) -> None:
        """`private`: where private models come from (default: `private_models(home)`, the
        home being BENCHPRESS_HOME unless given)."""
        if store is not None and stores is not None:
            raise ValueError("give either store or stores, not both")
        if store is not None:
            roots: Sequence[str | Path] = [store]
        elif stores is not None:
            roots = stores
        else:
            roots = default_stores()
        self.stores: list[SnapshotStore] = [open_store(root) for root in roots]
        self.capacity = capacity
        self._lock = threading.Lock()
        self._loading: dict[str, threading.Lock] = {}
        self._loaded: OrderedDict[str, BenchPress] = OrderedDict()
        self._manifests: dict[tuple[str, str], dict[str, Any]] = {}
        self._listing: tuple[float, dict[str, SnapshotStore]] | None = None
        self.home = home  # None: BENCHPRESS_HOME, read when private models are
        self._private = private or (lambda: private_models(home))

    # ---------------------------------------------------------------------------- listing
    def _where(self) -> dict[str, SnapshotStore]:
        """version -> the first store that has it (as `BenchPress.load` searches)."""
        with self._lock:
            if self._listing and time.monotonic() - self._listing[0] < LISTING_TTL_SECONDS:
                return self._listing[1]
        where: dict[str, SnapshotStore] = {}
        for store in self.stores:
            try:
                versions = store.list_versions()
            except StoreUnreachable:
                versions = store.cached_versions()
            for version in versions:
                where.setdefault(version, store)
        with self._lock:
            self._listing = (time.monotonic(), where)
        return where

    def versions(self) -> list[str]:
        """Published versions whose manifest reads, newest first: a broken or misnamed folder
        is left out (and logged), so it can neither be `latest` nor break the version list."""
        readable = []
        for version in sorted(self._where(), key=version_key, reverse=True):
            try:
                self.manifest(version)
            except SnapshotError as exc:
                log.warning("skipping snapshot %s: %s", version, exc)
                continue
            readable.append(version)
        return readable

    def manifest(self, version: str) -> dict[str, Any]:
        """A version's manifest without loading its data (for the version list)."""
        store = self._where()[version]
        key = (store.uri, version)
        with self._lock:
            cached = self._manifests.get(key)
        if cached is None:
            cached = store.read_manifest(version)
            with self._lock:
                self._manifests[key] = cached
        return cached

    def store_of(self, version: str) -> str:
        """Where a version comes from, for people: the store URI, or "bundled"."""
        store = self._where()[version]
        bundled = bundled_snapshot_dir().resolve()
        if isinstance(store, LocalStore) and store.root.resolve() == bundled:
            return "bundled"
        return store.uri

    def resolve(self, version: str) -> str:
        """A concrete version for `version` ("latest" = newest); 404 with the known ones."""
        known = self.versions()
        if version == "latest":
            if not known:
                where = ", ".join(store.uri for store in self.stores)
                raise not_found(f"no published snapshot found in {where}")
            return known[0]
        if version not in known:
            listed = sorted(known, key=version_key)
            raise not_found(f"snapshot {version} not found; published versions: {listed or 'none'}")
        return version

    # ---------------------------------------------------------------------------- loading
    def load(self, version: str = "latest") -> BenchPress:
        """The `BenchPress` for a version (validated by the caller), loaded once and cached."""
        concrete = self.resolve(version)
        with self._lock:
            if concrete in self._loaded:
                self._loaded.move_to_end(concrete)
                return self._loaded[concrete]
            gate = self._loading.setdefault(concrete, threading.Lock())
        with gate:  # one loader per version; the others wait and then hit the cache
            with self._lock:
                if concrete in self._loaded:
                    return self._loaded[concrete]
            bench = BenchPress(load_snapshot(self._where()[concrete].fetch(concrete)))
            with self._lock:
                self._loaded[concrete] = bench
                while len(self._loaded) > self.capacity:
                    self._loaded.popitem(last=False)
        return bench

    # ---------------------------------------------------------------------- private models
    def private_models(self) -> list[PrivateModel]:
        """The team's private models and checkpoints, read now (the store may have changed).

        The store is a plugin's (the warehouse's): whatever stops it being read (a file
        written by a newer benchpress, a broken file) is a 503 saying so, and the snapshot's
        endpoints keep working."""
        try:
            return list(self._private())
        except Exception as exc:  # noqa: BLE001 (a provider's errors are not ours to know)
            log.warning("the private store cannot be read: %s", exc)
            raise ApiError(503, f"the private store cannot be read: {exc}") from None
