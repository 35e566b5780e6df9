"""The odds of a Compare answer (`/api/compare`): per benchmark each model's P(best), expected
rank and P(A > B) against every other model, and P(best) and expected rank across the
benchmarks shown.

The cells are ranked as `benchpress compare` ranks models (`predictor.trust.rankings`): a
prediction +- its interval's spread, an observed score +- its benchmark's default noise; the
figures are `Comparison.to_frame()`, `.pairwise()` and `.overall()`
(`predictor.trust.standings`). A model without a value on a benchmark is left out of that
benchmark's odds (null) and the benchmark out of the figures across benchmarks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from predictor.fitted_matrix import FittedMatrix
from predictor.trust.rankings import Comparison, rank_cells
from predictor.web import figures


def odds(
    bench: FittedMatrix,
    models: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    level: float,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(per row of `rows`, its `p_best`, `expected_rank` and `p_better` (a models x models
    matrix, row model better than column model) aligned to `models`; the figures across the
    benchmarks: `benchmarks` counted, `p_best` and `expected_rank` aligned to `models`)."""
    ranked = []  # (row number, ranking) of the rows where two or more models have a value
    for k, row in enumerate(rows):
        cells = {
            m: v
            for m, v in zip(models, row["values"], strict=True)
            if v is not None and v.get("score") is not None
        }
        if len(cells) >= 2:
            ranked.append((k, rank_cells(bench, row["benchmark"], cells, level)))
    empty = [None] * len(models)
    out = [
        {"p_best": empty, "expected_rank": empty, "p_better": [empty] * len(models)} for _ in rows
    ]
    across = {"benchmarks": [], "p_best": empty, "expected_rank": empty}
    if not ranked:
        return out, across
    comparison = Comparison([r for _, r in ranked], level)
    frame = comparison.to_frame()
    pairs = comparison.pairwise()
    for k, ranking in ranked:
        mine = frame.filter(frame["benchmark"] == ranking.benchmark)
        by_model = {r["model"]: r for r in mine.iter_rows(named=True)}
        p = {
            (r["a"], r["b"]): r["p_a_better"]
            for r in pairs.filter(pairs["benchmark"] == ranking.benchmark).iter_rows(named=True)
        }
        out[k] = {
            "p_best": [_number(by_model, m, "p_best") for m in models],
            "expected_rank": [_number(by_model, m, "expected_rank") for m in models],
            "p_better": [[_pair(p, a, b) for b in models] for a in models],
        }
    every = comparison.overall()
    if every.height == len(models):  # some benchmark ranks every model
        at = {r["model"]: r for r in every.iter_rows(named=True)}
        full = [r.benchmark for _, r in ranked if len(r.order) == len(models)]
        across = {
            "benchmarks": full,
            "p_best": [figures.number(at[m]["p_best"]) for m in models],
            "expected_rank": [figures.number(at[m]["expected_rank"]) for m in models],
        }
    return out, across


def _number(by_model: Mapping[str, Mapping[str, Any]], model: str, column: str) -> Any:
    row = by_model.get(model)
    return None if row is None else figures.number(row[column])


def _pair(p: Mapping[tuple[str, str], float], a: str, b: str) -> Any:
    found = p.get((a, b))
    return None if found is None else figures.number(found)
