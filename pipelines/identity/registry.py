"""The reviewed identity tables shipped in the repo (CSV files beside this module).

- `benchmarks.csv`: the benchmark registry. `benchmark_id` (BenchPress ids wherever BenchPress
  has the benchmark), display `name`, `scale` (`percent` 0-100 or `unbounded`), `unit` (what a
  score is: percent, elo, rating, dollars, minutes, index, points, score), `category`,
  `direction` (higher/lower is better), the valid range `lower`..`upper` (values outside are
  rejected), `owner_source` (the leaderboard that runs the benchmark: first choice among
  third-party sources), `reference_agent` (the harness preferred when a source reports several),
  `cost_facts` (where a source gives cost), `note`.
- `benchmark_aliases.csv`: `source`, `benchmark_key`, `agent` (empty = any; a glob on the row's
  agent / scaffold / edit format otherwise: Aider's diff and whole formats are different
  benchmarks), `benchmark_id` (empty = deliberately not mapped, reason in `note`).
- `models.csv`: the model catalogue (see `catalogue.py`).
- `model_aliases.csv`: reviewed exceptions the rules cannot place: `source` (`*` = any),
  `name` (the source's name, or the normalised base of an undated name), `action` (`map`,
  `unresolved`, `exclude` = not a model: humans, agent systems), `model_id`, optional validity
  window `valid_from`..`valid_to` (evaluation date, end exclusive) for moving aliases such as
  `deepseek-reasoner`, and a `note` saying why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from pipelines.identity.catalogue import Catalogue

IDENTITY_DIR = Path(__file__).resolve().parent
CANONICAL_SOURCE = "benchpress_matrix"  # its ids define the canonical id space

# Units whose values are fractions of 1 and become percent; everything else not percent is an
# open scale (Elo, ratings, dollars, minutes, indexes) that stays as published.
FRACTION_UNITS = frozenset({"fraction"})
# Distances on 0-1 (lower is better): 100 x (1 - d) on a higher-is-better percent benchmark,
# 100 x d on a lower-is-better one.
DISTANCE_UNITS = frozenset({"edit_distance"})
PERCENT_UNITS = frozenset({"percent"})
SCALES = frozenset({"percent", "unbounded"})
DIRECTIONS = frozenset({"higher", "lower"})
ACTIONS = frozenset({"map", "unresolved", "exclude"})


@dataclass(frozen=True)
class Registry:
    benchmarks: pl.DataFrame  # benchmark_id, name, scale, unit, category, direction, lower, ...
    benchmark_aliases: pl.DataFrame  # source, benchmark_key, agent, benchmark_id, note
    model_aliases: pl.DataFrame  # source, name, action, model_id, valid_from, valid_to, note
    catalogue: Catalogue


def _read(directory: Path, name: str) -> pl.DataFrame:
    frame = pl.read_csv(directory / name, infer_schema=False)
    return frame.with_columns(pl.col(c).fill_null("") for c in frame.columns)


def _check_benchmarks(benchmarks: pl.DataFrame, aliases: pl.DataFrame) -> None:
    duplicated = benchmarks.filter(pl.col("benchmark_id").is_duplicated())
    if duplicated.height:
        raise ValueError(f"benchmarks.csv repeats ids: {duplicated['benchmark_id'].to_list()}")
    bad_scale = benchmarks.filter(~pl.col("scale").is_in(list(SCALES)))
    if bad_scale.height:
        raise ValueError(f"benchmarks.csv: unknown scale for {bad_scale['benchmark_id'].to_list()}")
    bad_dir = benchmarks.filter(~pl.col("direction").is_in(list(DIRECTIONS)))
    if bad_dir.height:
        raise ValueError(f"benchmarks.csv: bad direction for {bad_dir['benchmark_id'].to_list()}")
    mapped = aliases.filter(pl.col("benchmark_id") != "")
    unknown = mapped.join(benchmarks, on="benchmark_id", how="anti")
    if unknown.height:
        raise ValueError(
            f"benchmark_aliases.csv points at unknown ids: {unknown['benchmark_id'].to_list()}"
        )
    repeated = aliases.filter(pl.struct("source", "benchmark_key", "agent").is_duplicated())
    if repeated.height:
        raise ValueError(f"benchmark_aliases.csv repeats keys: {repeated.rows()[:5]}")


def _check_models(catalogue: Catalogue, aliases: pl.DataFrame) -> None:
    seen: dict[str, str] = {}
    for row in catalogue.rows:
        if row.benchpress_id:
            owner = seen.setdefault(row.benchpress_id, row.model)
            if owner != row.model:
                raise ValueError(
                    f"models.csv: {row.benchpress_id} given to {owner} and {row.model}"
                )
    stems = set(catalogue.by_model)
    clash = {bp for bp, r in catalogue.by_benchpress.items() if bp in stems and bp != r.model}
    if clash:
        raise ValueError(f"models.csv: BenchPress ids used as another model's stem: {clash}")
    bad = aliases.filter(~pl.col("action").is_in(list(ACTIONS)))
    if bad.height:
        raise ValueError(f"model_aliases.csv: unknown action in {bad.rows()[:3]}")
    missing = aliases.filter((pl.col("action") == "map") & (pl.col("model_id") == ""))
    if missing.height:
        raise ValueError(f"model_aliases.csv: map without model_id: {missing.rows()[:3]}")


def load_registry(directory: Path = IDENTITY_DIR) -> Registry:
    benchmarks = _read(directory, "benchmarks.csv").with_columns(
        pl.col("lower").cast(pl.Float64, strict=False),
        pl.col("upper").cast(pl.Float64, strict=False),
    )
    benchmark_aliases = _read(directory, "benchmark_aliases.csv")
    model_aliases = _read(directory, "model_aliases.csv")
    catalogue = Catalogue.load(directory / "models.csv")
    _check_benchmarks(benchmarks, benchmark_aliases)
    _check_models(catalogue, model_aliases)
    return Registry(benchmarks, benchmark_aliases, model_aliases, catalogue)
