"""`benchpress warehouse stats | rebuild`: inspect the DuckDB warehouse, or rebuild the
matrix and fit as of a past date from its history."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.settings import fit_params
from pipelines.sources import LONG_TAIL
from pipelines.stages.rebuild import rebuild_as_of
from predictor.cli.options import add_output_options
from predictor.cli.output import EXIT_FAILED, emit, print_table
from predictor.util.paths import warehouse_path
from warehouse.db import connect
from warehouse.ducklake import warehouse_backend
from warehouse.stats import warehouse_stats


def stats_frame(stats: dict[str, Any]) -> pl.DataFrame:
    """`--csv` of `warehouse stats`: one row per source, `source` then its figures as
    `warehouse.stats.warehouse_stats()["sources"]` gives them (the matrix totals are not
    per source: they are in --json and the table)."""
    rows = [{"source": source, **facts} for source, facts in stats["sources"].items()]
    return pl.DataFrame(rows, infer_schema_length=None)


def cmd_warehouse_stats(args: argparse.Namespace) -> int:
    stats = warehouse_stats(long_tail=LONG_TAIL)
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
    "rows placed": "resolution_rate",  # share of ALL rows, excluded and rejected ones too
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


PLACED_LEGEND = (
    "rows placed = the share of a source's rows that became matrix cells; the others were "
    "excluded (humans, agent systems, ensembles), rejected, or unresolved (their distinct "
    "names are the unresolved columns)"
)


def _kept_out(facts: dict[str, Any]) -> str | None:
    """Why a source's rows were not placed, by kind; None when every row was."""
    counts = {
        "excluded (humans, agent systems, ensembles)": facts.get("excluded_rows") or 0,
        "rejected": facts.get("rejected_rows") or 0,
        "unresolved": facts.get("unresolved_rows") or 0,
    }
    total = sum(counts.values())
    if not total:
        return None
    parts = ", ".join(f"{n:,} {kind}" for kind, n in counts.items() if n)
    return f"{total:,} rows not placed: {parts}"


def print_stats(stats: dict[str, Any]) -> None:
    """A table of the sources, why a stale one is stale, then the matrix in one sentence."""
    rows = [
        {head: _figure({"source": s, **f}.get(key), key) for head, key in STATS_COLUMNS.items()}
        for s, f in stats["sources"].items()
    ]
    print_table(rows, list(STATS_COLUMNS))
    print(PLACED_LEGEND)
    for source, facts in stats["sources"].items():
        if (kept_out := _kept_out(facts)) is not None:
            print(f"{source}: {kept_out}")
    for source, facts in stats["sources"].items():
        if facts.get("error"):
            print(f"{source} is stale since {facts['error_at']}: {facts['error']}")
    m = stats["matrix"]
    without = "".join(
        f" (without {name}: {rest['models']:,} models x {rest['benchmarks']:,} benchmarks, "
        f"{rest['cells']:,} cells)"
        for source, name in LONG_TAIL.items()
        if (rest := m.get(f"without_{source}")) is not None
    )
    print(
        f"matrix: {m['models']:,} models x {m['benchmarks']:,} benchmarks, {m['cells']:,} cells, "
        f"{m['conflicts']:,} conflicts{without}"
    )


def cmd_warehouse_rebuild(args: argparse.Namespace) -> int:
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


def warehouse_arguments(warehouse: argparse.ArgumentParser) -> None:
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
