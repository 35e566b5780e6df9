"""Write, stage and publish immutable snapshots (layout: predictor.snapshots.layout;
verification: predictor.snapshots.reader).

Staging writes the data files to a directory named by their content hash; publishing copies a
staged, checked directory into the store under a new calendar version, atomically (write to a
temporary name, then rename), refusing to overwrite and publishing nothing when the content
equals the newest published snapshot. Every manifest is written with its `digest` file, and the
store's index records the digest of each version published there. The publish gate's records
(which run staged what, and each blocking check's verdict on it) are kept in the warehouse by
the functions at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from predictor.snapshots.layout import DIGEST_FILE, MANIFEST, draft_manifest, published_manifest
from predictor.snapshots.reader import (
    SnapshotError,
    content_hash,
    list_versions,
    listed_files,
    manifest_digest,
    read_manifest,
    snapshot_identity,
    verify,
    version_key,
)
from predictor.snapshots.stores import write_index
from predictor.snapshots.writer import (
    SnapshotTables,
    next_version,
    write_manifest,
    write_tables,
)
from predictor.util.paths import bundled_snapshot_dir
from warehouse.db import transaction
from warehouse.scores import current_parses

if TYPE_CHECKING:
    import duckdb


def stage(tables: SnapshotTables, staging_root: Path, facts: dict[str, Any]) -> tuple[str, Path]:
    """Write tables to `staging_root/<content_hash>/` with a draft manifest (no version yet)."""
    scratch = staging_root / f".tmp-{os.getpid()}-{datetime.now(UTC).timestamp():.0f}"
    if scratch.exists():
        shutil.rmtree(scratch)
    hashes = write_tables(tables, scratch)
    digest = content_hash(hashes)
    write_manifest(scratch, draft_manifest(hashes, digest, facts))
    target = staging_root / digest
    if target.exists():
        shutil.rmtree(scratch)
    else:
        os.replace(scratch, target)
    return digest, target


# what a staged (draft) manifest holds besides its files: `stage` and `restage` write these
DRAFT_FACTS = ("counts", "fit_params", "quality")


def latest_built_from(store: Path, identity: str) -> str | None:
    """The newest version published in `store` when it was built from the inputs `identity`
    (what `publish` would find unchanged); None otherwise, or when the store is empty."""
    versions = list_versions(store) if store.is_dir() else []
    if not versions:
        return None
    try:
        same = snapshot_identity(store / versions[-1]) == identity
    except SnapshotError:  # an unreadable latest: build afresh, `publish` says what is wrong
        return None
    return versions[-1] if same else None


def restage(version_dir: Path, staging_root: Path) -> tuple[str, Path]:
    """Stage a published snapshot again, its files as published under a draft manifest (no
    version): what a run whose inputs equal that snapshot's stages instead of refitting, so the
    publish gate judges and `publish` finds exactly that content. Returns (content hash, path)."""
    manifest = verify(version_dir)
    digest = str(manifest["content_hash"])
    target = staging_root / digest
    if target.is_dir():
        with contextlib.suppress(SnapshotError):
            verify(target)
            return digest, target
        shutil.rmtree(target)  # a damaged earlier staging of this content: stage it anew
    staging_root.mkdir(parents=True, exist_ok=True)
    scratch = staging_root / f".tmp-{os.getpid()}-{datetime.now(UTC).timestamp():.0f}"
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir()
    for name in listed_files(manifest, version_dir):
        shutil.copyfile(version_dir / name, scratch / name)
    facts = {name: manifest[name] for name in DRAFT_FACTS if name in manifest}
    write_manifest(scratch, draft_manifest(manifest["files"], digest, facts))
    verify(scratch)
    os.replace(scratch, target)
    return digest, target


def _identities_elsewhere(stores: Sequence[Path]) -> dict[str, tuple[str, Path]]:
    """version -> (input identity, folder) in the other stores a consumer loads from
    (unreadable: such a name still counts as taken, with an empty identity)."""
    found: dict[str, tuple[str, Path]] = {}
    for other in stores:
        for v in list_versions(other):
            try:
                found.setdefault(v, (snapshot_identity(other / v), other / v))
            except SnapshotError:
                found.setdefault(v, ("", other / v))
    return found


def _seal(version_dir: Path) -> None:
    """Published files are read-only (immutability is also checked by hash on every load)."""
    for name in [*listed_files(read_manifest(version_dir), version_dir), DIGEST_FILE, MANIFEST]:
        path = version_dir / name
        if path.is_file() and path.stat().st_mode & 0o222:
            with contextlib.suppress(PermissionError):  # someone else's store: leave it
                path.chmod(0o444)


def _scratch(store: Path, version: str) -> tuple[Path, Path]:
    """(the version's folder, an empty scratch folder to fill first): never over a version."""
    target = store / version
    if target.exists():
        raise SnapshotError(f"refusing to overwrite published snapshot {version}")
    scratch = store / f".publishing-{version}-{os.getpid()}"
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir()
    return target, scratch


def _commit(scratch: Path, target: Path, store: Path, version: str, digest: str) -> None:
    """Verify the filled scratch folder, rename it into place, seal it and index it."""
    verify(scratch, digest=digest)
    os.rename(scratch, target)  # atomic on one filesystem; fails if target appeared meanwhile
    _seal(target)
    # {"versions": [...], "digests": {...}}: how static (https) mirrors of the store are listed,
    # and the record a manifest edited later is checked against
    write_index(store, {version: digest})


def _publish_copy(source: Path, store: Path, version: str, parent: str | None) -> PublishResult:
    """Publish a verified copy of another store's `version`, byte for byte (manifest and
    digest included), atomically as `publish` does."""
    manifest = verify(source)
    target, scratch = _scratch(store, version)
    for name in listed_files(manifest, source):
        shutil.copyfile(source / name, scratch / name)
    digest = write_manifest(scratch, manifest)  # the same text: `write_manifest` wrote it
    _commit(scratch, target, store, version, digest)
    return PublishResult(
        version, True, target, str(manifest["content_hash"]), parent, digest, reproduced=True
    )


@dataclass(frozen=True)
class PublishResult:
    version: str
    published: bool  # False when the content equals the newest snapshot already published
    path: Path
    content_hash: str
    parent: str | None
    digest: str = ""  # the manifest's digest: pin with f"{version}@{digest}"
    # a version of another store (the bundled one) with this run's inputs, copied as shipped
    reproduced: bool = False


def publish(
    staged: Path,
    store: Path,
    today: date | None = None,
    extra_manifest: dict[str, Any] | None = None,
    elsewhere: Sequence[Path] | None = None,
) -> PublishResult:
    """Publish a staged snapshot as the next version unless its content is already latest.

    A version names one content everywhere a consumer may load it from: `elsewhere` (default:
    the snapshots bundled with the package, which `BenchPress.load` also searches) are stores
    whose version names are never reused for other content. Content equal to a version there
    that is newer than everything in `store` is published under that same name (the demo's
    replay refresh reproduces the bundled snapshot, version and bytes)."""
    draft = verify(staged)
    identity = snapshot_identity(staged)
    store.mkdir(parents=True, exist_ok=True)
    versions = list_versions(store)
    parent = versions[-1] if versions else None
    if parent is not None and snapshot_identity(store / parent) == identity:
        latest = read_manifest(store / parent)
        _seal(store / parent)  # a publish killed after its rename left them writable
        write_index(store)  # stores published before index.json existed get one
        return PublishResult(
            parent,
            False,
            store / parent,
            str(latest["content_hash"]),
            None,
            manifest_digest(latest),
        )
    if elsewhere is None:
        elsewhere = [d for d in (bundled_snapshot_dir(),) if d.resolve() != store.resolve()]
    others = _identities_elsewhere(elsewhere)
    same = [
        v
        for v, (other, _) in others.items()
        if other == identity
        and v not in versions
        and (parent is None or version_key(v) > version_key(parent))
    ]
    if same:
        # the same inputs as a version consumers already load (the bundled one, reproduced by
        # the demo's replay refresh): that version, its bytes, whatever this CPU's fit gave
        version = max(same, key=version_key)
        return _publish_copy(others[version][1], store, version, parent)
    else:
        taken = {*versions, *others}
        version = next_version(taken, today or datetime.now(UTC).date())
        if parent is not None and version_key(version) <= version_key(parent):
            raise SnapshotError(f"next version {version} is not newer than {parent} (clock?)")
    target, scratch = _scratch(store, version)
    for name in listed_files(draft, staged):
        shutil.copyfile(staged / name, scratch / name)
    manifest = published_manifest(
        draft,
        extra_manifest or {},
        version,
        parent,
        datetime.now(UTC).isoformat(timespec="seconds"),
    )
    digest = write_manifest(scratch, manifest)
    _commit(scratch, target, store, version, digest)
    return PublishResult(version, True, target, draft["content_hash"], parent, digest)


# ------------------------------------------------------------------ the publish gate's records
# Which run staged which snapshot and what each blocking check of that run said about it
# (tables `staging_runs` and `check_results`, migration 004). Run ids are Dagster's; this module
# only stores them.
@dataclass(frozen=True)
class StagedRun:
    run_id: str
    content_hash: str
    figures: dict[str, Any]
    drift: dict[str, Any] | None


@dataclass(frozen=True)
class CheckRecord:
    run_id: str
    check_name: str
    asset_key: str
    content_hash: str | None  # the staged snapshot it judged; None for checks before staging
    passed: bool  # the rule's own verdict
    accepted: bool  # failed, but accepted by an explicit override
    description: str


def record_staging(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    digest: str,
    path_name: str,
    figures: dict[str, Any],
    drift: dict[str, Any] | None,
    staged_at: datetime | None = None,
) -> None:
    """Record that `run_id` staged `digest` (both tables in one transaction)."""
    when = staged_at or datetime.now(UTC)
    figures_json = json.dumps(figures, sort_keys=True)
    drift_json = json.dumps(drift, sort_keys=True) if drift is not None else None
    with transaction(con):  # replace by key: delete, then insert (the shared lake has no keys)
        con.execute("DELETE FROM staged_snapshots WHERE content_hash = ?", [digest])
        con.execute(
            "INSERT INTO staged_snapshots"
            " (content_hash, staged_at, path, figures, drift, run_id) VALUES (?, ?, ?, ?, ?, ?)",
            [digest, when, path_name, figures_json, drift_json, run_id],
        )
        con.execute("DELETE FROM staging_runs WHERE run_id = ?", [run_id])
        con.execute(
            "INSERT INTO staging_runs"
            " (run_id, content_hash, staged_at, figures, drift) VALUES (?, ?, ?, ?, ?)",
            [run_id, digest, when, figures_json, drift_json],
        )


def staged_by(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> StagedRun | None:
    """What the first of `run_ids` (a run, then the runs it re-executes) staged, if any."""
    if not run_ids:
        return None
    rows = con.execute(
        "SELECT run_id, content_hash, figures, drift FROM staging_runs WHERE run_id IN ("
        + ", ".join("?" for _ in run_ids)
        + ")",
        list(run_ids),
    ).fetchall()
    found = {row[0]: row for row in rows}
    for run_id in run_ids:
        if run_id in found:
            _, digest, figures, drift = found[run_id]
            return StagedRun(
                run_id, digest, json.loads(figures), json.loads(drift) if drift else None
            )
    return None


def latest_staging(con: duckdb.DuckDBPyConnection) -> StagedRun | None:
    """The most recent staging by any run (for error messages only: never published as such)."""
    row = con.execute(
        "SELECT run_id, content_hash, figures, drift FROM staging_runs"
        " ORDER BY staged_at DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return None
    return StagedRun(row[0], row[1], json.loads(row[2]), json.loads(row[3]) if row[3] else None)


def record_check(con: duckdb.DuckDBPyConnection, record: CheckRecord) -> None:
    """Store one check evaluation (replacing an earlier one of the same run and check)."""
    with transaction(con):
        con.execute(
            "DELETE FROM check_results WHERE run_id = ? AND check_name = ?",
            [record.run_id, record.check_name],
        )
        con.execute(
            "INSERT INTO check_results (run_id, check_name, asset_key, content_hash,"
            " passed, accepted, description, evaluated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                record.run_id,
                record.check_name,
                record.asset_key,
                record.content_hash,
                record.passed,
                record.accepted,
                record.description,
                datetime.now(UTC),
            ],
        )


def check_records(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> dict[str, CheckRecord]:
    """Each check's verdict in the first of `run_ids` that evaluated it."""
    if not run_ids:
        return {}
    rows = con.execute(
        "SELECT run_id, check_name, asset_key, content_hash, passed, accepted, description"
        " FROM check_results WHERE run_id IN (" + ", ".join("?" for _ in run_ids) + ")",
        list(run_ids),
    ).fetchall()
    rank = {run_id: i for i, run_id in enumerate(run_ids)}
    found: dict[str, CheckRecord] = {}
    for row in sorted(rows, key=lambda r: rank[r[0]], reverse=True):
        found[row[1]] = CheckRecord(*row[:6], row[6] or "")
    return found


def current_parse_rows(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[int, int | None]]:
    """source -> (parse_id, n_rows) of each source's current parse (what the matrix uses)."""
    current = current_parses(con)
    rows = dict(con.execute("SELECT parse_id, n_rows FROM parses WHERE status = 'ok'").fetchall())
    return {
        source: (int(parse_id), rows.get(parse_id))
        for source, parse_id in current.select("source", "parse_id").iter_rows()
    }


def record_publish(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    result: PublishResult,
    parses: dict[str, tuple[int, int | None]],
) -> None:
    """Log a successful publish step with the parses it published from."""
    with transaction(con):
        con.execute("DELETE FROM publish_log WHERE run_id = ?", [run_id])
        con.execute(
            "INSERT INTO publish_log"
            " (run_id, version, content_hash, published, logged_at, parses)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                run_id,
                result.version,
                result.content_hash,
                result.published,
                datetime.now(UTC),
                json.dumps({s: list(v) for s, v in sorted(parses.items())}),
            ],
        )


def published_parses(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[int, int | None]] | None:
    """The parses current at the last logged publish; None when nothing was published here."""
    row = con.execute("SELECT parses FROM publish_log ORDER BY logged_at DESC LIMIT 1").fetchone()
    if row is None:
        return None
    return {source: (int(pid), rows) for source, (pid, rows) in json.loads(row[0]).items()}
