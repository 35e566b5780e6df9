"""Measurement noise of a score: the binomial rule, and the default a published score carries.

A benchmark score is a measurement: the share of a finite set of items a run got right, under
one prompt format and sampling seed. Run it again and it moves. Two numbers here:

- `binomial_stderr(score, n)`: the standard error of an accuracy over `n` items,
  sqrt(p (1 - p) / n) in points (p kept at least half an item from 0 and 1, so a perfect
  score on 30 items is not taken as exact). What a results file stating its item count
  but no standard error is read with.
- `published_noise(benchmark, scale, unit, score)`: the noise an observed score of a
  benchmark carries when nothing says otherwise. Percent benchmarks: the larger of
  `RUN_TO_RUN_POINTS` (1 point: the run-to-run spread of one model on one benchmark across
  prompt formats and seeds, which the benchmark guide this project follows puts at 1-2
  points, "treat 72 vs 74 as equivalent") and the binomial error over the benchmark's
  items where the task facts know them (`facts/tasks.csv` through the map tables: GPQA
  Diamond's 198 items give 3.5 points at 50%, AIME's 30 give 9). Arena ratings (unit
  `elo`): `ARENA_ELO_SD`, from the median 95% interval of LMArena's text leaderboard
  (+-5 over 266 models, recorded 2025-08-04: an sd of 5 / 1.96). Other open scales
  (dollars, minutes, indices): none known, so 0, said as such.

Comparisons (`predictor.trust.rankings`, `benchpress track`) take observed scores as score
+- this noise unless a standard error was given; the fold-in (`BenchPress.predict`) adds only
what a given standard error exceeds it by, since the fit's own noise already holds the noise
of the published scores it was fitted on.
"""

from __future__ import annotations

import math
from functools import cache

from predictor.results.mapping import load_map
from predictor.results.task_facts import load_facts
from predictor.values import Noise

RUN_TO_RUN_POINTS = 1.0  # percent benchmarks: the floor of a published score's noise
ARENA_ELO_SD = 2.5  # LMArena's median 95% interval +-5 Elo, as an sd (5 / 1.96)
# the tools whose task facts give a benchmark's item count (their map tables' format names)
_TOOLS_WITH_FACTS = ("lm_eval", "inspect")


def binomial_stderr(score: float, n: int) -> float:
    """Standard error in points of a percent score over `n` items: sqrt(p (1 - p) / n) x 100
    with p the score's share, kept at least half an item from 0 and 1."""
    if n < 1:
        raise ValueError(f"n must be at least 1 item, got {n}")
    half = 0.5 / n
    p = min(max(score / 100.0, half), 1.0 - half)
    return 100.0 * math.sqrt(p * (1.0 - p) / n)


@cache
def benchmark_items() -> dict[str, int]:
    """benchmark id -> its items, from the tasks the map tables point at it (the largest:
    the whole benchmark where a tool also offers a part of it)."""
    facts = load_facts()
    items: dict[str, int] = {}
    for tool in _TOOLS_WITH_FACTS:
        for task, entries in load_map(tool).items():
            fact = facts.get((tool, task))
            if fact is None or not fact.items:
                continue
            for entry in entries:
                if entry.benchmark_id:
                    items[entry.benchmark_id] = max(items.get(entry.benchmark_id, 0), fact.items)
    return items


def published_noise(benchmark: str, scale: str, unit: str | None, score: float) -> Noise:
    """The noise an observed `score` of `benchmark` is taken with when no standard error is
    known (module docstring); `source` says which rule gave it."""
    if scale == "percent":
        items = benchmark_items().get(benchmark)
        if items is not None:
            binomial = binomial_stderr(score, items)
            if binomial > RUN_TO_RUN_POINTS:
                return Noise(binomial, f"default: binomial over {items:,} items")
        return Noise(RUN_TO_RUN_POINTS, f"default: {RUN_TO_RUN_POINTS:g} point run-to-run")
    if unit == "elo":
        return Noise(ARENA_ELO_SD, "default: arena 95% interval +-5")
    return Noise(0.0, f"none known for {unit or 'this scale'}: taken as exact")
