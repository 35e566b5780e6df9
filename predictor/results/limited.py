"""Scores of runs over part of a task's items (a smoke test), told apart from real scores.

lm-eval's `--limit N` (`config.limit` in its results file; below 1, a fraction of the items)
and Inspect's `limit` (`eval.config.limit`; a count or a `(start, stop)` range) run a few
items per task: `--limit 2` scores gpqa_diamond 50 from two questions. The readers mark such
rows `limited` (with the `limit` as recorded), unless the file shows that the limit left out
no item of the task (lm-eval's `n-samples` effective count equal to the original one,
Inspect's dataset no larger than the limit).

A random subset of the items (`benchpress run --items N`: rows with `items_total`, not
`limited`) is not a smoke test: its score estimates the full run's, with its standard error,
and is used.

`mark_superseded`: where a run of the same model over more of the items scored the benchmark
too (a smoke test, a subset and the full run under one `--out`), the rows of the smaller run
get the status `limited` (kept and listed, never used) and the larger run's score is used: a
full run over any subset, a larger subset over a smaller one, any subset over a smoke test.
`limited_checked`: the limited scores still to be used are refused, naming the file and the
limit, unless the caller allows them (`--allow-limited`, `allow_limited=True`), which is then
said in a `LimitedScoresWarning`."""

from __future__ import annotations

import math
import re
import warnings

import polars as pl

from predictor.results.errors import ResultsError
from predictor.results.frame import LIMITED, MAPPED

MAX_LIMIT_TEXT = 40  # a limit as recorded, shown in messages: a number or a range
LIMIT_FIELDS = {"lm_eval": "config.limit", "inspect": "eval.config.limit"}
ALLOW_HINT = "pass --allow-limited (Python: allow_limited=True) to use them anyway"
SHOWN_FILES = 3


class LimitedScoresWarning(UserWarning):
    """Scores of a run over part of the items (a smoke test) used because the caller allowed
    them (`--allow-limited`, `allow_limited=True`)."""


def limit_text(value: object) -> str | None:
    """A tool's recorded limit as text: `2` (lm-eval writes `2.0` for `--limit 2`), `0.1` (a
    fraction of the items), `10-20` (Inspect's range); None for no limit."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return str(int(value)) if float(value).is_integer() else f"{value:g}"
    if isinstance(value, list | tuple) and len(value) == 2:
        return "-".join(limit_text(v) or "?" for v in value)
    text = " ".join(str(value).split())
    return text if len(text) <= MAX_LIMIT_TEXT else text[: MAX_LIMIT_TEXT - 3] + "..."


def describe(limit: str) -> str:
    """What a limit means, for messages: `2 items per task`, `10% of each task's items`."""
    if re.fullmatch(r"\d+", limit):
        return f"{limit} item{'s' if limit != '1' else ''} per task"
    if re.fullmatch(r"0?\.\d+", limit):
        return f"{float(limit) * 100:g}% of each task's items"
    found = re.fullmatch(r"(\d+)-(\d+)", limit)
    if found:
        return f"items {found[1]} to {found[2]} of each task"
    return f"limit {limit}"


def _flags(frame: pl.DataFrame) -> list[bool]:
    if "limited" not in frame.columns:
        return [False] * frame.height
    return [bool(v) for v in frame["limited"].to_list()]


def _column(frame: pl.DataFrame, name: str) -> list:
    """A column's values; all None where the frame predates it."""
    return frame[name].to_list() if name in frame.columns else [None] * frame.height


SMOKE, FULL = 0.0, math.inf  # the coverage of a smoke test's row and of a full run's


def _coverage(limited: bool, items_total: int | None, n: int | None) -> float:
    """How much of the benchmark a row's run scored, to rank runs of one benchmark: a smoke
    test least, then subsets by the items they scored, a full run most."""
    if limited:
        return SMOKE
    if items_total is not None:
        return 1.0 + (n or 0)
    return FULL


def _why(coverage: float, best: float) -> str:
    """The note of a row whose run another run of the benchmark supersedes."""
    if coverage == SMOKE:
        by = "a full run's" if best == FULL else "a subset run's"
        return f"a smoke test (limited run): {by} score of the benchmark is used"
    by = "a full run's" if best == FULL else "a larger subset's"
    return f"a subset of the items: {by} score of the benchmark is used"


def mark_superseded(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` with the mapped rows of smoke tests and subsets marked `limited` where a run
    of the same model over more of the items (a full run, a larger subset) scored the same
    benchmark (that run's score is the one used). Idempotent."""
    flags = _flags(frame)
    totals = _column(frame, "items_total")
    if not any(flags) and all(t is None for t in totals):
        return frame
    statuses = frame["status"].to_list()
    keys = list(zip(frame["model"].to_list(), frame["benchmark_id"].to_list(), strict=True))
    coverage = [
        _coverage(limited, total, n)
        for limited, total, n in zip(flags, totals, frame["n"].to_list(), strict=True)
    ]
    best: dict[tuple[str, str], float] = {}
    for key, status, covered in zip(keys, statuses, coverage, strict=True):
        if status == MAPPED:
            best[key] = max(best.get(key, SMOKE), covered)
    superseded = [
        status == MAPPED and covered < best[key]
        for key, status, covered in zip(keys, statuses, coverage, strict=True)
    ]
    if not any(superseded):
        return frame
    notes = frame["note"].to_list()
    return frame.with_columns(
        pl.Series(
            "status",
            [LIMITED if out else s for s, out in zip(statuses, superseded, strict=True)],
            dtype=pl.String,
        ),
        pl.Series(
            "note",
            [
                _noted(note, _why(covered, best[key])) if out else note
                for note, out, covered, key in zip(notes, superseded, coverage, keys, strict=True)
            ],
            dtype=pl.String,
        ),
    )


def _noted(note: str | None, why: str) -> str:
    return f"{note}; {why}" if note else why


def _limited_files(frame: pl.DataFrame, model: str | None) -> dict[str, list[dict]]:
    """file -> its mapped limited rows (of `model`, or of every model), in first-seen order."""
    found: dict[str, list[dict]] = {}
    for row, limited in zip(frame.iter_rows(named=True), _flags(frame), strict=True):
        if limited and row["status"] == MAPPED and model in (None, row["model"]):
            found.setdefault(row["file"], []).append(row)
    return found


def _scores(rows: list[dict]) -> str:
    return ", ".join(dict.fromkeys(f"{r['benchmark_id']}={r['score']:.4g}" for r in rows))


def limited_checked(
    frame: pl.DataFrame, allow_limited: bool = False, model: str | None = None
) -> pl.DataFrame:
    """`frame` (`mark_superseded`), its limited scores still to be used (of `model`, else of
    every model) refused with a `ResultsError` naming the file and the limit; with
    `allow_limited` kept, one `LimitedScoresWarning` per file."""
    frame = mark_superseded(frame)  # most frames: nothing to look at, returned as they are
    if not any(_flags(frame)):
        return frame
    if model is not None and model not in set(frame["model"].to_list()):
        return frame  # the caller's choice of a model the files lack: its check names it
    found = _limited_files(frame, model)
    if not found:
        return frame
    if allow_limited:
        for file, rows in found.items():
            limit = rows[0]["limit"] or "?"
            warnings.warn(
                f"{file}: {_scores(rows)} from a run limited to {describe(limit)} "
                f"(limit {limit}): a smoke test, not the model's scores, used as "
                "--allow-limited (allow_limited=True) asks",
                LimitedScoresWarning,
                stacklevel=3,
            )
        return frame
    (file, rows), *others = found.items()
    limit = rows[0]["limit"] or "?"
    plural = len({r["benchmark_id"] for r in rows}) > 1
    problem = (
        f"the run was limited to {describe(limit)} (limit {limit}), a smoke test: "
        f"{_scores(rows)} {'are' if plural else 'is'} not the model's "
        f"score{'s' if plural else ''}"
    )
    if others:
        names = ", ".join(f for f, _ in others[:SHOWN_FILES])
        more = f" and {len(others) - SHOWN_FILES} more" if len(others) > SHOWN_FILES else ""
        problem += f"; limited runs too: {names}{more}"
    raise ResultsError(
        file,
        problem,
        LIMIT_FIELDS.get(rows[0]["format"]),
        hint=f"use a full run's files (without --limit), or {ALLOW_HINT}",
    )
