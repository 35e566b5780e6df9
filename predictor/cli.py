"""`benchpress` command line. The predictor's own commands live here; the pipeline package
contributes `refresh`, `sources` and `warehouse` through the `benchpress.commands` entry-point
group, so the predictor installs and runs alone."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import Any

import polars as pl

from predictor import cli_app, cli_evaluate, cli_new_benchmark, cli_trust
from predictor.api import BenchPress, ProbeScoreError, predictions_frame
from predictor.cli_output import (
    CommandError,
    add_output_options,
    emit,
    interval_level,
    level_label,
    print_table,
    printable,
)
from predictor.cli_results import (
    add_from_options,
    check_from_options,
    fractions_checked,
    gathered_scores,
    inputs_payload,
    print_inputs,
)
from predictor.cli_trust import target_names
from predictor.resolve import UnknownNameError
from predictor.results.errors import ResultsError
from predictor.snapshots import (
    BrokenSnapshotWarning,
    ManifestCheck,
    SnapshotError,
    default_stores,
    parse_pin,
    verify_snapshot,
    version_key,
)
from predictor.stores import LocalStore, SnapshotStore, StoreUnreachable, open_store
from predictor.text_safety import terminal_safe_output
from predictor.trust.costs import BudgetError

STORE_HELP = "snapshot store: a directory, s3://bucket/prefix or https:// URL"
VERSION_HELP = "snapshot version, or VERSION@sha256:DIGEST to pin its manifest too (default latest)"
EMPTY_STORE = "must not be empty: give a directory, s3://bucket/prefix or https:// URL"
EXIT_USAGE = 2
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


def parse_scores(text: str) -> dict[str, float]:
    """`gpqa_diamond=80,hle=20` -> {"gpqa_diamond": 80.0, "hle": 20.0}; `80%` is 80."""
    scores: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise CommandError(f"--scores: expected name=value, got {part!r}")
        if name.strip() in scores:
            raise CommandError(f"--scores: {name.strip()!r} is given twice")
        number = value.strip()
        number = number[:-1].rstrip() if number.endswith("%") else number
        try:
            scores[name.strip()] = float(number)
        except ValueError:
            raise CommandError(
                f"--scores: {name.strip()!r} has a non-numeric value {value!r}"
            ) from None
    if not scores:
        raise CommandError("--scores: give at least one name=value pair")
    return scores


def _benchmark_not_model(
    name: str,
    resolve: Callable[[str], str],
    option: str,
    resolve_model: Callable[[str], str] | None,
) -> str:
    """The benchmark `name` resolves to; a model's name given where a benchmark goes
    (`GPT-4o=80`) is said to be one, instead of suggesting look-alike benchmarks."""
    try:
        return resolve(name)
    except UnknownNameError:
        model = None
        if resolve_model is not None:
            try:
                model = resolve_model(name)
            except (UnknownNameError, ValueError):
                model = None
        if model is None:
            raise
        raise CommandError(
            f"{option}: {printable(name)!r} is a model ({printable(model)}), not a benchmark; "
            "give benchmark=score pairs, e.g. gpqa_diamond=80 (known models go in "
            "`benchpress compare --reference`)"
        ) from None


def check_distinct_benchmarks(
    scores: dict[str, float],
    resolve: Callable[[str], str],
    option: str = "--scores",
    resolve_model: Callable[[str], str] | None = None,
) -> None:
    """Two spellings of one benchmark (`gpqa_diamond`, `GPQA Diamond`) are a usage error, as an
    exact duplicate is in `parse_scores`; the API would reject them later as a failure."""
    seen: dict[str, str] = {}
    for name in scores:
        benchmark = _benchmark_not_model(name, resolve, option, resolve_model)
        if benchmark in seen:
            raise CommandError(
                f"{option}: {benchmark} is given twice (as {seen[benchmark]!r} and {name!r}); "
                "give each benchmark once"
            )
        seen[benchmark] = name


def store_uri(text: str) -> str:
    """argparse type of --store: an empty value (an unset shell variable) is a usage error, not
    the default stores (`snapshots list`) nor the current directory (`predict`)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(EMPTY_STORE)
    return text


def snapshot_reference(text: str) -> str:
    """argparse type of a snapshot version: a digest pin (`VERSION@sha256:...`) must be whole
    (exit 2 otherwise); the version itself is checked where it is resolved."""
    try:
        parse_pin(text)
    except SnapshotError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def short_digest(digest: object) -> str:
    """`sha256:` and 12 hex digits, for tables (the full digest is in --json, --csv, show)."""
    return str(digest)[:19]


def _reject_empty_store(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The same rule for commands registered elsewhere, whose --store has no `store_uri`."""
    store = getattr(args, "store", None)
    if isinstance(store, str) and not store.strip():
        parser.error(f"argument --store: {EMPTY_STORE}")


def _store_args(args: argparse.Namespace) -> list[SnapshotStore]:
    """`--store` (a directory or an s3:// / https:// URI), else the default local stores.

    A --store directory that does not exist is an error (a typo), while a default store that
    does not exist yet only means nothing was published."""
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


def plural(count: int, noun: str) -> str:
    """`1 benchmark`, `3 benchmarks`."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _one_decimal(row: dict[str, Any]) -> dict[str, str]:
    """Score, bounds and half-width to one decimal whatever the level or the unit: a tenth of a
    point (or of an Elo point, a dollar, a minute) is the resolution any benchmark reports."""
    return {
        "score": f"{row['score']:.1f}",
        "low": f"{row['low']:.1f}",
        "high": f"{row['high']:.1f}",
        "±": f"{row['confidence']:.1f}",
    }


def _percent(p: float | None) -> str:
    """A probability as a whole percentage; blank when there is none."""
    return "" if p is None else f"{100 * p:.0f}%"


def cmd_predict(args: argparse.Namespace) -> int:
    check_from_options(args)
    if args.scores is None and not args.from_paths:
        raise CommandError(
            "give the probe scores: --scores name=value,... or --from PATH (results files), or both"
        )
    extra = parse_scores(args.scores) if args.scores is not None else None
    bp = BenchPress.load(args.version, store=args.store)
    inputs, scores, replaced = gathered_scores(bp, args, extra)
    with fractions_checked(inputs, extra):
        predictions = bp.predict(scores, level=args.level, targets=target_names(args.targets))
    frame = predictions_frame(predictions)  # --csv: the Python API's table, as is
    shown = frame.sort("benchmark")

    def table() -> None:
        if inputs is not None:
            print_inputs(inputs, extra, replaced)
        print(
            f"snapshot {bp.version}: {plural(len(predictions), 'benchmark')}, "
            f"{level_label(args.level)} intervals"
        )
        unit = dict(bp.snapshot.benchmarks.select("benchmark_id", "unit").iter_rows())
        rows = [
            {
                **r,
                **_one_decimal(r),
                "unit": unit.get(r["benchmark"]) or "",
                "P(|err|<=5)": _percent(r["p_within_5"]) if not r["observed"] else "",
                "kind": "probe" if r["observed"] else "predicted",
            }
            for r in shown.to_dicts()
        ]
        columns = ["benchmark", "score", "low", "high", "±", "unit", "P(|err|<=5)", "kind"]
        print_table(rows, columns)

    payload = {"version": bp.version, "level": args.level, "predictions": shown.to_dicts()}
    if inputs is not None:
        payload["inputs"] = inputs_payload(inputs, extra, replaced)
    emit(args, frame, payload=payload, table=table)
    return 0


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
    bp = BenchPress.load(args.version, store=args.store)
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


def snapshot_diff(old: BenchPress, new: BenchPress) -> dict[str, object]:
    """Models, benchmarks and cells added/removed/changed between two versions, plus drift."""
    from predictor.drift import drift_figures

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


def state_reason() -> str:
    """Why state lives where it does, in words."""
    from predictor.paths import home_origin

    if home_origin() == "BENCHPRESS_HOME":
        return "set by BENCHPRESS_HOME"
    return "the default; set BENCHPRESS_HOME to use another folder"


def version_text() -> str:
    """`benchpress --version`: what is installed and where its state lives."""
    from importlib.metadata import PackageNotFoundError, version

    from predictor.paths import benchpress_home, bundled_snapshot_dir
    from predictor.snapshots import list_versions

    try:
        installed = version("benchpress-llm")
    except PackageNotFoundError:  # run from a source tree that was never installed
        installed = "unknown"
    bundled = ", ".join(list_versions(bundled_snapshot_dir())) or "none"
    return (
        f"benchpress-llm {installed}\nbundled snapshot: {bundled}\n"
        f"state: {benchpress_home()} ({state_reason()})"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="benchpress",
        formatter_class=argparse.RawDescriptionHelpFormatter,  # --version keeps its lines
        description="Predict LLM benchmark scores from a few probe scores, from pinned snapshots.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=version_text(),
        help="the package version, the bundled snapshot and where state lives",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    predict = sub.add_parser(
        "predict", help="predict unseen benchmarks from probe scores or results files"
    )
    predict.add_argument(
        "--scores",
        help="probe scores: name=value,name=value (with --from: added to the files' scores, "
        "replacing a file's score of the same benchmark)",
    )
    add_from_options(predict)
    predict.add_argument("--version", type=snapshot_reference, default="latest", help=VERSION_HELP)
    predict.add_argument("--store", type=store_uri, help=STORE_HELP)
    predict.add_argument(
        "--level", type=interval_level, default=0.9, help="interval level (default 0.9)"
    )
    predict.add_argument(
        "--targets",
        help="only these: a profile (coding_assistant, chat, reasoning, general_assistant) or "
        "name,name,... (default: every benchmark)",
    )
    add_output_options(predict)
    predict.set_defaults(func=cmd_predict)

    snapshots = sub.add_parser("snapshots", help="published matrix snapshots")
    snap_sub = snapshots.add_subparsers(dest="snapshots_command", required=True, metavar="ACTION")
    listing = snap_sub.add_parser("list", help="list published versions")
    listing.add_argument("--store", type=store_uri, help=STORE_HELP)
    add_output_options(listing)
    listing.set_defaults(func=cmd_snapshots_list)
    show = snap_sub.add_parser(
        "show", help="a version's summary, or its whole manifest with --json (verifies hashes)"
    )
    show.add_argument(
        "version", nargs="?", type=snapshot_reference, default="latest", help=VERSION_HELP
    )
    show.add_argument("--store", type=store_uri, help=STORE_HELP)
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

    cli_app.register(sub)  # `benchpress app`: the local web page
    cli_evaluate.register(sub)  # `benchpress evaluate`: the paper protocols, side by side
    cli_trust.register(sub)  # `benchpress compare | probes | next | suspicious`
    cli_new_benchmark.register(sub)  # `benchpress predict-benchmark`: the transpose

    for entry in entry_points(group="benchpress.commands"):
        try:
            register = entry.load()
        except ImportError:  # the pipeline extras are not installed: predictor-only install
            continue
        register(sub)
    return parser


def _print_warning(message: Warning | str, *_: object, **__: object) -> None:
    print(f"benchpress: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Whatever it prints (tables, messages, argparse's errors) goes through
    `terminal_safe_output`: names from snapshots and payloads never steer the terminal."""
    with terminal_safe_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _reject_empty_store(parser, args)
    try:
        with warnings.catch_warnings():  # e.g. a stale cached snapshot: one plain stderr line
            warnings.showwarning = _print_warning
            return int(args.func(args) or 0)
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("benchpress: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (CommandError, UnknownNameError, SnapshotError, ValueError, TypeError) as exc:
        # a results file's names are data: escaped, so the message stays one plain line
        message = printable(exc) if isinstance(exc, ResultsError) else exc
        print(f"benchpress: error: {message}", file=sys.stderr)
        usage = CommandError | UnknownNameError | ProbeScoreError | ResultsError | BudgetError
        return EXIT_USAGE if isinstance(exc, usage) else EXIT_FAILED
    except OSError as exc:  # unreadable / unwritable paths (--out, BENCHPRESS_HOME, ...)
        print(f"benchpress: error: {exc}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    raise SystemExit(main())
