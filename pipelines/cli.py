"""Pipeline commands for `benchpress`: refresh, sources, warehouse (entry point
`benchpress.commands`). Output formats and progress bars: `predictor.cli_output`."""

from __future__ import annotations

import argparse
import sys
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, MODES
from pipelines.settings import DRIFT_CHECKS
from pipelines.sources import SOURCES
from predictor.cli_output import (
    add_output_options,
    add_progress_option,
    emit,
    print_table,
    progress_bar,
)

EXIT_FAILED = 1


def cmd_refresh(args: argparse.Namespace) -> int:
    from pipelines.locking import EXIT_LOCKED, RefreshLocked
    from pipelines.resources import check_settings
    from pipelines.run import DiskFull, run_refresh
    from pipelines.settings import refresh_workers

    try:  # settings that cannot work: one line naming the setting, before anything runs
        check_settings(args.mode, args.accept_drift)
        workers = refresh_workers(args.workers)
    except ValueError as exc:
        print(f"benchpress: error: {exc}", file=sys.stderr)
        return 2
    if args.wait < 0:
        print("benchpress: error: --wait must be >= 0 seconds", file=sys.stderr)
        return 2
    # a bar over the job's steps; not by default with --verbose (Dagster's log is on stderr)
    with progress_bar(args, auto=not args.verbose, desc="refresh", unit="step") as bar:

        def on_step(step) -> None:  # pipelines.run.StepProgress
            bar.update_to(step.done, step.total)
            if not step.finished:
                bar.postfix(step.step)

        try:
            outcome = run_refresh(
                mode=args.mode,
                log_level="DEBUG" if args.verbose else "CRITICAL",
                accept_drift=args.accept_drift,
                wait=args.wait,
                progress=on_step if bar.enabled else None,
                workers=workers,
            )
        except RefreshLocked as exc:
            bar.close()
            print(f"benchpress: error: {exc}", file=sys.stderr)
            return EXIT_LOCKED
        except DiskFull as exc:  # one line; the storage layer's traceback only with --verbose
            bar.close()
            if args.verbose and exc.__cause__ is not None:
                traceback.print_exception(exc.__cause__, file=sys.stderr)
            print(f"benchpress: error: {exc}", file=sys.stderr)
            return EXIT_FAILED
    for run_id in outcome.recovered_runs:
        print(f"  closed run {run_id} of a refresh that was killed (its pool slot is free)")
    for source, result in sorted(outcome.source_outcomes.items()):
        print(f"  {source}: {result}")
    stale = sum(1 for state in outcome.source_outcomes.values() if "FAILED" in state)
    if stale:
        print(
            f"warning: {stale} source(s) stale: their last good data stays in the matrix",
            file=sys.stderr,
        )
    for check in outcome.failed_checks:
        print(f"check failed: {check}", file=sys.stderr)
    for step in outcome.failed_steps:
        print(f"step failed: {step}", file=sys.stderr)
    if not outcome.success and outcome.version is not None:  # published, then a step failed
        state = "published" if outcome.published else "unchanged, latest is"
        print(
            f"benchpress: snapshot {state} {outcome.version} locally, but the refresh did not "
            "finish (see the failed step above)",
            file=sys.stderr,
        )
        return 1
    if not outcome.success:
        print(
            "benchpress: refresh did not publish; the previous snapshot stays latest",
            file=sys.stderr,
        )
        return 1
    state = "published" if outcome.published else "unchanged (identical content), latest is"
    print(f"snapshot {state} {outcome.version}")
    print(f"state: {state_line()}")
    return 0


def state_line() -> str:
    """Where the warehouse and snapshots live, and why there (the variable or the default)."""
    from predictor.cli import state_reason
    from predictor.paths import benchpress_home

    return f"{benchpress_home()} ({state_reason()})"


def sources_frame(described: list[dict[str, Any]]) -> pl.DataFrame:
    """`--csv` of `sources`: `Source.describe()` of every source, one row per URL (`url` in
    place of the `urls` list, so the table is flat)."""
    rows = [
        {("url" if k == "urls" else k): (url if k == "urls" else v) for k, v in source.items()}
        for source in described
        for url in source["urls"]
    ]
    return pl.DataFrame(rows, infer_schema_length=None)


def cmd_sources(args: argparse.Namespace) -> int:
    described = [source.describe() for source in SOURCES.values()]

    def table() -> None:
        for source in described:
            print(f"{source['id']}: {source['title']}")
            for url in source["urls"]:
                print(f"    {url}")
        print(f"replay root: {DEFAULT_REPLAY_ROOT}")

    payload = {"replay_root": str(DEFAULT_REPLAY_ROOT), "sources": described}
    emit(args, sources_frame(described), payload=payload, table=table)
    return 0


def stats_frame(stats: dict[str, Any]) -> pl.DataFrame:
    """`--csv` of `warehouse stats`: one row per source, `source` then its figures as
    `warehouse.stats.warehouse_stats()["sources"]` gives them (the matrix totals are not
    per source: they are in --json and the table)."""
    rows = [{"source": source, **facts} for source, facts in stats["sources"].items()]
    return pl.DataFrame(rows, infer_schema_length=None)


def cmd_warehouse_stats(args: argparse.Namespace) -> int:
    from warehouse.stats import warehouse_stats

    stats = warehouse_stats()
    if stats["matrix"] is None:
        print(
            f"benchpress: error: no warehouse at {stats['warehouse']}; run `benchpress refresh` "
            "to build it (or set BENCHPRESS_HOME)",
            file=sys.stderr,
        )
        return EXIT_FAILED

    emit(args, stats_frame(stats), payload=stats, table=lambda: print_stats(stats))
    return 0


STATS_COLUMNS = {  # table heading -> the source's figure
    "source": "source",
    "status": "status",
    "payloads": "payloads",
    "rows": "rows",
    "models": "models",
    "benchmarks": "benchmarks",
    "resolved": "resolution_rate",
    "unresolved models": "unresolved_model_names",
    "unresolved benchmarks": "unresolved_benchmark_names",
    "data fetched": "data_fetched_at",
}


def _figure(value: object, key: str) -> object:
    if value is None:
        return ""
    if key == "resolution_rate":
        return f"{100 * float(value):.1f}%"
    if key == "data_fetched_at":
        return str(value)[:10]
    return f"{value:,}" if isinstance(value, int) else value


def print_stats(stats: dict[str, Any]) -> None:
    """A table of the sources, why a stale one is stale, then the matrix in one sentence."""
    rows = [
        {head: _figure({"source": s, **f}.get(key), key) for head, key in STATS_COLUMNS.items()}
        for s, f in stats["sources"].items()
    ]
    print_table(rows, list(STATS_COLUMNS))
    for source, facts in stats["sources"].items():
        if facts.get("error"):
            print(f"{source} is stale since {facts['error_at']}: {facts['error']}")
    m = stats["matrix"]
    rest = m["without_open_llm_leaderboard"]
    print(
        f"matrix: {m['models']:,} models x {m['benchmarks']:,} benchmarks, {m['cells']:,} cells, "
        f"{m['conflicts']:,} conflicts (without the Open LLM Leaderboard: {rest['models']:,} "
        f"models x {rest['benchmarks']:,} benchmarks, {rest['cells']:,} cells)"
    )


def cmd_warehouse_rebuild(args: argparse.Namespace) -> int:
    from pipelines.settings import fit_params
    from pipelines.stages.rebuild import rebuild_as_of
    from predictor.paths import warehouse_path
    from warehouse.db import connect
    from warehouse.ducklake import warehouse_backend

    try:
        as_of = datetime.fromisoformat(args.as_of)
    except ValueError:
        print(f"benchpress: error: --as-of {args.as_of!r} is not an ISO date", file=sys.stderr)
        return 2
    if as_of.tzinfo is None:
        as_of = as_of.replace(tzinfo=UTC)
    lake = warehouse_backend() == "ducklake"  # BENCHPRESS_WAREHOUSE: the shared lake
    if not lake and not warehouse_path().exists():  # connect() would create an empty one
        print(
            f"benchpress: error: no warehouse at {warehouse_path()}; run `benchpress refresh` "
            "to build it (or set BENCHPRESS_HOME)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    with connect(read_only=lake) as con:  # the lake: read-only, no write lock
        digest, path = rebuild_as_of(con, as_of, Path(args.out), fit_params())
    print(f"rebuilt the matrix as of {as_of.isoformat()}: {path} (content {digest[:12]})")
    print(f"load it with BenchPress.from_pretrained({str(path)!r})")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    refresh = sub.add_parser("refresh", help="run the whole pipeline once and publish")
    refresh.add_argument(
        "--mode", choices=MODES, help="fetch transport (default: replay, or BENCHPRESS_FETCH_MODE)"
    )
    refresh.add_argument(
        "--verbose",
        action="store_true",
        help="show Dagster's step log (and the traceback behind a storage failure)",
    )
    refresh.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="if another refresh is running here, wait up to this long for it (default 0: "
        "fail at once, exit code 3)",
    )
    refresh.add_argument(
        "--workers",
        metavar="N",
        help="fetch and parse the sources in up to N processes, each fetching up to N URLs at "
        "once; writes stay one at a time (default 1, or BENCHPRESS_REFRESH_WORKERS)",
    )
    refresh.add_argument(
        "--accept-drift",
        metavar="CHECKS",
        help="accept failures of these drift checks for an intended change (comma-separated, "
        f"or 'all'): {', '.join(DRIFT_CHECKS)}; recorded in the manifest",
    )
    add_progress_option(
        refresh,
        help="a bar over the job's steps on stderr (default: only when stderr is a terminal "
        "and without --verbose; --progress forces it, --no-progress turns it off)",
    )
    refresh.set_defaults(func=cmd_refresh)

    sources = sub.add_parser("sources", help="list leaderboard sources and their URLs")
    add_output_options(sources, csv_help="the sources as CSV, one row per URL")
    sources.set_defaults(func=cmd_sources)

    warehouse = sub.add_parser("warehouse", help="inspect the DuckDB warehouse")
    wsub = warehouse.add_subparsers(dest="warehouse_command", required=True, metavar="ACTION")
    stats = wsub.add_parser("stats", help="per-source payloads, rows, models, benchmarks")
    add_output_options(stats, csv_help="per-source figures as CSV, one row per source")
    stats.set_defaults(func=cmd_warehouse_stats)
    rebuild = wsub.add_parser(
        "rebuild", help="rebuild the matrix and fit as of a past date from warehouse history"
    )
    rebuild.add_argument("--as-of", required=True, help="ISO date or datetime (UTC)")
    rebuild.add_argument("--out", required=True, help="directory to write the snapshot into")
    rebuild.set_defaults(func=cmd_warehouse_rebuild)
