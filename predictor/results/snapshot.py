"""A results frame put on one snapshot: benchmark names as ids, fitted or not, scores in range.

`predictor.results.read_results` needs no snapshot: a tidy table's benchmark is kept as the
user spelt it, and a mapped benchmark may be one the loaded snapshot never fitted.
`on_snapshot` (what `BenchPress.read_results` and `BenchPress.predict` call) resolves every
spelling through the snapshot's names, marks rows whose benchmark the fit does not hold as
`not_fitted` (kept and listed, never used as a probe) and refuses a score outside its
benchmark's range, naming the file it came from.

Plain Python over the frame's columns: it runs once per prediction, on a few rows, where
each Polars query would cost more than the whole loop."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping

import polars as pl

from predictor.names.resolve import AmbiguousNameError, UnknownNameError
from predictor.results.errors import ResultsError
from predictor.results.frame import MAPPED, NOT_FITTED
from predictor.results.tidy_fractions import converted_fractions

BY_MAP = "mapped by --map"  # the note `mapping.map_rows` gives an override


def _origin(row: Mapping[str, object]) -> tuple[str, str]:
    """(where, field) a benchmark name came from: --map, a tidy file's column, a map table."""
    if row["note"] == BY_MAP:
        return "--map", f"{row['task']}={row['benchmark_id']}"
    if row["format"] == "tidy":
        return str(row["file"]), "benchmark"
    return str(row["file"]), f"task {row['task']!r}"


def _unknown(name: str, exc: UnknownNameError, row: Mapping[str, object], version: str):
    where, field = _origin(row)
    if isinstance(exc, AmbiguousNameError):
        problem = f"benchmark {name!r} is ambiguous"
        hint = f"it could be {', '.join(exc.suggestions)}; write one of these ids"
    else:
        problem = f"unknown benchmark {name!r} in snapshot {version}"
        close = f"did you mean: {', '.join(exc.suggestions)}? " if exc.suggestions else ""
        hint = f"{close}write a benchmark id or name, or map it: --map '{name}=BENCHMARK'"
    return ResultsError(where, problem, field, hint)


def _resolve_all(
    frame: pl.DataFrame, ids: list[str | None], resolve: Callable[[str], str], version: str
) -> dict[str, str]:
    """name -> canonical id for every benchmark name the frame's usable rows carry."""
    canonical: dict[str, str] = {}
    for index, name in enumerate(ids):
        if name is None or name in canonical:
            continue
        try:
            canonical[name] = resolve(name)
        except UnknownNameError as exc:  # AmbiguousNameError too
            raise _unknown(name, exc, frame.row(index, named=True), version) from None
    return canonical


def _check_ranges(
    frame: pl.DataFrame,
    ids: list[str | None],
    statuses: list[str],
    ranges: Mapping[str, tuple[float, float]],
) -> None:
    """A usable score outside its benchmark's range is the file's error, named as such."""
    for index, score in enumerate(frame["score"].to_list()):
        if statuses[index] != MAPPED or score is None:
            continue
        low, high = ranges.get(ids[index], (-math.inf, math.inf))
        if not low <= score <= high:
            row = frame.row(index, named=True)
            where, field = _origin(row)
            raise ResultsError(
                where,
                f"score {score:g} for {ids[index]} lies outside its range {low:g} to {high:g}",
                field,
                hint="percent benchmarks take 0-100: is the score a fraction or on another "
                "scale, or the task mapped on the wrong benchmark?",
            )


def on_snapshot(
    frame: pl.DataFrame,
    resolve: Callable[[str], str],
    fitted: Collection[str],
    ranges: Mapping[str, tuple[float, float]],
    version: str,
    percent: Collection[str] = frozenset(),
) -> pl.DataFrame:
    """`frame` with canonical benchmark ids, `not_fitted` rows marked, a tidy file's
    fractions on `percent` benchmarks converted (`tidy_fractions`), ranges checked.

    Idempotent: a frame already put on the snapshot comes back equal."""
    ids = frame["benchmark_id"].to_list()
    canonical = _resolve_all(frame, ids, resolve, version)
    changed: list[pl.Series] = []
    if any(name != id_ for name, id_ in canonical.items()):
        ids = [None if b is None else canonical[b] for b in ids]
        changed.append(pl.Series("benchmark_id", ids, dtype=pl.String))
    statuses = frame["status"].to_list()
    outside = [s == MAPPED and b not in fitted for s, b in zip(statuses, ids, strict=True)]
    if any(outside):
        why = f"not fitted in snapshot {version} (too few scores to be a probe)"
        notes = [
            (f"{note}; {why}" if note else why) if out else note
            for note, out in zip(frame["note"].to_list(), outside, strict=True)
        ]
        statuses = [NOT_FITTED if out else s for s, out in zip(statuses, outside, strict=True)]
        changed.append(pl.Series("status", statuses, dtype=pl.String))
        changed.append(pl.Series("note", notes, dtype=pl.String))
    if changed:
        frame = frame.with_columns(changed)
    frame = converted_fractions(frame, ids, statuses, percent)
    _check_ranges(frame, ids, statuses, ranges)
    return frame
