"""Read and verify published matrix snapshots (the layout is `predictor.snapshots.layout`;
writers live in `warehouse.snapshots`). A snapshot is a directory `<store>/<version>/` holding
its data files, a `manifest.json` that lists each file's sha256 and the content hash over all of
them, and a `digest` file: the manifest's own digest (sha256 over its canonical JSON), which the
store's `index.json` records too and which consumers pin (`2026.11.30.2@sha256:<64 hex>`).

Every file is read once, through a descriptor opened relative to the version folder without
following symlinks, and the bytes that were hashed are the bytes that are parsed: a file
swapped between the check and the read cannot slip in, and a symlink or a special file is
refused before anything is read from it."""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import re
import stat
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import polars as pl

from predictor.snapshots.layout import (
    DATA_FILES,
    DIGEST_FILE,
    FIT,
    FORMAT_VERSION,
    INDEX,
    MANIFEST,
    OPTIONAL_FILES,
    OPTIONAL_TABLES,
    TABLES,
    table_file,
)

# versions' spelling and a store's listing live apart, without Polars (`benchpress --version`);
# imported here too, where their users have always found them
from predictor.snapshots.versions import (
    VERSION_PATTERN,  # noqa: F401 (re-exported)
    SnapshotError,
    canonical_spelling,  # noqa: F401 (re-exported)
    check_misspelled_version,  # noqa: F401 (re-exported)
    check_version,
    is_version,
    list_versions,
    version_key,
)
from predictor.util.paths import bundled_snapshot_dir, snapshot_store_dir

MAX_FILE_BYTES = 512 * 1024 * 1024  # one data file; the bundled snapshot's largest is ~2 MB
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_INDEX_BYTES = 8 * 1024 * 1024
MAX_DIGEST_BYTES = 1024
DIGEST_PATTERN = re.compile(r"sha256:[0-9a-f]{64}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


class BrokenSnapshotWarning(UserWarning):
    """A version was passed over (e.g. resolving "latest") because its manifest is broken."""


# -------------------------------------------------------------------------------- digests
def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def content_hash(file_hashes: Mapping[str, str]) -> str:
    """One hash for the snapshot's content: independent of version, time and file order."""
    lines = "".join(f"{name}:{file_hashes[name]}\n" for name in sorted(file_hashes))
    return hashlib.sha256(lines.encode()).hexdigest()


# what a fit computes from the data: their last bits follow the CPU's BLAS kernels and thread
# count, so they do not name the content (`input_identity`)
FIT_PRODUCTS = frozenset({"fit.json", "residuals.parquet"})


def input_identity(manifest: Mapping[str, Any], method: str, settings: str = "") -> str:
    """What a snapshot was computed from: its data files (cells, side information, names),
    the fit's parameters, the format, the method with its state version and every
    hyperparameter of the method (`settings`, see `method_settings`). Two machines fitting the
    same data agree on it, whatever their BLAS does to the fit's last bits, so a refresh that
    reproduces a published snapshot's inputs publishes nothing new, and one whose method
    settings changed (another default, say) fits and publishes."""
    files = manifest.get("files") or {}
    lines = [f"{name}:{files[name]}" for name in sorted(files) if name not in FIT_PRODUCTS]
    params = json.dumps(manifest.get("fit_params") or {}, sort_keys=True, separators=(",", ":"))
    lines += [f"fit_params:{params}", f"format:{manifest.get('format_version')}"]
    lines.append(f"method:{method}")
    lines.append(f"settings:{settings}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def method_settings(params: Mapping[str, Any]) -> str:
    """A method's hyperparameters (`Completer.get_params()`, what a fit state records under
    "params") as canonical JSON, for `input_identity`."""
    return json.dumps(dict(params), sort_keys=True, separators=(",", ":"))


def _fit_state(directory: Path) -> dict[str, Any] | None:
    try:
        state = json.loads((directory / "fit.json").read_text(encoding="utf-8"))["state"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return state if isinstance(state, dict) else None


def _method_of(state: dict[str, Any] | None) -> str:
    try:
        return "" if state is None else f"{state['method']}@{state['state_version']}"
    except KeyError:
        return ""


def _settings_of(state: dict[str, Any] | None) -> str:
    params = (state or {}).get("params")
    return method_settings(params) if isinstance(params, dict) else ""


def fitted_method(directory: Path) -> str:
    """`method@state_version` of a snapshot's fit ('' when it has no readable fit.json)."""
    return _method_of(_fit_state(directory))


def fitted_settings(directory: Path) -> str:
    """`method_settings` of a snapshot's fit ('' when it records none)."""
    return _settings_of(_fit_state(directory))


def snapshot_identity(directory: Path) -> str:
    """`input_identity` of a snapshot folder (staged or published); its fit.json read once."""
    state = _fit_state(directory)
    return input_identity(read_manifest(directory), _method_of(state), _settings_of(state))


def canonical_manifest(manifest: Mapping[str, Any]) -> bytes:
    """The bytes a manifest's digest is taken over: Python's `json.dumps(manifest,
    sort_keys=True, separators=(",", ":"), ensure_ascii=True)`, encoded as ASCII. Independent of
    how the file is indented, so any consumer can recompute it from the parsed manifest."""
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text.encode("ascii")


def manifest_digest(manifest: Mapping[str, Any]) -> str:
    """`sha256:<64 hex>` over the canonical manifest: what a version is pinned by."""
    return "sha256:" + hashlib.sha256(canonical_manifest(manifest)).hexdigest()


def digest_file_bytes(digest: str) -> bytes:
    """The content of a version's `digest` file."""
    return f"{digest}\n".encode("ascii")


def parse_digest_file(data: bytes, where: object) -> str:
    """The digest a `digest` file records (`sha256:<64 hex>`, surrounding whitespace allowed)."""
    try:
        text = data.decode("ascii").strip()
    except UnicodeDecodeError:
        text = ""
    if not DIGEST_PATTERN.fullmatch(text):
        raise SnapshotError(f"{where}: {DIGEST_FILE} must hold sha256:<64 hex>, got {data[:80]!r}")
    return text


def parse_pin(reference: str) -> tuple[str, str | None]:
    """`2026.11.30.2@sha256:<64 hex>` -> (version, digest); anything without `@` -> (it, None).

    Only the full digest pins: a prefix could match another manifest. The version part is
    checked where it is resolved."""
    if not isinstance(reference, str) or "@" not in reference:
        return reference, None
    name, _, digest = reference.partition("@")
    if not DIGEST_PATTERN.fullmatch(digest):
        raise SnapshotError(
            f"not a snapshot digest: {digest!r} in {reference!r} (pin with the full digest, "
            "sha256: and 64 lowercase hex digits, as `benchpress snapshots show` prints it; "
            "a prefix is not accepted)"
        )
    if name == "latest":
        raise SnapshotError(
            f"{reference!r}: a digest pins a version, not latest (e.g. 2026.11.30.2@sha256:...)"
        )
    return name, digest


# ------------------------------------------------------------------- reading files safely
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FILE_FLAGS = (
    os.O_RDONLY
    | _NOFOLLOW
    | getattr(os, "O_NONBLOCK", 0)  # a named pipe must not block the open
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_RELATIVE = (
    os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd and os.listdir in os.supports_fd
)
_KINDS = (
    (stat.S_ISLNK, "symbolic link"),
    (stat.S_ISDIR, "directory"),
    (stat.S_ISFIFO, "named pipe"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "special file")


def _refuse_unless_regular(info: os.stat_result, name: str, where: object, limit: int) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise SnapshotError(
            f"{where}: {name} is a symbolic link; refused without reading it (snapshot files "
            "must be regular files inside their folder)"
        )
    if not stat.S_ISREG(info.st_mode):
        raise SnapshotError(
            f"{where}: {name} is a {_kind(info.st_mode)}, not a regular file; refused without "
            "reading it"
        )
    if info.st_size > limit:
        raise SnapshotError(f"{where}: {name} is {info.st_size} bytes, over the {limit}-byte cap")


def _read_member(name: str, folder: Path, dir_fd: int | None, limit: int) -> bytes | None:
    """The bytes of regular file `name` in `folder` (None if absent), read once through one
    descriptor: a symlink (even one swapped in after the look) or a special file is refused."""
    target = name if dir_fd is not None else os.path.join(folder, name)
    try:
        _refuse_unless_regular(
            os.stat(target, dir_fd=dir_fd, follow_symlinks=False), name, folder, limit
        )
        fd = os.open(target, _FILE_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a symlink swapped in
            raise SnapshotError(
                f"{folder}: {name} is a symbolic link; refused without reading it"
            ) from None
        raise SnapshotError(f"{folder}: {name} cannot be read ({exc.strerror})") from None
    try:
        _refuse_unless_regular(os.fstat(fd), name, folder, limit)  # what was opened
        chunks, total = [], 0
        while total <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - total))):
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise SnapshotError(f"{folder}: {name} cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    if total > limit:
        raise SnapshotError(f"{folder}: {name} grew over the {limit}-byte cap while being read")
    return b"".join(chunks)


def read_regular_file(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes (None if absent); a symlink or special file is refused."""
    return _read_member(path.name, path.parent, None, limit)


class _Folder:
    """A snapshot folder opened once: it must be a real directory (not a symlink), and every
    member is read relative to that open directory, so swapping the folder cannot redirect
    reads half way."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            raise SnapshotError(f"{path}: no such snapshot folder") from None
        except OSError as exc:
            raise SnapshotError(
                f"{path}: snapshot folder cannot be read ({exc.strerror})"
            ) from None
        if stat.S_ISLNK(info.st_mode):
            raise SnapshotError(
                f"{path}: the snapshot folder is a symbolic link; refused (a version folder "
                "must be a real directory inside its store)"
            )
        if not stat.S_ISDIR(info.st_mode):
            raise SnapshotError(f"{path}: not a snapshot folder (a {_kind(info.st_mode)})")
        self.fd: int | None = None
        if _RELATIVE:
            try:
                self.fd = os.open(path, _DIR_FLAGS)
            except OSError as exc:
                raise SnapshotError(
                    f"{path}: snapshot folder cannot be opened ({exc.strerror}; swapped for a "
                    "symbolic link?)"
                ) from None

    def names(self) -> list[str]:
        return sorted(os.listdir(self.fd if self.fd is not None else self.path))

    def read(self, name: str, limit: int) -> bytes | None:
        return _read_member(name, self.path, self.fd, limit)

    def __enter__(self) -> _Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique: parsers disagree on which of two copies wins."""
    body: dict[str, Any] = {}
    for key, value in pairs:
        if key in body:
            raise _DuplicateKey(f"key {key!r} appears twice")
        body[key] = value
    return body


def strict_json(data: bytes, failure: str) -> Any:
    """JSON from UTF-8 bytes with unique keys; any failure is a SnapshotError `failure (why)`."""
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError) as exc:  # JSON, UTF-8, duplicate keys, huge ints
        raise SnapshotError(f"{failure} ({exc})") from None


# ------------------------------------------------------------------------- store listing
def default_stores() -> list[Path]:
    """Where `load` looks: the local store under BENCHPRESS_HOME, then the bundled one."""
    return [snapshot_store_dir(), bundled_snapshot_dir()]


@dataclass(frozen=True)
class StoreIndex:
    """A store's `index.json`: its versions and the digest recorded for each (older indexes
    have no digests)."""

    versions: list[str]
    digests: dict[str, str]


def parse_index(data: bytes, where: str) -> StoreIndex:
    body = strict_json(data, f"{where}: unreadable {INDEX}")
    versions = body.get("versions") if isinstance(body, dict) else None
    if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
        raise SnapshotError(f'{where}: {INDEX} must be {{"versions": ["2026.11.30.1", ...]}}')
    bad = [v for v in versions if not is_version(v)]
    if bad:
        raise SnapshotError(f"{where}: {INDEX} lists invalid versions {bad[:3]}")
    digests = body.get("digests", {})
    if not isinstance(digests, dict) or not all(
        isinstance(d, str) and DIGEST_PATTERN.fullmatch(d) for d in digests.values()
    ):
        raise SnapshotError(f"{where}: {INDEX} digests must map versions to sha256:<64 hex>")
    strangers = sorted(set(digests) - set(versions))
    if strangers:
        raise SnapshotError(
            f"{where}: {INDEX} has digests of versions it does not list {strangers[:3]}"
        )
    return StoreIndex(sorted(set(versions), key=version_key), dict(digests))


def read_index(store: Path) -> StoreIndex | None:
    """The index at a local store's root, or None when it has none (the bundled snapshots,
    stores published before the index existed)."""
    data = read_regular_file(store / INDEX, MAX_INDEX_BYTES)
    return None if data is None else parse_index(data, str(store))


def resolve_version(version: str, stores: list[Path]) -> Path:
    """The directory of `version` (or the newest for "latest") in the first store that has it.

    A pinned version whose manifest is broken or names another version is an error; "latest"
    passes over such versions with a `BrokenSnapshotWarning`, so one bad folder in the local
    store does not stop every default command."""
    if version == "latest":
        return _newest_valid(stores)
    check_version(version)  # before it touches a path
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


# ------------------------------------------------------------------------------ manifests
@dataclass(frozen=True)
class Snapshot:
    """A loaded, verified snapshot: manifest plus its tables (`snapshot_layout.TABLES`, `FIT`,
    `OPTIONAL_TABLES`)."""

    path: Path
    manifest: dict[str, Any]
    cells: pl.DataFrame
    models: pl.DataFrame
    benchmarks: pl.DataFrame
    aliases: pl.DataFrame
    conflicts: pl.DataFrame
    fit: dict[str, Any]
    residuals: pl.DataFrame | None = None  # leave-one-out check of every fitted cell
    digest: str = ""  # sha256:<64 hex> of the manifest: pin with f"{version}@{digest}"
    digest_note: str = ""  # "" when a digest file records it; else why not ("legacy, ...")

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
    if not all(isinstance(h, str) and _HEX64.fullmatch(h) for h in manifest["files"].values()):
        raise SnapshotError(
            f"{where}: manifest file hashes must be strings of 64 lowercase hex digits"
        )
    if not isinstance(manifest.get("content_hash"), str):
        raise SnapshotError(f"{where}: manifest has no content_hash")
    if not _HEX64.fullmatch(manifest["content_hash"]):
        raise SnapshotError(f"{where}: manifest content_hash must be 64 lowercase hex digits")
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


def _label(manifest: dict[str, Any], where: object) -> str:
    version = manifest.get("version")
    return f"snapshot {version}" if isinstance(version, str) else str(where)


@dataclass(frozen=True)
class ManifestCheck:
    """A manifest whose digest matched everything that records it."""

    manifest: dict[str, Any]
    digest: str  # computed over the canonical manifest
    in_digest_file: bool  # False: a legacy snapshot, published before digest files
    in_index: bool  # the store's index.json records it

    @property
    def note(self) -> str:
        """Empty normally; for a legacy snapshot, what its digest was checked against."""
        if self.in_digest_file:
            return ""
        if self.in_index:
            return "legacy, no digest file; the store index records its digest"
        return "legacy, no recorded digest"


def check_digest(
    manifest: dict[str, Any],
    where: object,
    digest_file: str | None,
    indexed: str | None,
    pinned: str | None,
) -> ManifestCheck:
    """The manifest's digest against the pin, its digest file and the store index (each when
    given): any edit of any manifest field (counts, quality, parent, a file hash) shows here."""
    digest = manifest_digest(manifest)
    label = _label(manifest, where)
    if pinned is not None and pinned != digest:
        raise SnapshotError(
            f"{label}: expected digest {pinned}, found {digest} (not the manifest that was pinned)"
        )
    if digest_file is not None and digest_file != digest:
        raise SnapshotError(
            f"{label}: {MANIFEST} has digest {digest}, its {DIGEST_FILE} file records "
            f"{digest_file} (manifest changed after publishing?)"
        )
    if indexed is not None and indexed != digest:
        raise SnapshotError(
            f"{label}: {MANIFEST} has digest {digest}, the store's {INDEX} records {indexed} "
            "(manifest changed after publishing?)"
        )
    return ManifestCheck(manifest, digest, digest_file is not None, indexed is not None)


def _manifest_in(
    folder: _Folder, version: str | None, pinned: str | None
) -> tuple[ManifestCheck, bytes, bytes | None]:
    """(check, manifest bytes, digest file bytes) of an open folder. With `version` (a store's
    folder), the manifest must describe it and match the digest the store's index records."""
    path = folder.path / MANIFEST
    raw = folder.read(MANIFEST, MAX_MANIFEST_BYTES)
    if raw is None:
        raise SnapshotError(f"{path}: unreadable manifest (no such file)")
    manifest = check_manifest(strict_json(raw, f"{path}: unreadable manifest"), path)
    recorded = folder.read(DIGEST_FILE, MAX_DIGEST_BYTES)
    written = None if recorded is None else parse_digest_file(recorded, folder.path)
    indexed = None
    if version is not None:
        expect_version(manifest, version, folder.path.parent)
        index = read_index(folder.path.parent)
        indexed = index.digests.get(version) if index is not None else None
    return check_digest(manifest, folder.path, written, indexed, pinned), raw, recorded


def read_manifest_check(
    directory: Path, version: str | None = None, pinned: str | None = None
) -> ManifestCheck:
    """The manifest of a snapshot directory with its digest checked (see `_manifest_in`)."""
    with _Folder(directory) as folder:
        return _manifest_in(folder, version, pinned)[0]


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of a snapshot directory (published or staged), checked for shape and
    against its digest file: a hand-made, truncated or edited file is a SnapshotError naming
    it, never an AttributeError nor a silently different figure."""
    return read_manifest_check(directory).manifest


def read_version_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of a published version's folder, which must describe that version and
    match the digest its store's index records."""
    return read_manifest_check(directory, directory.name).manifest


# -------------------------------------------------------------------------------- verify
@dataclass(frozen=True)
class VerifiedSnapshot:
    """Everything a snapshot folder held, read once and checked: what loading parses and
    publishing copies, byte for byte."""

    check: ManifestCheck
    manifest_bytes: bytes
    digest_file_bytes: bytes | None
    data: dict[str, bytes]  # every listed file, exactly the bytes that were hashed


def verify_snapshot(
    directory: Path, version: str | None = None, digest: str | None = None
) -> VerifiedSnapshot:
    """Read and check a whole snapshot folder; raise on any difference (tampering).

    `version`: the version the folder must hold (a store's folder name; its store's index is
    consulted); staged and scratch directories have none. `digest`: a pin the manifest must
    match. The folder may hold nothing but its listed files, the manifest and the digest file,
    none of them a symlink."""
    with _Folder(directory) as folder:
        check, raw, recorded = _manifest_in(folder, version, digest)
        manifest = check.manifest
        label = _label(manifest, directory)
        names = listed_files(manifest, directory)
        unlisted = sorted(set(folder.names()) - {*names, MANIFEST, DIGEST_FILE})
        if unlisted:
            raise SnapshotError(
                f"{label}: {directory} holds files its manifest does not list: {unlisted} (a "
                f"version folder holds only its listed files, {MANIFEST} and {DIGEST_FILE})"
            )
        hashes: dict[str, str] = manifest["files"]
        computed = content_hash(hashes)
        if computed != manifest["content_hash"]:
            raise SnapshotError(
                f"{label}: content_hash {manifest['content_hash']} in {MANIFEST} is not the "
                f"hash over its file hashes, {computed}"
            )
        data: dict[str, bytes] = {}
        for name in names:
            body = folder.read(name, MAX_FILE_BYTES)
            if body is None:
                raise SnapshotError(f"{directory}: missing {name}")
            actual = hashlib.sha256(body).hexdigest()
            if actual != hashes[name]:
                raise SnapshotError(
                    f"{label}: {name} has sha256 {actual[:12]}..., manifest says "
                    f"{hashes[name][:12]}... (modified after publishing?)"
                )
            data[name] = body
    return VerifiedSnapshot(check, raw, recorded, data)


def verify(
    directory: Path, version: str | None = None, digest: str | None = None
) -> dict[str, Any]:
    """`verify_snapshot`, returning the verified manifest."""
    return verify_snapshot(directory, version, digest).check.manifest


# --------------------------------------------------------------------------------- load
T = TypeVar("T")
_FATAL = (KeyboardInterrupt, SystemExit, GeneratorExit)


def _parsed(name: str, data: bytes, parse: Callable[[bytes], T], label: str) -> T:
    """`parse(data)`; any failure, including a Rust parser's panic (pyo3's PanicException is
    a BaseException that `except Exception` misses), is a SnapshotError naming the file."""
    try:
        return parse(data)
    except _FATAL:
        raise
    except BaseException as exc:  # noqa: BLE001 (see the docstring)
        detail = (str(exc).strip().splitlines() or [""])[0][:200]
        raise SnapshotError(
            f"{label}: {name} cannot be parsed ({type(exc).__name__}: {detail})"
        ) from None


def _parquet(data: bytes) -> pl.DataFrame:
    return pl.read_parquet(io.BytesIO(data))


def _json_object(data: bytes) -> dict[str, Any]:
    body = json.loads(data.decode("utf-8"))
    if not isinstance(body, dict):
        raise ValueError(f"expected a JSON object, got {type(body).__name__}")
    return body


def load_snapshot(
    directory: Path, version: str | None = None, digest: str | None = None
) -> Snapshot:
    """A verified snapshot, parsed from exactly the bytes that were verified (see
    `verify_snapshot` for `version` and `digest`)."""
    verified = verify_snapshot(directory, version, digest)
    manifest, data = verified.check.manifest, verified.data
    label = _label(manifest, directory)

    def table(name: str) -> pl.DataFrame | None:
        file = table_file(name)
        return _parsed(file, data[file], _parquet, label) if file in data else None

    fit = table_file(FIT)
    return Snapshot(
        path=directory,
        manifest=manifest,
        **{name: table(name) for name in (*TABLES, *OPTIONAL_TABLES)},
        fit=_parsed(fit, data[fit], _json_object, label),
        digest=verified.check.digest,
        digest_note=verified.check.note,
    )
