"""Snapshot stores addressed by URI, so consumers on other machines can pin a version.

`open_store(uri)` accepts a local directory (or `file://`), `s3://bucket/prefix` (optional extra
`s3`: obstore, one self-contained wheel, no botocore/aiohttp stack to pin against the pipeline's)
and a read-only `https://` base where a store directory is served as static files (stdlib urllib,
so no new hard dependency; plain `http://` only on loopback, for tests). A store is the layout of
`predictor.snapshots` plus `index.json` at its root (`{"versions": [...], "digests": {version:
"sha256:..."}}`), the only way to list a static http store. The index records each version's
manifest digest when it is first indexed and keeps it: a manifest edited later no longer
matches, on every read.

Remote versions are downloaded once into `$BENCHPRESS_HOME/cache/<store-id>/<version>/` (verified
in a scratch directory, then renamed into place; the cache's own `index.json` records the digest
that was verified), so a pinned consumer keeps working offline: a cached version is served
without touching the network. `latest` lists the store, and falls back
to the newest cached version with a `StaleSnapshotWarning` when the store cannot be reached.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import io
import ipaddress
import json
import os
import shutil
import ssl
import tempfile
import time
import urllib.error
import urllib.request
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from predictor.snapshots.layout import DIGEST_FILE, FORMAT_VERSION, INDEX, MANIFEST
from predictor.snapshots.reader import (
    MAX_DIGEST_BYTES,
    MAX_INDEX_BYTES,
    MAX_MANIFEST_BYTES,
    ManifestCheck,
    SnapshotError,
    StoreIndex,
    VerifiedSnapshot,
    check_digest,
    check_manifest,
    check_version,
    expect_version,
    is_version,
    list_versions,
    listed_files,
    parse_digest_file,
    parse_index,
    read_index,
    read_manifest_check,
    resolve_version,
    strict_json,
    verify,
    verify_snapshot,
    version_key,
)
from predictor.snapshots.reader import MAX_FILE_BYTES as MAX_FILE_BYTES
from predictor.util.extras import MissingExtraError
from predictor.util.paths import benchpress_home

TIMEOUT_SECONDS = 30.0  # connect, and each read: a stalled transfer fails within this
DEADLINE_SECONDS = 600.0  # whole download of one object: a trickling one fails too
RETRIES = 2  # extra attempts on connection errors, timeouts, 5xx and 429
BACKOFF_SECONDS = 0.2
CHUNK_BYTES = 1024 * 1024
ALLOW_HTTP_ENV = "BENCHPRESS_ALLOW_INSECURE_HTTP"  # "1": allow http:// beyond loopback
USER_AGENT = "benchpress-llm snapshot client"


class StoreUnreachable(SnapshotError):
    """The store could not be contacted (connection, timeout, 5xx): not a verdict on its data."""


class StaleSnapshotWarning(UserWarning):
    """A cached version was used because the store could not say what is newest."""


class _Missing(SnapshotError):
    """The store answered that an object does not exist."""


class _Exists(SnapshotError):
    """A create-only write found the object already there."""


def redact(uri: str) -> str:
    """The URI without user:password, for messages and files."""
    parts = urlsplit(uri)
    if parts.username is None and parts.password is None:
        return uri
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def store_id(identity: str) -> str:
    """Short, filesystem-safe name of a store's cache directory."""
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def _index_bytes(versions: Iterable[str], digests: Mapping[str, str]) -> bytes:
    ordered = sorted({check_version(v) for v in versions}, key=version_key)
    body = {
        "format_version": FORMAT_VERSION,
        "versions": ordered,
        "digests": {v: digests[v] for v in ordered if v in digests},
    }
    return (json.dumps(body, indent=2) + "\n").encode()


def _index_digests(
    versions: Iterable[str],
    recorded: Mapping[str, str],
    fresh: Mapping[str, str] | None,
    digest_of: Any,
) -> dict[str, str]:
    """version -> digest for an index: just published (`fresh`), else as recorded before (a
    version is immutable, so its recorded digest is kept), else read now (`digest_of(version)`;
    a version whose manifest does not check out gets none, and verify reports it)."""
    digests = {}
    for version in versions:
        if fresh and version in fresh:
            digests[version] = fresh[version]
        elif version in recorded:
            digests[version] = recorded[version]
        else:
            with contextlib.suppress(SnapshotError):
                digests[version] = digest_of(version)
    return digests


def write_index(store_dir: Path, fresh: Mapping[str, str] | None = None) -> Path:
    """(Re)write `index.json` of a local store from its directory listing, recording each
    version's digest (`fresh`: digests of versions just published there).

    Deterministic bytes, rewritten only when they change (atomic replace), so a store synced or
    hosted as static files can be listed by http consumers. An unreadable index is an error
    naming it, never silently replaced."""
    path = store_dir / INDEX
    previous = read_index(store_dir)
    versions = list_versions(store_dir)
    digests = _index_digests(
        versions,
        previous.digests if previous is not None else {},
        fresh,
        lambda v: read_manifest_check(store_dir / v, v).digest,
    )
    data = _index_bytes(versions, digests)
    if path.is_file() and path.read_bytes() == data:
        return path
    store_dir.mkdir(parents=True, exist_ok=True)
    scratch = store_dir / f".{INDEX}.{os.getpid()}.tmp"
    scratch.write_bytes(data)
    os.replace(scratch, path)
    return path


def _reason(exc: OSError) -> str:
    """Why an OS call failed, without the path it names (a temporary folder of ours, which
    says nothing to the reader): "permission denied", "read-only file system", ..."""
    return (exc.strerror or type(exc).__name__).lower()


def _remove_tree(path: Path) -> None:
    # published and cached files are read-only; make them writable so removal works everywhere
    for child in path.rglob("*"):
        with contextlib.suppress(OSError):
            child.chmod(0o755 if child.is_dir() else 0o644)
    shutil.rmtree(path, ignore_errors=True)


def _publishable(local_version_dir: Path) -> tuple[str, VerifiedSnapshot]:
    """A verified, published (versioned) local snapshot: its version and what it holds (the
    bytes that were verified are the bytes that are copied)."""
    verified = verify_snapshot(local_version_dir)
    version = verified.check.manifest.get("version")
    if not isinstance(version, str):
        raise SnapshotError(f"{local_version_dir}: manifest has no version (staged, not published)")
    return check_version(version), verified


def _members(verified: VerifiedSnapshot) -> list[tuple[str, bytes]]:
    """(name, bytes) of a version folder in publishing order: data, digest file, manifest
    (last: readers only trust a version with a manifest)."""
    members = list(verified.data.items())
    if verified.digest_file_bytes is not None:
        members.append((DIGEST_FILE, verified.digest_file_bytes))
    return [*members, (MANIFEST, verified.manifest_bytes)]


class SnapshotStore(ABC):
    """Where versions live. `fetch` always returns a verified local directory."""

    writable: ClassVar[bool] = False
    uri: str  # for messages: credentials removed

    @abstractmethod
    def list_versions(self) -> list[str]:
        """Published versions, oldest first (remote stores: needs the network)."""

    @abstractmethod
    def fetch(self, version: str, digest: str | None = None) -> Path:
        """A verified local directory holding `version` (a remote one is cached first), whose
        manifest has `digest` when one is pinned."""

    @abstractmethod
    def read_manifest_check(self, version: str) -> ManifestCheck:
        """A version's manifest, its digest checked, without downloading its data (listings;
        the data files are not verified)."""

    def read_manifest(self, version: str) -> dict[str, Any]:
        """`read_manifest_check(version).manifest`."""
        return self.read_manifest_check(version).manifest

    def cached_versions(self) -> list[str]:
        """Versions available without the network."""
        return []

    def publish_dir(self, local_version_dir: Path) -> str:
        """Copy a published local snapshot into this store; refuses to overwrite a version."""
        raise SnapshotError(f"{self.uri} is a read-only snapshot store")

    def taken_versions(self) -> list[str]:
        """Version names a new version must not take: the published ones (a local store also
        counts anything else there under a version's name)."""
        return self.list_versions()

    def write_index(self, fresh: Mapping[str, str] | None = None) -> None:
        """Rewrite the store's `index.json` from its authoritative listing."""
        raise SnapshotError(f"{self.uri} is a read-only snapshot store")

    def resolve(self, version: str = "latest", digest: str | None = None) -> Path:
        """`fetch` a pinned version, or the newest for "latest" (cached newest if unreachable)."""
        if version != "latest":
            return self.fetch(version, digest)
        try:
            versions = self.list_versions()
        except StoreUnreachable as exc:
            cached = self.cached_versions()
            if not cached:
                raise StoreUnreachable(f"{exc}; no version of it is cached") from exc
            warnings.warn(
                f"snapshot store {self.uri} is unreachable ({exc}); using {cached[-1]}, the "
                "newest cached version, which may not be the newest published",
                StaleSnapshotWarning,
                stacklevel=2,
            )
            return self.fetch(cached[-1])
        if not versions:
            raise SnapshotError(f"no published snapshot in {self.uri}")
        return self.fetch(versions[-1])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.uri!r})"


class LocalStore(SnapshotStore):
    """A store directory on this machine (or a mounted share): read in place, no cache."""

    writable = True

    def __init__(self, root: Path) -> None:
        self.root = root
        self.uri = str(root)

    def list_versions(self) -> list[str]:
        return list_versions(self.root)

    def cached_versions(self) -> list[str]:
        return self.list_versions()

    def require_root(self) -> None:
        """Reading a store that does not exist is a mistake (a typo in --store), not an empty
        store; writers create it, so this is checked only where versions are read."""
        if not self.root.is_dir():
            raise SnapshotError(f"snapshot store {self.uri} does not exist or is not a directory")

    def resolve(self, version: str = "latest", digest: str | None = None) -> Path:
        """As `SnapshotStore.resolve`, but "latest" passes over versions whose manifest is
        broken (with a `BrokenSnapshotWarning`), as loading from the default stores does."""
        if version != "latest":
            return self.fetch(version, digest)
        self.require_root()
        directory = resolve_version("latest", [self.root])
        verify(directory, directory.name)
        return directory

    def fetch(self, version: str, digest: str | None = None) -> Path:
        self.require_root()
        directory = resolve_version(check_version(version), [self.root])
        verify(directory, version, digest)
        return directory

    def read_manifest_check(self, version: str) -> ManifestCheck:
        return read_manifest_check(self.root / check_version(version), version)

    def taken_versions(self) -> list[str]:
        """Every name in the store folder spelt as a version, published or not: a folder
        without a manifest (a failed copy, a stray `mkdir`) or a file under that name blocks
        it as well as a snapshot does."""
        if not self.root.is_dir():
            return []
        return sorted((e.name for e in self.root.iterdir() if is_version(e.name)), key=version_key)

    def _create_root(self) -> None:
        """The store folder, created when missing; a `SnapshotError` saying why it cannot be
        (the store path or a folder above it is a file, no permission, a read-only disk)."""
        if self.root.exists() and not self.root.is_dir():
            raise SnapshotError(f"snapshot store {self.uri} is a file, not a folder")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            blocker = next((p for p in self.root.parents if p.exists() and not p.is_dir()), None)
            reason = f"{blocker} is a file" if blocker is not None else _reason(exc)
            raise SnapshotError(f"cannot create snapshot store {self.uri}: {reason}") from None

    def publish_dir(self, local_version_dir: Path) -> str:
        version, verified = _publishable(local_version_dir)
        target = self.root / version
        if target.exists() or target.is_symlink():
            if (target / MANIFEST).is_file():
                raise SnapshotError(f"refusing to overwrite snapshot {version} in {self.uri}")
            raise SnapshotError(
                f"refusing to publish {version} in {self.uri}: {target} is there but holds "
                f"no snapshot (no {MANIFEST}); remove it to publish under that version"
            )
        self._create_root()
        try:
            scratch = Path(tempfile.mkdtemp(prefix=f".publishing-{version}-", dir=self.root))
        except OSError as exc:
            raise SnapshotError(
                f"cannot write to snapshot store {self.uri}: {_reason(exc)}"
            ) from None
        members = _members(verified)
        try:
            for name, data in members:  # manifest last, as in the remote stores
                (scratch / name).write_bytes(data)
            verify(scratch)
            for name, _ in members:
                (scratch / name).chmod(0o444)
            scratch.chmod(0o755)
            os.rename(scratch, target)  # atomic; fails if the version appeared meanwhile
        except OSError as exc:
            raise SnapshotError(
                f"could not publish {version} to {self.uri}: {_reason(exc)}"
            ) from None
        finally:
            if scratch.exists():
                _remove_tree(scratch)
        write_index(self.root, {version: verified.check.digest})
        return version

    def write_index(self, fresh: Mapping[str, str] | None = None) -> None:
        write_index(self.root, fresh)


class RemoteStore(SnapshotStore):
    """Shared logic of the network stores: verified download into the cache, ordered upload."""

    def __init__(self, uri: str, identity: str, cache_root: Path | None) -> None:
        self.uri = redact(uri)
        self.cache_dir = (cache_root or benchpress_home() / "cache") / store_id(identity)
        self._index_read: StoreIndex | None = None  # the store's index.json, once read

    # transport primitives ------------------------------------------------------------------
    @abstractmethod
    def _stream(self, key: str, limit: int) -> Iterator[bytes]:
        """Chunks of an object; raises _Missing, StoreUnreachable or SnapshotError."""

    def _put(self, key: str, source: Path | bytes, create: bool) -> None:
        raise SnapshotError(f"{self.uri} is a read-only snapshot store")

    def _exists(self, key: str) -> bool:
        raise SnapshotError(f"{self.uri} is a read-only snapshot store")

    # reading --------------------------------------------------------------------------------
    def _copy(self, key: str, sink: Any, limit: int) -> str:
        """Stream an object into `sink` under the size cap; returns its sha256."""
        digest = hashlib.sha256()
        total = 0
        deadline = time.monotonic() + DEADLINE_SECONDS
        with contextlib.closing(self._stream(key, limit)) as chunks:
            for chunk in chunks:
                total += len(chunk)
                if total > limit:
                    raise SnapshotError(f"{self.uri}: {key} is larger than {limit} bytes")
                if time.monotonic() > deadline:
                    raise StoreUnreachable(f"{self.uri}: {key} took over {DEADLINE_SECONDS:g} s")
                digest.update(chunk)
                sink.write(chunk)
        return digest.hexdigest()

    def _read(self, key: str, limit: int) -> bytes:
        sink = io.BytesIO()
        self._copy(key, sink, limit)
        return sink.getvalue()

    def _read_index(self) -> StoreIndex | None:
        """The store's index.json now (None when it has none)."""
        try:
            data = self._read(INDEX, MAX_INDEX_BYTES)
        except _Missing:
            return None
        self._index_read = parse_index(data, self.uri)
        return self._index_read

    def _indexed_digest(self, version: str) -> str | None:
        """The digest the store's index records for `version` (read again when the copy read
        earlier predates the version)."""
        index = self._index_read
        if index is None or version not in index.digests:
            index = self._read_index()
        return index.digests.get(version) if index is not None else None

    def _digest_file(self, version: str) -> bytes | None:
        """A version's digest file, or None for a legacy version that has none."""
        try:
            return self._read(f"{version}/{DIGEST_FILE}", MAX_DIGEST_BYTES)
        except _Missing:
            return None

    def cached_versions(self) -> list[str]:
        return list_versions(self.cache_dir)

    def read_manifest_check(self, version: str) -> ManifestCheck:
        check_version(version)
        if (self.cache_dir / version / MANIFEST).is_file():
            return read_manifest_check(self.cache_dir / version, version)
        try:
            data = self._read(f"{version}/{MANIFEST}", MAX_MANIFEST_BYTES)
        except _Missing:
            raise SnapshotError(f"snapshot {version} not found in {self.uri}") from None
        return self._check_remote(self._parse_manifest(data, version), version, None)[0]

    def _check_remote(
        self, manifest: dict[str, Any], version: str, pinned: str | None
    ) -> tuple[ManifestCheck, bytes | None]:
        """A remote manifest's digest against the pin, its digest file and the store's index
        (and the cache's index: a version cached once must come back the same)."""
        where = f"{self.uri}: {version}"
        recorded = self._digest_file(version)
        written = None if recorded is None else parse_digest_file(recorded, where)
        check = check_digest(manifest, where, written, self._indexed_digest(version), pinned)
        cached = read_index(self.cache_dir) if self.cache_dir.is_dir() else None
        before = cached.digests.get(version) if cached is not None else None
        if before is not None and before != check.digest:
            raise SnapshotError(
                f"snapshot {version} in {self.uri}: manifest digest {check.digest} is not the "
                f"{before} cached from this store before (changed after publishing?); nothing "
                "was cached"
            )
        return check, recorded

    def _parse_manifest(self, data: bytes, version: str) -> dict[str, Any]:
        manifest = strict_json(data, f"{self.uri}: unreadable manifest of {version}")
        check_manifest(manifest, f"{self.uri}: manifest of {version}")
        expect_version(manifest, version, self.uri)
        return manifest

    def fetch(self, version: str, digest: str | None = None) -> Path:
        target = self.cache_dir / check_version(version)
        if (target / MANIFEST).is_file():  # pinned and cached: no network at all
            try:
                cached = verify_snapshot(target, version).check
            except SnapshotError as exc:
                warnings.warn(
                    f"cached snapshot {version} at {target} failed verification ({exc}); "
                    "downloading it again",
                    StaleSnapshotWarning,
                    stacklevel=2,
                )
                _remove_tree(target)
            else:  # a wrong pin is the caller's mistake, not a broken cache: no download
                check_digest(cached.manifest, target, None, None, digest)
                return target
        return self._download(version, target, digest)

    def _download(self, version: str, target: Path, pinned: str | None) -> Path:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".fetch-{version}-", dir=self.cache_dir))
        try:
            try:
                raw = self._read(f"{version}/{MANIFEST}", MAX_MANIFEST_BYTES)
            except _Missing:
                raise SnapshotError(self._not_found(version)) from None
            manifest = self._parse_manifest(raw, version)
            check, recorded = self._check_remote(manifest, version, pinned)  # before any data
            for name in listed_files(manifest, f"{self.uri}: {version}"):
                with (scratch / name).open("wb") as sink:
                    try:
                        actual = self._copy(f"{version}/{name}", sink, MAX_FILE_BYTES)
                    except _Missing:
                        raise SnapshotError(
                            f"snapshot {version} in {self.uri}: {name} is missing"
                        ) from None
                expected = str(manifest["files"][name])
                if actual != expected:
                    raise SnapshotError(
                        f"snapshot {version} in {self.uri}: {name} has sha256 {actual[:12]}..., "
                        f"manifest says {expected[:12]}... (corrupted or modified in the store); "
                        "nothing was cached"
                    )
            if recorded is not None:
                (scratch / DIGEST_FILE).write_bytes(recorded)
            (scratch / MANIFEST).write_bytes(raw)  # last: a cache dir with a manifest is whole
            verify(scratch, digest=check.digest)
            for path in scratch.iterdir():
                path.chmod(0o444)
            scratch.chmod(0o755)
            self._describe_cache()
            if target.exists() and not (target / MANIFEST).is_file():
                _remove_tree(target)  # an incomplete directory left by hand; never by us
            try:
                os.rename(scratch, target)
            except OSError:
                if not (target / MANIFEST).is_file():  # not a concurrent fetch that won
                    raise
                verify(target, version, check.digest)
            write_index(self.cache_dir, {version: check.digest})  # what later loads check
            return target
        finally:
            if scratch.exists():
                _remove_tree(scratch)

    def _not_found(self, version: str) -> str:
        try:
            known: object = self.list_versions() or "none"
        except SnapshotError:
            known = "unknown"
        return f"snapshot {version} not found in {self.uri}; published versions: {known}"

    def _describe_cache(self) -> None:
        # which store a cache directory belongs to, for people looking at $BENCHPRESS_HOME
        note = self.cache_dir / "store.json"
        if not note.exists():
            note.write_text(json.dumps({"uri": self.uri}) + "\n", "utf-8")

    # writing --------------------------------------------------------------------------------
    def publish_dir(self, local_version_dir: Path) -> str:
        if not self.writable:
            raise SnapshotError(f"{self.uri} is a read-only snapshot store")
        version, verified = _publishable(local_version_dir)
        if self._exists(f"{version}/{MANIFEST}"):
            raise SnapshotError(f"refusing to overwrite snapshot {version} in {self.uri}")
        # data first, then the digest file: readers only trust a version with a manifest
        *members, (_, manifest_bytes) = _members(verified)
        for name, data in members:
            self._put_data(f"{version}/{name}", data)
        try:
            self._put(f"{version}/{MANIFEST}", manifest_bytes, create=True)
        except _Exists:
            raise SnapshotError(
                f"refusing to overwrite snapshot {version} in {self.uri} (published meanwhile)"
            ) from None
        self.write_index({version: verified.check.digest})
        return version

    def _put_data(self, key: str, data: bytes) -> None:
        """Create-only upload; an identical leftover of an interrupted publish is accepted."""
        try:
            self._put(key, data, create=True)
        except _Exists:
            remote = hashlib.sha256(self._read(key, MAX_FILE_BYTES)).hexdigest()
            if remote != hashlib.sha256(data).hexdigest():
                raise SnapshotError(
                    f"{self.uri}: {key} already exists with different content and no manifest; "
                    "another publisher is using this version, or remove the leftover"
                ) from None

    def write_index(self, fresh: Mapping[str, str] | None = None) -> None:
        if not self.writable:
            raise SnapshotError(f"{self.uri} is a read-only snapshot store")
        versions = self.list_versions()
        previous = self._read_index()
        digests = _index_digests(
            versions,
            previous.digests if previous is not None else {},
            fresh,
            lambda v: self.read_manifest_check(v).digest,
        )
        self._put(INDEX, _index_bytes(versions, digests), create=False)
        self._index_read = StoreIndex(versions, digests)


# ------------------------------------------------------------------------------------------ http
class _NoDowngrade(urllib.request.HTTPRedirectHandler):
    """Follow redirects only to http(s), and never from https to plain http."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        old, new = urlsplit(req.full_url).scheme, urlsplit(newurl).scheme
        if new not in ("http", "https") or (old == "https" and new != "https"):
            raise urllib.error.HTTPError(newurl, code, f"refused redirect to {newurl}", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HttpStore(RemoteStore):
    """A store directory served as static files (https; http only on loopback). Read-only."""

    def __init__(self, base_url: str, cache_root: Path | None = None) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SnapshotError(f"not an http(s) store URL: {redact(base_url)!r}")
        if parts.query or parts.fragment:
            raise SnapshotError(f"store URL must not have a query or fragment: {redact(base_url)}")
        insecure_ok = os.environ.get(ALLOW_HTTP_ENV) == "1"
        if parts.scheme == "http" and not (_is_loopback(parts.hostname) or insecure_ok):
            raise SnapshotError(
                f"refusing plain http for {redact(base_url)}: use https (http is allowed on "
                f"loopback, or anywhere with {ALLOW_HTTP_ENV}=1)"
            )
        self.base = base_url.rstrip("/") + "/"
        super().__init__(base_url, identity=self.base, cache_root=cache_root)
        self._opener = urllib.request.build_opener(_NoDowngrade())

    def _stream(self, key: str, limit: int) -> Iterator[bytes]:
        url = self.base + quote(key)
        shown = redact(url)
        request = urllib.request.Request(
            url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
        )
        for attempt in range(RETRIES + 1):
            try:
                response = self._opener.open(request, timeout=TIMEOUT_SECONDS)
                break
            except urllib.error.HTTPError as exc:
                exc.close()
                if exc.code in (404, 410):
                    raise _Missing(f"{shown}: HTTP {exc.code}") from None
                if exc.code < 500 and exc.code != 429:
                    raise SnapshotError(f"{shown}: HTTP {exc.code} {exc.reason}") from None
                failure = f"HTTP {exc.code}"
            except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, ssl.SSLCertVerificationError):  # a verdict, not an outage
                    raise SnapshotError(
                        f"{shown}: TLS certificate not trusted ({reason})"
                    ) from None
                failure = str(reason)
            if attempt == RETRIES:
                raise StoreUnreachable(f"{shown}: {failure}")
            time.sleep(BACKOFF_SECONDS * 2**attempt)
        with response:
            declared = response.headers.get("Content-Length")
            if declared is not None and declared.isdigit() and int(declared) > limit:
                raise SnapshotError(f"{shown}: {declared} bytes is over the {limit}-byte cap")
            received = 0
            try:
                while chunk := response.read(CHUNK_BYTES):
                    received += len(chunk)
                    yield chunk
            except (OSError, http.client.HTTPException) as exc:
                raise StoreUnreachable(f"{shown}: download interrupted ({exc})") from None
            if declared is not None and declared.isdigit() and received != int(declared):
                raise StoreUnreachable(f"{shown}: truncated ({received} of {declared} bytes)")

    def list_versions(self) -> list[str]:
        try:
            data = self._read(INDEX, MAX_INDEX_BYTES)
        except _Missing:
            raise SnapshotError(
                f"{self.uri} has no {INDEX}: not a snapshot store, or its publisher predates "
                "the index (run warehouse.remote.sync_store or "
                "predictor.snapshots.stores.write_index)"
            ) from None
        self._index_read = parse_index(data, self.uri)
        return self._index_read.versions


# -------------------------------------------------------------------------------------------- s3
class StoreExtraMissing(SnapshotError, MissingExtraError):
    """The store's extra is not installed: a SnapshotError to the code that reads stores, a
    missing extra to the CLI (one line, exit 2)."""


class S3Store(RemoteStore):
    """`s3://bucket/prefix` through obstore (optional extra `s3`). Credentials, region and a
    custom endpoint (`AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`, e.g. MinIO) come from the
    standard AWS environment variables; a custom endpoint is part of the cache identity."""

    writable = True

    def __init__(self, uri: str, cache_root: Path | None = None) -> None:
        try:
            import obstore  # deferred: the optional `s3` dependency, said if missing
            from obstore.store import S3Store as ObstoreS3  # deferred: as obstore
        except ImportError:
            raise StoreExtraMissing(
                "s3:// snapshot stores need the optional dependency obstore: "
                "pip install 'benchpress-llm[s3]'"
            ) from None
        parts = urlsplit(uri)
        bucket, prefix = parts.netloc, unquote(parts.path).strip("/")
        if not bucket or parts.query or parts.fragment:
            raise SnapshotError(f"expected s3://bucket/prefix, got {uri!r}")
        if any(segment in ("", ".", "..") for segment in prefix.split("/") if prefix):
            raise SnapshotError(f"invalid prefix in {uri!r}")
        endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        canonical = f"s3://{bucket}/{prefix}".rstrip("/")
        super().__init__(
            canonical,
            identity=canonical + (f" endpoint={endpoint}" if endpoint else ""),
            cache_root=cache_root,
        )
        client: dict[str, Any] = {
            "connect_timeout": f"{int(TIMEOUT_SECONDS)}s",
            "read_timeout": f"{int(TIMEOUT_SECONDS)}s",
            "timeout": f"{int(DEADLINE_SECONDS)}s",
        }
        config: dict[str, Any] = {}
        if endpoint:
            config["endpoint"] = endpoint
            client["allow_http"] = endpoint.startswith("http://")
        retry = {
            "max_retries": RETRIES,
            "retry_timeout": timedelta(seconds=TIMEOUT_SECONDS * (RETRIES + 1)),
            "backoff": {
                "init_backoff": timedelta(seconds=BACKOFF_SECONDS),
                "max_backoff": timedelta(seconds=2),
                "base": 2,
            },
        }
        self._obs = obstore
        self._store = ObstoreS3(
            bucket,
            prefix=prefix or None,
            config=config,  # type: ignore[arg-type]
            client_options=client,  # type: ignore[arg-type]
            retry_config=retry,  # type: ignore[arg-type]
        )

    def _error(self, key: str, exc: Exception) -> SnapshotError:
        from obstore import exceptions as obx  # deferred: the optional `s3` dependency

        where = f"{self.uri}/{key}" if key else self.uri
        first_line = (str(exc).splitlines() or [repr(exc)])[0].strip("'\" ")
        summary = f"{where}: {first_line}"
        if isinstance(exc, FileNotFoundError | obx.NotFoundError):
            return _Missing(summary)
        if isinstance(exc, obx.AlreadyExistsError | obx.PreconditionError):
            return _Exists(summary)
        if isinstance(exc, obx.PermissionDeniedError | obx.UnauthenticatedError):
            return SnapshotError(f"access denied: {summary}")
        if isinstance(exc, obx.GenericError | OSError | TimeoutError):
            return StoreUnreachable(summary)  # connection, timeout, 5xx after retries
        return SnapshotError(summary)

    def _stream(self, key: str, limit: int) -> Iterator[bytes]:
        try:
            result = self._obs.get(self._store, key)
        except Exception as exc:  # obstore raises its own hierarchy; mapped just below
            raise self._error(key, exc) from None
        if result.meta["size"] > limit:
            raise SnapshotError(f"{self.uri}/{key}: {result.meta['size']} bytes is over the cap")
        try:
            for chunk in result.stream(min_chunk_size=CHUNK_BYTES):
                yield bytes(chunk)
        except Exception as exc:
            raise self._error(key, exc) from None

    def _exists(self, key: str) -> bool:
        try:
            self._obs.head(self._store, key)
        except Exception as exc:
            error = self._error(key, exc)
            if isinstance(error, _Missing):
                return False
            raise error from None
        return True

    def _put(self, key: str, source: Path | bytes, create: bool) -> None:
        try:
            self._obs.put(self._store, key, source, mode="create" if create else "overwrite")
        except Exception as exc:
            raise self._error(key, exc) from None

    def list_versions(self) -> list[str]:
        """From the object listing (authoritative: a version is its manifest), not the index."""
        found = []
        try:
            for batch in self._obs.list(self._store):
                for meta in batch:
                    version, _, name = str(meta["path"]).partition("/")
                    if name == MANIFEST and is_version(version):
                        found.append(version)
        except Exception as exc:
            raise self._error("", exc) from None
        return sorted(found, key=version_key)


def open_store(uri: str | Path, cache_root: Path | None = None) -> SnapshotStore:
    """The store behind a path or URI: local path / file://, s3://bucket/prefix, https://base.

    `cache_root` (default `$BENCHPRESS_HOME/cache`) is where remote versions are cached."""
    if isinstance(uri, Path):
        return LocalStore(uri)
    scheme = urlsplit(uri).scheme.lower() if "://" in uri else ""
    if scheme == "":
        return LocalStore(Path(uri).expanduser())
    if scheme == "file":
        return LocalStore(Path(unquote(urlsplit(uri).path)))
    if scheme in ("http", "https"):
        return HttpStore(uri, cache_root)
    if scheme == "s3":
        return S3Store(uri, cache_root)
    raise SnapshotError(
        f"unsupported snapshot store {redact(uri)!r}: use a path, s3:// or https://"
    )


__all__ = [
    "INDEX",
    "HttpStore",
    "LocalStore",
    "RemoteStore",
    "S3Store",
    "SnapshotStore",
    "StaleSnapshotWarning",
    "StoreUnreachable",
    "check_version",
    "open_store",
    "write_index",
]
