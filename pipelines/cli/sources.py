"""`benchpress sources`: the leaderboard sources and their URLs."""

from __future__ import annotations

import argparse
from typing import Any

import polars as pl

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT
from pipelines.sources import SOURCES
from predictor.cli.options import add_output_options
from predictor.cli.output import emit


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


def sources_arguments(sources: argparse.ArgumentParser) -> None:
    add_output_options(sources, csv_help="the sources as CSV, one row per URL")
    sources.set_defaults(func=cmd_sources)
