"""`benchpress snapshots list | show | verify | pull | diff | remove`: the published matrix
snapshots, and your own matrices in the private line (`--private`, `remove`)."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import polars as pl

from predictor.api import BenchPress
from predictor.cli.commands import SNAPSHOTS
from predictor.cli.options import (
    STORE_HELP,
    VERSION_HELP,
    add_commands,
    add_output_options,
    snapshot_reference,
    store_uri,
)
from predictor.cli.output import EXIT_FAILED, CommandError, emit, print_table, printable
from predictor.drift import drift_figures
from predictor.snapshots.private_line import RemovalRefused, private_store_dir, remove_version
from predictor.snapshots.reader import (
    BrokenSnapshotWarning,
    ManifestCheck,
    SnapshotError,
    check_version,
    default_stores,
    parse_pin,
    verify_snapshot,
    version_key,
)
from predictor.snapshots.stores import LocalStore, SnapshotStore, StoreUnreachable, open_store


def short_digest(digest: object) -> str:
    """`sha256:` and 12 hex digits, for tables (the full digest is in --json, --csv, show)."""
    return str(digest)[:19]


def _store_args(args: argparse.Namespace) -> list[SnapshotStore]:
    """`--store` (a directory or an s3:// / https:// URI), else the default local stores.

    A --store directory that does not exist is an error (a typo), while a default store that
    does not exist yet only means nothing was published. `--private`: the private line,
    empty until an own matrix is saved."""
    if getattr(args, "private", False):
        return [LocalStore(private_store_dir())]
    if getattr(args, "store", None) is None:
        return [open_store(path) for path in default_stores()]
    store = open_store(args.store)
    if isinstance(store, LocalStore):
        store.require_root()
    return [store]


def _listed_versions(store: SnapshotStore) -> list[str]:
    try:
        return store.list_versions()
    except StoreUnreachable as exc:
        print(f"benchpress: warning: {exc}; listing cached versions only", file=sys.stderr)
        return store.cached_versions()


SNAPSHOT_LIST_SCHEMA = {
    "version": pl.String,
    "models": pl.Int64,
    "benchmarks": pl.Int64,
    "cells": pl.Int64,
    "content_hash": pl.String,
    "digest": pl.String,  # sha256:<64 hex> of the manifest: pin with VERSION@DIGEST
    "parent": pl.String,
    "cached": pl.Boolean,
    "store": pl.String,
    "status": pl.String,  # "ok", "broken" (manifest unusable) or "unreachable"
    "error": pl.String,  # why, when not "ok"
}
LIST_COLUMNS = [
    "version",
    "models",
    "benchmarks",
    "cells",
    "content_hash",
    "digest",
    "parent",
    "cached",
]


def _count(counts: object, key: str) -> int | None:
    """A count from the manifest, or None: a hand-edited value must not break the table."""
    value = counts.get(key) if isinstance(counts, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _manifest_row(check: ManifestCheck) -> dict[str, object]:
    manifest = check.manifest
    counts = manifest.get("counts")
    return {
        "models": _count(counts, "models"),
        "benchmarks": _count(counts, "benchmarks"),
        "cells": _count(counts, "cells"),
        "content_hash": str(manifest.get("content_hash", ""))[:12],
        "digest": check.digest,
        "parent": str(manifest.get("parent") or ""),
        "status": "ok",
        "error": "",
    }


def _broken_row(store: SnapshotStore, version: str, exc: SnapshotError) -> dict[str, object]:
    """One bad version folder is listed as such (and warned about), not fatal to the listing."""
    status = "unreachable" if isinstance(exc, StoreUnreachable) else "broken"
    warnings.warn(f"{status} snapshot {version}: {exc}", BrokenSnapshotWarning, stacklevel=2)
    empty = {
        "models": None,
        "benchmarks": None,
        "cells": None,
        "content_hash": "",
        "digest": "",
        "parent": "",
    }
    return {**empty, "status": status, "error": str(exc)}


def snapshot_rows(stores: Sequence[SnapshotStore]) -> list[dict[str, object]]:
    """One row per published version in each store (what `snapshots list` prints)."""
    rows = []
    for store in stores:
        cached = set(store.cached_versions())
        for version in _listed_versions(store):
            try:
                row = _manifest_row(store.read_manifest_check(version))
            except SnapshotError as exc:
                row = _broken_row(store, version, exc)
            rows.append(
                {"version": version, **row, "cached": version in cached, "store": store.uri}
            )
    return [{name: row[name] for name in SNAPSHOT_LIST_SCHEMA} for row in _once(rows)]


def _once(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """Each version once: a local publish that reuses the bundled name for identical content
    sits in two stores; the first store (where `load` finds it) is listed."""
    seen: set[tuple[object, object]] = set()
    kept = []
    for row in rows:
        key = (row["version"], row["content_hash"])
        if row["status"] == "ok" and key in seen:
            continue
        seen.add(key)
        kept.append(row)
    return kept


def cmd_snapshots_list(args: argparse.Namespace) -> int:
    rows = snapshot_rows(_store_args(args))

    def short(row: dict[str, object]) -> str:
        return short_digest(row["digest"]) if row["digest"] else ""

    def table() -> None:
        if rows:
            shown = [
                {**{k: "" if v is None else v for k, v in row.items()}, "digest": short(row)}
                for row in rows
            ]
            print_table(shown, [*LIST_COLUMNS, "status", "store"])
        elif args.store:
            print(f"no snapshots found in {args.store}")
        elif args.private:
            print("no own matrices saved yet; BenchPress.fit(frame).save() keeps them here")
        else:
            print("no snapshots published yet; run `benchpress refresh`")

    emit(args, pl.DataFrame(rows, schema=SNAPSHOT_LIST_SCHEMA), payload=rows, table=table)
    return 0


VERIFY_SCHEMA = {
    "version": pl.String,
    "status": pl.String,  # "ok" or "failed"
    "content_hash": pl.String,
    "digest": pl.String,  # the manifest's digest, when it checked out
    "note": pl.String,  # "legacy, no recorded digest" for versions without a digest file
    "error": pl.String,  # why, when failed
    "store": pl.String,
}


def verify_rows(stores: Sequence[SnapshotStore], versions: Sequence[str]) -> list[dict[str, str]]:
    """Re-hash every data file of `versions` (all published ones when empty; each may be
    pinned, `VERSION@sha256:...`) in each store, and check each manifest's digest against its
    digest file and the store's index.

    `snapshots list` reads manifests only, so a data file changed after publishing shows there
    as fine; this is the check to run before trusting a store (loading refuses such a version
    too, but only when someone loads it). A remote version is checked through the local cache,
    downloading it when it is not cached."""
    pins = dict(parse_pin(v) for v in versions)
    rows = []
    for store in stores:
        listed = _listed_versions(store)
        for version in [v for v in pins if v in listed] if versions else listed:
            row = {"version": version, "status": "ok", "content_hash": "", "digest": ""}
            row.update(note="", error="")
            try:
                pin = pins.get(version)
                check = verify_snapshot(store.fetch(version, pin), version, pin).check
                row.update(
                    content_hash=str(check.manifest["content_hash"])[:12],
                    digest=check.digest,
                    note=check.note,
                )
            except SnapshotError as exc:
                row.update(status="failed", error=str(exc))
            rows.append({**row, "store": store.uri})
    return rows


def cmd_snapshots_verify(args: argparse.Namespace) -> int:
    """Exit 1 when any version fails (missing, modified, unlisted or misnamed files, a
    manifest that does not match its digest)."""
    rows = verify_rows(_store_args(args), list(dict.fromkeys(args.versions)))
    wanted = [parse_pin(v)[0] for v in args.versions]
    missing = sorted(set(wanted) - {row["version"] for row in rows})
    if missing:  # as a pinned version that does not exist: exit 1, published ones named
        listed = {v for store in _store_args(args) for v in _listed_versions(store)}
        known = sorted(listed, key=version_key)
        raise SnapshotError(
            f"snapshot {', '.join(missing)} not found; published versions: {known or 'none'}"
        )

    def table() -> None:
        if rows:
            shown = [{**row, "digest": short_digest(row["digest"])} for row in rows]
            print_table(shown, list(VERIFY_SCHEMA))
        else:
            print("no snapshots to verify")

    emit(args, pl.DataFrame(rows, schema=VERIFY_SCHEMA), payload=rows, table=table)
    return EXIT_FAILED if any(row["status"] != "ok" for row in rows) else 0


def cmd_snapshots_show(args: argparse.Namespace) -> int:
    """A summary of the version (loaded, so verified); `--json` prints the whole manifest."""
    bp = BenchPress.load(args.version, store=args.store, private=args.private)
    manifest = {
        **bp.manifest,
        "path": str(bp.snapshot.path),
        "digest": bp.snapshot.digest,
        "digest_note": bp.snapshot.digest_note,
    }
    if args.json:
        print(json.dumps(manifest, indent=2, sort_keys=True))
    else:
        print("\n".join(manifest_summary(manifest)))
    return 0


def _fig(value: object, spec: str = "g") -> str:
    return format(value, spec) if isinstance(value, int | float) else "?"


def manifest_summary(m: dict[str, Any]) -> list[str]:
    """The manifest in a dozen lines: identity, contents, fit, quality, gate."""
    counts = m.get("counts") if isinstance(m.get("counts"), dict) else {}
    quality = m.get("quality") if isinstance(m.get("quality"), dict) else {}
    fit = m.get("fit_params") if isinstance(m.get("fit_params"), dict) else {}
    sources = counts.get("sources") or []
    lines = [
        f"snapshot {printable(m.get('version'))} (verified), published "
        f"{printable(m.get('published_at'))}",
        f"  content {printable(m.get('content_hash'))}",
        f"  digest {printable(m.get('digest'))}"
        + (f" ({printable(m['digest_note'])})" if m.get("digest_note") else ""),
        f"  pin it: {printable(m.get('version'))}@{printable(m.get('digest'))}",
        f"  parent {printable(m.get('parent') or 'none')}",
        f"  matrix: {_fig(counts.get('models'), ',')} models x "
        f"{_fig(counts.get('benchmarks'), ',')} benchmarks, {_fig(counts.get('cells'), ',')} "
        f"cells, {_fig(counts.get('conflicts'), ',')} conflicts",
        f"  sources ({len(sources)}): {printable(', '.join(map(str, sources)))}",
        f"  fit: {_fig(quality.get('n_models'), ',')} models x "
        f"{_fig(quality.get('n_benchmarks'), ',')} benchmarks, rank {_fig(fit.get('rank'))}, "
        f"at least {_fig(fit.get('min_per_model'))} scores per model and "
        f"{_fig(fit.get('min_per_benchmark'))} per benchmark",
    ]
    if "holdout_medae" in quality:
        within = quality.get("holdout_within5")
        share = _fig(100 * within, ".0f") if isinstance(within, int | float) else "?"
        lines.append(
            f"  held-out MedAE {_fig(quality.get('holdout_medae'), '.2f')} points over "
            f"{_fig(quality.get('holdout_cells'), ',')} cells, within 5 points {share}%"
        )
    if "variance_share_top2" in quality:
        top2 = _fig(quality["variance_share_top2"], ".3f")
        lines.append(
            f"  variance share of the top 2 components {top2}, "
            f"suspicious cells {_fig(quality.get('suspicious_cells'))}"
        )
    accepted = m.get("accepted_drift") or []
    lines.append(f"  accepted drift: {printable(', '.join(map(str, accepted))) or 'none'}")
    files = m.get("files") if isinstance(m.get("files"), dict) else {}
    lines.append(f"  {len(files)} files in {printable(m.get('path'))}")
    lines.append("  the whole manifest: benchpress snapshots show VERSION --json")
    return lines


def cmd_snapshots_pull(args: argparse.Namespace) -> int:
    """Download and verify a version into the local cache, so later loads work offline.

    A local directory store is read in place: there is nothing to cache, so after verifying
    the version this says so instead of claiming a copy was made."""
    store = open_store(args.store)
    version, digest = parse_pin(args.version)
    path = store.resolve(version, digest)
    if isinstance(store, LocalStore):
        print(
            f"snapshot {path.name} in {store.uri}: verified; a local store is read in place, "
            "nothing to pull"
        )
        return 0
    print(f"snapshot {path.name} from {store.uri}: verified, cached at {path}")
    return 0


def _version(text: str) -> str:
    """argparse type of `remove`'s VERSION: one version in its one spelling (exit 2 if not)."""
    try:
        return check_version(text)
    except SnapshotError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_snapshots_remove(args: argparse.Namespace) -> int:
    """Remove an own matrix (exit 2, naming why, for a published public version or one that
    ships with the package; exit 1 when the version is not there)."""
    try:
        removed = remove_version(args.version, args.store)
    except RemovalRefused as exc:
        raise CommandError(str(exc)) from None
    payload = {"version": removed.version, "store": str(removed.store), "removed": True}
    if args.json:
        print(json.dumps(payload, indent=2))
    else:
        print(f"removed snapshot {removed.version} from {printable(removed.store)}")
    return 0


def snapshot_diff(old: BenchPress, new: BenchPress) -> dict[str, object]:
    """Models, benchmarks and cells added/removed/changed between two versions, plus drift."""
    models_old, models_new = set(old.models), set(new.models)
    benches_old, benches_new = set(old.benchmarks), set(new.benchmarks)
    return {
        "from": old.version,
        "to": new.version,
        "models_added": sorted(models_new - models_old),
        "models_removed": sorted(models_old - models_new),
        "benchmarks_added": sorted(benches_new - benches_old),
        "benchmarks_removed": sorted(benches_old - benches_new),
        "drift": drift_figures(old.snapshot, new.snapshot),
    }


DIFF_CHANGES = (
    ("models_added", "model", "added"),
    ("models_removed", "model", "removed"),
    ("benchmarks_added", "benchmark", "added"),
    ("benchmarks_removed", "benchmark", "removed"),
)


def diff_frame(diff: dict[str, Any]) -> pl.DataFrame:
    """The tabular part of `snapshot_diff`: one row per model or benchmark added or removed.

    The drift figures (cell counts, principal angles, held-out error, prediction shift) are
    scalars and short lists, not rows: they are in `--json` and the human output only."""
    rows = [
        {"kind": kind, "change": change, "name": name}
        for key, kind, change in DIFF_CHANGES
        for name in diff[key]
    ]
    return pl.DataFrame(rows, schema={"kind": pl.String, "change": pl.String, "name": pl.String})


def cmd_snapshots_diff(args: argparse.Namespace) -> int:
    old = BenchPress.load(args.old, store=args.store)
    new = BenchPress.load(args.new, store=args.store)
    diff = snapshot_diff(old, new)
    emit(args, diff_frame(diff), payload=diff, table=lambda: _print_diff(diff))
    return 0


def _print_diff(diff: dict[str, Any]) -> None:
    drift = diff["drift"]
    print(f"{diff['from']} -> {diff['to']}")
    for key in ("models_added", "models_removed", "benchmarks_added", "benchmarks_removed"):
        names = diff[key]
        shown = ", ".join(names[:8]) + (f" ... (+{len(names) - 8})" if len(names) > 8 else "")
        print(f"  {key.replace('_', ' ')}: {len(names)}{': ' + shown if names else ''}")
    print(f"  cells: +{drift['cells_added']} -{drift['cells_removed']} ~{drift['cells_changed']}")
    angles = ", ".join(f"{a:.1f}" for a in drift["loading_angles_deg"])
    print(f"  benchmark-loading principal angles (deg): {angles}")
    if drift["holdout_medae_change"] is not None:
        print(
            f"  held-out MedAE: {drift['holdout_medae_old']:.2f} -> "
            f"{drift['holdout_medae_new']:.2f}"
        )
    shift = drift["prediction_shift"]
    print(f"  reference prediction shift: median {shift['median']:.2f}, p90 {shift['p90']:.2f}")


def snapshots_arguments(snapshots: argparse.ArgumentParser) -> None:
    """The actions of `snapshots`, each with its options and handler."""
    snap_sub = snapshots.add_subparsers(dest="snapshots_command", required=True, metavar="ACTION")
    listing = snap_sub.add_parser("list", help="list published versions")
    _where(listing)
    add_output_options(listing)
    listing.set_defaults(func=cmd_snapshots_list)
    show = snap_sub.add_parser(
        "show", help="a version's summary, or its whole manifest with --json (verifies hashes)"
    )
    show.add_argument(
        "version", nargs="?", type=snapshot_reference, default="latest", help=VERSION_HELP
    )
    _where(show)
    show.add_argument("--json", action="store_true", help="the whole manifest as JSON")
    show.set_defaults(func=cmd_snapshots_show)
    check = snap_sub.add_parser(
        "verify",
        help="re-hash every file of published versions and check each manifest's digest; exit 1 "
        "if any was modified, is missing or is not listed",
    )
    check.add_argument(
        "versions",
        nargs="*",
        type=snapshot_reference,
        metavar="VERSION",
        help="VERSION or VERSION@sha256:DIGEST (default: every version)",
    )
    check.add_argument("--store", type=store_uri, help=STORE_HELP)
    add_output_options(check)
    check.set_defaults(func=cmd_snapshots_verify)
    pull = snap_sub.add_parser("pull", help="cache a version from a remote store, for offline use")
    pull.add_argument(
        "version", nargs="?", type=snapshot_reference, default="latest", help=VERSION_HELP
    )
    pull.add_argument("--store", type=store_uri, required=True, help=STORE_HELP)
    pull.set_defaults(func=cmd_snapshots_pull)
    diff = snap_sub.add_parser("diff", help="what changed between two versions, with drift")
    diff.add_argument("old", type=snapshot_reference, help="the older version (VERSION[@DIGEST])")
    diff.add_argument("new", type=snapshot_reference, help="the newer version (VERSION[@DIGEST])")
    diff.add_argument("--store", type=store_uri, help=STORE_HELP)
    add_output_options(
        diff,
        csv_help="models and benchmarks added or removed as CSV (kind,change,name); the drift "
        "figures are in --json",
    )
    diff.set_defaults(func=cmd_snapshots_diff)
    remove = snap_sub.add_parser(
        "remove",
        help="remove one of your own matrices (BenchPress.fit(...).save()); published public "
        "versions are refused",
    )
    remove.add_argument("version", type=_version, metavar="VERSION", help="the version to remove")
    remove.add_argument(
        "--store",
        type=store_uri,
        metavar="FOLDER",
        help="a folder an own matrix was saved to with save(path) (default: your private line)",
    )
    remove.add_argument("--json", action="store_true", help="what was removed, as JSON")
    remove.set_defaults(func=cmd_snapshots_remove)


def _where(parser: argparse.ArgumentParser) -> None:
    """`--store` or `--private` (your own matrices), not both."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--store", type=store_uri, help=STORE_HELP)
    group.add_argument(
        "--private",
        action="store_true",
        help="your own matrices (BenchPress.fit(...).save()), kept apart from the public line",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `snapshots` to a parser's sub-commands."""
    add_commands(subparsers, SNAPSHOTS)
