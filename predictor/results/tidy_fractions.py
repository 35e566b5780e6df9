"""Tidy tables that give fractions (0.7 for 70%): converted to percent, with a warning.

lm-eval, Inspect, EEE and HELM files state their unit, so their fractions are converted as
they are read (`predictor.results.mapping`). A tidy `model,benchmark,score` table states none:
its scores are taken as written, on the benchmark's own scale. A file whose every score on a
percent benchmark lies in 0-1 (some above 0) gives fractions, as a file of percentages gives
at least one score above 1: those scores are multiplied by 100 (unit `fraction`, `raw_score` as
written) and `FractionScoresWarning` names the file and what changed. Scores on open scales
(Elo, `codeforces_rating`, dollars) are never touched, and a file mixing fractions with
percentages is left as written (`predict` warns about each fraction-like score there).

Needs the snapshot's scales, so `predictor.results.snapshot.on_snapshot` calls it once the
benchmark names are ids. Idempotent: converted rows carry the unit `fraction`."""

from __future__ import annotations

import warnings
from collections.abc import Collection

import polars as pl

from predictor.results.frame import MAPPED, NOT_FITTED
from predictor.values import FractionScoresWarning

SHOWN = 3  # scores named in the warning


def _fraction_files(
    frame: pl.DataFrame, ids: list[str | None], statuses: list[str], percent: Collection[str]
) -> dict[str, list[int]]:
    """file -> its rows to convert, for every tidy file that gives fractions."""
    rows: dict[str, list[int]] = {}
    files, formats, units = frame["file"].to_list(), frame["format"], frame["unit"]
    for index, (fmt, unit, score) in enumerate(
        zip(formats.to_list(), units.to_list(), frame["score"].to_list(), strict=True)
    ):
        usable = statuses[index] in (MAPPED, NOT_FITTED) and score is not None
        if fmt == "tidy" and unit == "value" and usable and ids[index] in percent:
            rows.setdefault(files[index], []).append(index)
    scores = frame["score"].to_list()
    return {
        file: found
        for file, found in rows.items()
        if all(scores[i] <= 1.0 for i in found) and any(scores[i] > 0.0 for i in found)
    }


def converted_fractions(
    frame: pl.DataFrame, ids: list[str | None], statuses: list[str], percent: Collection[str]
) -> pl.DataFrame:
    """`frame` with the fractions of tidy files that give them as percentages (x100), each
    such file named in a `FractionScoresWarning`; `ids` and `statuses` are the frame's
    canonical benchmark ids and statuses, `percent` the snapshot's percent benchmarks."""
    files = _fraction_files(frame, ids, statuses, percent)
    if not files:
        return frame
    scores, stderrs = frame["score"].to_list(), frame["stderr"].to_list()
    units = frame["unit"].to_list()
    for file, found in files.items():
        shown = ", ".join(f"{ids[i]}={scores[i]:g}" for i in found[:SHOWN])
        shown += ", ..." if len(found) > SHOWN else ""
        warnings.warn(
            f"{file}: every percent score is at most 1 ({shown}): read as fractions and "
            "converted to percent (x100)",
            FractionScoresWarning,
            stacklevel=2,
        )
        for i in found:
            scores[i] *= 100.0
            stderrs[i] = None if stderrs[i] is None else stderrs[i] * 100.0
            units[i] = "fraction"
    return frame.with_columns(
        pl.Series("score", scores, dtype=pl.Float64),
        pl.Series("stderr", stderrs, dtype=pl.Float64),
        pl.Series("unit", units, dtype=pl.String),
    )
