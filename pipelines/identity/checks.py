"""The identity gate, as pure functions (the Dagster asset check wraps them).

A frontier source whose rows stop resolving (it renamed its models, changed a key, added a
grammar the rules do not read) must not quietly shrink the matrix: when the share of its
placeable rows that stay unresolved exceeds the configured bound, the check fails. The frontier
sources are those whose models the matrix is about (`frontier` in their `Source`), not the long
tails of the Open LLM Leaderboard, EvalPlus or LiveCodeBench's few rows.

Placeable rows are rows with a value that are not deliberately excluded (human baselines, agent
systems, reviewed unmapped benchmarks); unresolved = `unresolved_model` + `unresolved_benchmark`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import polars as pl

from pipelines.sources import FRONTIER_SOURCES

# llm-stats carries ~150 benchmarks reported for one or two models each, left unmapped on
# purpose (12.6% of its rows on the embedded default); every other frontier source is under 4%.
DEFAULT_MAX_UNRESOLVED_SHARE = 0.15
MAX_UNRESOLVED_SHARE_ENV = "BENCHPRESS_MAX_UNRESOLVED_SHARE"


def max_unresolved_share() -> float:
    """The configured bound (environment `BENCHPRESS_MAX_UNRESOLVED_SHARE`, default 0.15)."""
    raw = os.environ.get(MAX_UNRESOLVED_SHARE_ENV)
    return float(raw) if raw not in (None, "") else DEFAULT_MAX_UNRESOLVED_SHARE


def unresolved_share_problems(
    summary: pl.DataFrame,
    bound: float,
    sources: Iterable[str] = FRONTIER_SOURCES,
) -> list[str]:
    """What is wrong, in words (empty = passed). `summary` is `resolve.summarise(...)`:
    one row per source with `unresolved_share`, `unresolved_model`, `unresolved_benchmark`."""
    wanted = set(sources)
    problems = []
    for row in summary.filter(pl.col("source").is_in(list(wanted))).iter_rows(named=True):
        share = float(row["unresolved_share"] or 0.0)
        if share > bound:
            problems.append(
                f"{row['source']}: {share:.1%} of placeable rows unresolved > bound {bound:.1%}"
                f" ({row['unresolved_model']} model, {row['unresolved_benchmark']} benchmark rows)"
            )
    return problems
