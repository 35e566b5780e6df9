"""`benchpress refresh`: run the whole pipeline once and publish a snapshot."""

from __future__ import annotations

import argparse
import sys
import traceback

from pipelines import run as pipeline_run  # run_refresh looked up when called (tests replace it)
from pipelines.fetch.transports import MODES
from pipelines.locking import EXIT_LOCKED, RefreshLocked
from pipelines.resources import check_settings
from pipelines.settings import DRIFT_CHECKS, refresh_workers
from predictor.cli.options import add_progress_option
from predictor.cli.output import EXIT_FAILED, progress_bar, state_reason
from predictor.util.paths import benchpress_home


def cmd_refresh(args: argparse.Namespace) -> int:
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
            outcome = pipeline_run.run_refresh(
                mode=args.mode,
                log_level="DEBUG" if args.verbose else "CRITICAL",
                accept_drift=args.accept_drift,
                wait=args.wait,
                progress=on_step if bar.enabled else None,
                workers=workers,
                fail_on_stale=args.fail_on_stale,
            )
        except RefreshLocked as exc:
            bar.close()
            print(f"benchpress: error: {exc}", file=sys.stderr)
            return EXIT_LOCKED
        except pipeline_run.DiskFull as exc:  # one line; the storage's traceback with --verbose
            bar.close()
            if args.verbose and exc.__cause__ is not None:
                traceback.print_exception(exc.__cause__, file=sys.stderr)
            print(f"benchpress: error: {exc}", file=sys.stderr)
            return EXIT_FAILED
    for run_id in outcome.recovered_runs:
        print(f"  closed run {run_id} of a refresh that was killed (its pool slot is free)")
    for source, result in sorted(outcome.source_outcomes.items()):
        print(f"  {source}: {result}")
    stale = len(outcome.stale_sources)
    if stale and outcome.failure is None:  # else the failure's one line says it
        print(
            f"warning: {stale} source(s) stale: their last good data stays in the matrix",
            file=sys.stderr,
        )
    for check in outcome.failed_checks:
        print(f"check failed: {check}", file=sys.stderr)
    for step in outcome.failed_steps:
        print(f"step failed: {step}", file=sys.stderr)
    if outcome.failure is not None:  # nothing fetched, or stale with --fail-on-stale
        print(f"benchpress: error: {outcome.failure}", file=sys.stderr)
        return EXIT_FAILED
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
    if outcome.reused:
        print(
            f"nothing new: reused snapshot {outcome.reused}, built from the same inputs "
            "(not refitted)"
        )
    state = "published" if outcome.published else "unchanged (identical content), latest is"
    same = " (the bundled snapshot's content, unchanged: this run had its inputs)"
    print(f"snapshot {state} {outcome.version}{same if outcome.reproduced else ''}")
    print(f"state: {state_line()}")
    return 0


def state_line() -> str:
    """Where the warehouse and snapshots live, and why there (the variable or the default)."""
    return f"{benchpress_home()} ({state_reason()})"


def refresh_arguments(refresh: argparse.ArgumentParser) -> None:
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
    refresh.add_argument(
        "--fail-on-stale",
        action="store_true",
        help="exit 1 when any source is stale (its fetch or parse failed, its last good data "
        "used); without it only a refresh that could fetch no source at all fails",
    )
    add_progress_option(
        refresh,
        help="a bar over the job's steps on stderr (default: only when stderr is a terminal "
        "and without --verbose; --progress forces it, --no-progress turns it off)",
    )
    refresh.set_defaults(func=cmd_refresh)
