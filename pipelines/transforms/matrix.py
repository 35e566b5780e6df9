"""Deduplicate normalized observations into one score per (model, benchmark), keeping conflicts.

Identity already separates what must not be merged: the model id carries the setting (reasoning
effort, thinking budget: `gpt-5` is GPT-5 at high effort, `gpt-5@medium` another row), and the
benchmark id carries what changes the measurement (`hle` vs `hle_tools`, Aider's diff vs whole
edit format, SWE-bench Verified with the vendor's harness vs the bash-only scaffold). What is left
in one cell are several reports of the same measurement. Among the resolved observations of a
cell the published one is chosen by, in order:

1. `benchpress_matrix` first: audited citations at BenchPress's canonical setting (thinking-on
   headline numbers, no tools, pass@1), so the reference matrix is reproduced exactly;
2. the benchmark's owner (`owner_source` in `benchmarks.csv`: the leaderboard that runs the
   benchmark - ARC Prize for ARC-AGI, LiveBench for its tasks, Aider for its leaderboards,
   SWE-bench for the bash-only board, Epoch AI for its own runs, LMArena for arena scores);
3. first-party (vendor-reported) numbers (`llm_stats`), then the other leaderboards, then
   aggregators that republish third-party numbers (`epoch_ai`'s `*_external` files) - the
   order of SOURCE_PRIORITY, each source's `priority` (`pipelines.sources`);
4. within one source, the preferred setting: the benchmark's `reference_agent` (Terminus 2 for
   Terminal-Bench), then rows that name no agent or scaffold, then the rest;
5. the newest evaluation date, then the most recently fetched payload, then the row order in
   the payload (row references in numeric order: `line 3` before `line 129`, so a row appended
   below never wins a tie), so the choice never depends on input order.

Sources where one payload legitimately gives a key twice (Epoch's results from several papers,
llm-stats' records with and without tools) name every row of the key in `same_key_rows`; other
sources refuse such a payload when parsing (`pipelines/sources/base.py`).

Every other observation more than CONFLICT_THRESHOLD points away from the chosen score (on the
benchmark's own scale, percent points for percent benchmarks) is kept in the conflicts table
with both sides' source, model key, agent, URL and row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from pipelines.identity.registry import CANONICAL_SOURCE, load_registry
from pipelines.sources import SOURCE_PRIORITY
from pipelines.sources.base import natural_order
from predictor.snapshots.layout import MATRIX_CELL_COLUMNS

CONFLICT_THRESHOLD = 3.0
CELL = ["model_id", "benchmark_id"]
# The score matrix's columns: the snapshot's cells table before `payload_url` becomes `url`
# (`predictor.snapshots.layout`).
CELL_COLUMNS = MATRIX_CELL_COLUMNS


def _benchmark_facts(benchmarks: pl.DataFrame | None) -> tuple[dict[str, str], dict[str, str]]:
    if benchmarks is None:
        benchmarks = load_registry().benchmarks
    owners: dict[str, str] = {}
    agents: dict[str, str] = {}
    for row in benchmarks.iter_rows(named=True):
        if row.get("owner_source"):
            owners[row["benchmark_id"]] = row["owner_source"]
        if row.get("reference_agent"):
            agents[row["benchmark_id"]] = row["reference_agent"]
    return owners, agents


def _ranked(
    resolved: pl.DataFrame,
    priority: Sequence[str],
    owners: Mapping[str, str],
    reference_agents: Mapping[str, str],
) -> pl.DataFrame:
    rank = {source: i + 2 for i, source in enumerate(priority)}

    def lookup(mapping: Mapping[str, str]) -> pl.Expr:
        if not mapping:
            return pl.lit(None, pl.String)
        return pl.col("benchmark_id").replace_strict(dict(mapping), default=None)

    source_rank = (
        pl.when(pl.col("source") == CANONICAL_SOURCE)
        .then(0)
        .when(pl.col("source") == lookup(owners))
        .then(1)
        .otherwise(pl.col("source").replace_strict(rank, default=len(rank) + 2))
        .cast(pl.Int32)
    )
    reference = lookup(reference_agents)
    agent_rank = (
        pl.when(pl.col("agent").is_not_null() & (pl.col("agent") == reference))
        .then(0)
        .when(pl.col("agent").is_null())
        .then(1)
        .otherwise(2)
        .cast(pl.Int32)
    )
    row_order = pl.col("row_ref").map_elements(natural_order, return_dtype=pl.String)
    return (
        resolved.with_columns(
            source_rank.alias("source_rank"),
            agent_rank.alias("agent_rank"),
            row_order.alias("_row_order"),
        )
        .sort(
            [
                *CELL,
                "source_rank",
                "agent_rank",
                "eval_date",
                "fetched_at",
                "_row_order",
                "row_ref",
                "model_key",
            ],
            descending=[False, False, False, False, True, True, False, False, False],
            nulls_last=True,
        )
        .drop("_row_order")
    )


def build_matrix(
    normalized: pl.DataFrame,
    priority: Sequence[str] = SOURCE_PRIORITY,
    threshold: float = CONFLICT_THRESHOLD,
    benchmarks: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(cells, conflicts) from normalized rows; only rows with resolution == 'resolved' count.

    `benchmarks` is the registry's benchmark table (owner source, reference agent); the shipped
    registry is read when it is not given."""
    owners, agents = _benchmark_facts(benchmarks)
    resolved = normalized.filter(pl.col("resolution") == "resolved")
    for column, dtype in (("agent", pl.String), ("eval_date", pl.String)):
        if column not in resolved.columns:  # rows normalised before migration 002
            resolved = resolved.with_columns(pl.lit(None, dtype).alias(column))
    if "model_setting" not in resolved.columns:
        resolved = resolved.with_columns(pl.col("setting").alias("model_setting"))
    ranked = _ranked(resolved, priority, owners, agents)
    counts = ranked.group_by(CELL).agg(
        pl.len().cast(pl.Int32).alias("n_observations"),
        pl.col("source").n_unique().cast(pl.Int32).alias("n_sources"),
    )
    chosen = ranked.unique(subset=CELL, keep="first", maintain_order=True)
    cells = (
        chosen.join(counts, on=CELL)
        .with_columns(pl.col("model_setting").alias("setting"))
        .select(CELL_COLUMNS)
        .sort(CELL)
    )
    side = ["score", "source", "model_key", "agent", "payload_url", "row_ref"]
    others = ranked.join(
        chosen.select(*CELL, *[pl.col(c).alias(f"chosen_{c}") for c in side]),
        on=CELL,
    ).filter(
        ~(
            (pl.col("row_ref") == pl.col("chosen_row_ref"))
            & (pl.col("payload_url") == pl.col("chosen_payload_url"))
            & (pl.col("source") == pl.col("chosen_source"))
        )
    )
    conflicts = (
        others.with_columns((pl.col("score") - pl.col("chosen_score")).abs().alias("difference"))
        .filter(pl.col("difference") > threshold)
        .select(
            *CELL,
            "chosen_score",
            "chosen_source",
            pl.col("score").alias("other_score"),
            pl.col("source").alias("other_source"),
            "difference",
            "chosen_model_key",
            "chosen_agent",
            pl.col("chosen_payload_url").alias("chosen_url"),
            "chosen_row_ref",
            pl.col("model_key").alias("other_model_key"),
            pl.col("agent").alias("other_agent"),
            pl.col("payload_url").alias("other_url"),
            pl.col("row_ref").alias("other_row_ref"),
        )
        .sort([*CELL, "other_source", "other_score", "other_row_ref"])
    )
    return cells, conflicts


def select_for_fit(cells: pl.DataFrame, min_per_model: int, min_per_benchmark: int) -> pl.DataFrame:
    """Drop sparse rows and columns until every kept model and benchmark meets its minimum
    (BenchPress uses 15 observations per model and 8 per benchmark); the snapshot still keeps
    every resolved cell, only the fit is restricted."""
    kept = cells
    while True:
        per_model = kept.group_by("model_id").len()
        per_bench = kept.group_by("benchmark_id").len()
        good_models = per_model.filter(pl.col("len") >= min_per_model)["model_id"]
        good_benches = per_bench.filter(pl.col("len") >= min_per_benchmark)["benchmark_id"]
        pruned = kept.filter(
            pl.col("model_id").is_in(good_models.implode())
            & pl.col("benchmark_id").is_in(good_benches.implode())
        )
        if pruned.height == kept.height:
            return pruned
        kept = pruned
