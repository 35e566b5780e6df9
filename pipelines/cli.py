"""Pipeline commands for `benchpress`: refresh, sources, warehouse (entry point
`benchpress.commands`)."""

from __future__ import annotations

import argparse
import json
import sys

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, MODES
from pipelines.sources import SOURCES


def cmd_refresh(args: argparse.Namespace) -> int:
    from pipelines.run import run_refresh

    outcome = run_refresh(mode=args.mode, log_level="DEBUG" if args.verbose else "WARNING")
    for source, result in sorted(outcome.source_outcomes.items()):
        print(f"  {source}: {result}")
    if outcome.failed_checks:
        for check in outcome.failed_checks:
            print(f"check failed: {check}", file=sys.stderr)
    if outcome.failed_steps:
        for step in outcome.failed_steps:
            print(f"step failed: {step}", file=sys.stderr)
    if not outcome.success:
        print(
            "benchpress: refresh did not publish; the previous snapshot stays latest",
            file=sys.stderr,
        )
        return 1
    state = "published" if outcome.published else "unchanged (identical content), latest is"
    print(f"snapshot {state} {outcome.version}")
    return 0


def cmd_sources(args: argparse.Namespace) -> int:
    described = [source.describe() for source in SOURCES.values()]
    if args.json:
        print(json.dumps({"replay_root": str(DEFAULT_REPLAY_ROOT), "sources": described}, indent=2))
    else:
        for source in described:
            print(f"{source['id']}: {source['title']}")
            for url in source["urls"]:
                print(f"    {url}")
        print(f"replay root: {DEFAULT_REPLAY_ROOT}")
    return 0


def cmd_warehouse_stats(args: argparse.Namespace) -> int:
    from warehouse.stats import warehouse_stats

    stats = warehouse_stats()
    if args.json:
        print(json.dumps(stats, indent=2, default=str))
    else:
        for source, facts in stats["sources"].items():
            print(f"{source}: " + ", ".join(f"{k}={v}" for k, v in facts.items()))
        print(f"matrix: {stats['matrix']}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    refresh = sub.add_parser("refresh", help="run the whole pipeline once and publish")
    refresh.add_argument(
        "--mode", choices=MODES, help="fetch transport (default: replay, or BENCHPRESS_FETCH_MODE)"
    )
    refresh.add_argument("--verbose", action="store_true", help="show Dagster's step log")
    refresh.set_defaults(func=cmd_refresh)

    sources = sub.add_parser("sources", help="list leaderboard sources and their URLs")
    sources.add_argument("--json", action="store_true")
    sources.set_defaults(func=cmd_sources)

    warehouse = sub.add_parser("warehouse", help="inspect the DuckDB warehouse")
    wsub = warehouse.add_subparsers(dest="warehouse_command", required=True, metavar="ACTION")
    stats = wsub.add_parser("stats", help="per-source payloads, rows, models, benchmarks")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(func=cmd_warehouse_stats)
