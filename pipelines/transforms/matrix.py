"""Deduplicate normalized observations into one score per (model, benchmark), keeping conflicts.

Policy (documented in the README): among resolved observations of a cell, prefer the source
ranked first in SOURCE_PRIORITY (curated and first-party numbers before third-party
aggregators), then the most recently fetched, then a stable order on the row reference so
the choice never depends on input order. Every other observation more than
CONFLICT_THRESHOLD points away from the chosen one is kept in the conflicts table.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

SOURCE_PRIORITY: tuple[str, ...] = (
    "benchpress_matrix",  # audited citations, thinking-on headline numbers, pass@1
    "llm_stats",  # vendor-reported headline numbers
    "livebench",
    "swebench",
    "aider",
    "arc_prize",
    "lmarena",
    "livecodebench",
    "evalplus",
    "epoch_ai",  # aggregator: many numbers re-published from elsewhere
    "open_llm_leaderboard",
)
CONFLICT_THRESHOLD = 3.0
CELL = ["model_id", "benchmark_id"]


def _ranked(resolved: pl.DataFrame, priority: Sequence[str]) -> pl.DataFrame:
    rank = {source: i for i, source in enumerate(priority)}
    return resolved.with_columns(
        pl.col("source")
        .replace_strict(rank, default=len(rank), return_dtype=pl.Int32)
        .alias("source_rank")
    ).sort(
        [*CELL, "source_rank", "fetched_at", "row_ref", "model_key"],
        descending=[False, False, False, True, False, False],
        nulls_last=True,
    )


def build_matrix(
    normalized: pl.DataFrame,
    priority: Sequence[str] = SOURCE_PRIORITY,
    threshold: float = CONFLICT_THRESHOLD,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(cells, conflicts) from normalized rows; only rows with resolution == 'resolved' count."""
    resolved = normalized.filter(pl.col("resolution") == "resolved")
    ranked = _ranked(resolved, priority)
    counts = ranked.group_by(CELL).agg(pl.len().cast(pl.Int32).alias("n_observations"))
    chosen = ranked.unique(subset=CELL, keep="first", maintain_order=True)
    cells = (
        chosen.join(counts, on=CELL)
        .select(
            *CELL,
            "score",
            "source",
            "payload_url",
            "payload_sha256",
            "fetched_at",
            "model_key",
            "n_observations",
        )
        .sort(CELL)
    )
    others = ranked.join(
        chosen.select(
            *CELL,
            pl.col("score").alias("chosen_score"),
            pl.col("source").alias("cs"),
            pl.col("row_ref").alias("chosen_ref"),
            pl.col("payload_url").alias("cu"),
        ),
        on=CELL,
    ).filter(
        ~((pl.col("row_ref") == pl.col("chosen_ref")) & (pl.col("payload_url") == pl.col("cu")))
    )
    conflicts = (
        others.with_columns((pl.col("score") - pl.col("chosen_score")).abs().alias("difference"))
        .filter(pl.col("difference") > threshold)
        .select(
            *CELL,
            "chosen_score",
            pl.col("cs").alias("chosen_source"),
            pl.col("score").alias("other_score"),
            pl.col("source").alias("other_source"),
            "difference",
        )
        .sort([*CELL, "other_source", "other_score"])
    )
    return cells, conflicts


def select_for_fit(cells: pl.DataFrame, min_per_model: int, min_per_benchmark: int) -> pl.DataFrame:
    """Drop sparse rows and columns until every kept model and benchmark meets its minimum."""
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
