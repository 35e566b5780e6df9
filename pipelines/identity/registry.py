"""The reviewed identity tables shipped in the repo (CSV files beside this module)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

IDENTITY_DIR = Path(__file__).resolve().parent
CANONICAL_SOURCE = "benchpress_matrix"  # its ids define the canonical id space

# Units whose values are fractions of 1 and become percent; everything else not percent is an
# open scale (Elo, ratings, dollars, minutes, indexes) that stays as published.
FRACTION_UNITS = frozenset({"fraction"})
PERCENT_UNITS = frozenset({"percent"})


@dataclass(frozen=True)
class Registry:
    benchmarks: pl.DataFrame  # benchmark_id, name, scale, unit
    benchmark_aliases: pl.DataFrame  # source, benchmark_key, benchmark_id
    model_aliases: pl.DataFrame  # source ("*" = any), model_key, model_id


def load_registry(directory: Path = IDENTITY_DIR) -> Registry:
    def read(name: str) -> pl.DataFrame:
        return pl.read_csv(directory / name, infer_schema=False)

    registry = Registry(
        read("benchmarks.csv"), read("benchmark_aliases.csv"), read("model_aliases.csv")
    )
    unknown = registry.benchmark_aliases.join(registry.benchmarks, on="benchmark_id", how="anti")
    if unknown.height:
        raise ValueError(
            f"benchmark_aliases.csv points at unknown ids: {unknown['benchmark_id'].to_list()}"
        )
    duplicated = registry.benchmarks.filter(pl.col("benchmark_id").is_duplicated())
    if duplicated.height:
        raise ValueError(f"benchmarks.csv repeats ids: {duplicated['benchmark_id'].to_list()}")
    return registry
