"""What a prediction from results files used, and what it could not use (and why).

`summarise(frame, model)` is shown above every prediction made from files (CLI `--from`, the
web page): the scores used with their source (task, metric, file), the tasks that map onto
no benchmark of ours (listed, never dropped silently; an lm-eval group's unmapped subtasks
are counted under the group), tasks reported only under another metric, metrics the tool
did not compute, benchmarks this snapshot's fit does not hold, and the notes on harness or
shot-count differences from the matrix's scores. `summarise_models` does it for every model
of a frame at once.

Plain Python over the frame's rows: one summary per prediction, on a few rows, where each
Polars query would cost more than the whole loop."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import polars as pl

from predictor.results.frame import LIMITED, MAPPED, NOT_FITTED, NOT_RUN, OTHER_METRIC, UNMAPPED
from predictor.results.limited import describe
from predictor.results.noise import binomial_stderr
from predictor.results.probes import SAME_SCORE, model_rows, models_in, probe_scores
from predictor.util.item_subsets import items_text
from predictor.values import Measured

USED_COLUMNS = (
    "benchmark_id", "score", "stderr", "task", "metric", "raw_score", "unit", "n", "n_shot",
    "note", "format", "tool", "tool_version", "file", "items_total", "subset",
)  # fmt: skip
READ_COLUMNS = ("model", "status", "group", *USED_COLUMNS, "limited", "limit")
# absent from frames written before they were added
OPTIONAL_COLUMNS = ("limited", "limit", "items_total", "subset")


@dataclass(frozen=True)
class ResultInputs:
    """One model's usable scores from a results frame, and the rest accounted for."""

    model: str | None
    files: list[str]  # every file read (all models), in order
    formats: list[str]  # their formats, each once
    scores: dict[str, float]  # benchmark_id -> score: what the prediction uses
    used: list[dict[str, object]]  # one row per benchmark used: score and its source
    unmapped: list[str]  # tasks that map onto no benchmark of ours
    subtasks: dict[str, int] = field(default_factory=dict)  # group -> unmapped subtasks
    other_metric: list[str] = field(default_factory=list)  # "task (metric)": wrong metric
    not_run: list[str] = field(default_factory=list)  # tasks the tool did not compute
    not_fitted: list[str] = field(default_factory=list)  # "benchmark (task)"
    notes: list[str] = field(default_factory=list)  # "benchmark: note" of the scores used
    # "benchmark (2 items per task, FILE)": scores used from a run over part of the items
    # (only when the caller allowed them), and limited scores a full run's score replaced
    limited: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    # "gsm8k (100 of 240 items, FILE)": subset scores a run over more items replaced
    superseded_subsets: list[str] = field(default_factory=list)
    # benchmark_id -> standard error of the score used: the file's, else the binomial rule on
    # the items it scored (`n`, for accuracies); benchmarks with neither are not in it
    stderr: dict[str, float] = field(default_factory=dict)

    @property
    def measured(self) -> dict[str, float | Measured]:
        """The scores as the API takes them with their noise: `Measured(score, stderr)` where
        a standard error is known (`stderr`), the plain score elsewhere."""
        return {
            b: Measured(s, self.stderr[b]) if b in self.stderr else s
            for b, s in self.scores.items()
        }

    @property
    def units_known(self) -> bool:
        """Every score used was converted from a stated unit (a fraction or a percentage),
        so none can be a fraction mistaken for a percentage (tidy tables give values as is)."""
        return all(row["unit"] in ("fraction", "percent") for row in self.used)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready (`--json` `inputs`); `unmapped` lists every task, subtasks included."""
        return {
            "model": self.model,
            "files": self.files,
            "formats": self.formats,
            "used": self.used,
            "unmapped": self.unmapped,
            "unmapped_subtasks": self.subtasks,
            "other_metric": self.other_metric,
            "not_run": self.not_run,
            "not_fitted": self.not_fitted,
            "notes": self.notes,
            "limited": self.limited,
            "superseded_limited": self.superseded,
            "superseded_subsets": self.superseded_subsets,
            "stderr": self.stderr,
        }


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _summary(
    rows: list[dict[str, object]], model: str, files: list[str], formats: list[str]
) -> ResultInputs | None:
    """The summary of one model's rows; None when two rows score one benchmark differently
    (the caller raises `probe_scores`' error, which names both)."""
    used: dict[str, dict[str, object]] = {}
    for row in rows:
        if row["status"] != MAPPED:
            continue
        first = used.setdefault(row["benchmark_id"], row)
        if abs(first["score"] - row["score"]) > SAME_SCORE:
            return None
    by_status: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        by_status.setdefault(row["status"], []).append(row)
    unmapped = _unique(r["task"] for r in by_status.get(UNMAPPED, ()))
    groups = {r["task"]: r["group"] for r in by_status.get(UNMAPPED, ())}
    subtasks: dict[str, int] = {}
    for task in unmapped:  # an lm-eval group's subtasks: counted under the group
        group = groups[task]
        if group is not None and group != task:
            subtasks[group] = subtasks.get(group, 0) + 1
    scored = {r["task"] for r in by_status.get(MAPPED, ())}
    other: dict[str, set[str]] = {}
    for r in by_status.get(OTHER_METRIC, ()):
        if r["task"] not in scored:
            other.setdefault(r["task"], set()).add(r["metric"])
    not_fitted = {}
    for r in by_status.get(NOT_FITTED, ()):
        not_fitted.setdefault(r["benchmark_id"], r["task"])
    shown = [{name: r[name] for name in USED_COLUMNS} for r in used.values()]
    limited = [_limited(r) for r in used.values() if r["limited"]]
    replaced = by_status.get(LIMITED, ())
    superseded = _unique(_limited(r) for r in replaced if r["items_total"] is None)
    smaller = _unique(_subset(r) for r in replaced if r["items_total"] is not None)
    return ResultInputs(
        model=model,
        files=files,
        formats=formats,
        scores={b: r["score"] for b, r in used.items()},
        used=shown,
        unmapped=[t for t in unmapped if groups[t] in (None, t)],
        subtasks=subtasks,
        other_metric=[f"{t} ({', '.join(sorted(m))})" for t, m in other.items()],
        not_run=_unique(r["task"] for r in by_status.get(NOT_RUN, ())),
        not_fitted=[b if t == b else f"{b} ({t})" for b, t in not_fitted.items()],
        notes=_unique(f"{r['benchmark_id']}: {r['note']}" for r in shown if r["note"]),
        limited=limited,
        superseded=superseded,
        superseded_subsets=smaller,
        stderr={b: se for b, r in used.items() if (se := row_stderr(r)) is not None},
    )


def row_stderr(row: Mapping[str, object]) -> float | None:
    """A used row's standard error: the file's, else the binomial rule on its `n` items for
    a score the file states as an accuracy (a fraction or a percentage); else None."""
    if row["stderr"] is not None:
        return float(row["stderr"])
    n = row["n"]
    if isinstance(n, int) and n > 0 and row["unit"] in ("fraction", "percent"):
        return binomial_stderr(float(row["score"]), n)
    return None


def _subset(row: dict[str, object]) -> str:
    """`gsm8k (100 of 240 items, FILE)`: a subset run's score and where it is from."""
    return f"{row['benchmark_id']} ({items_text(row['n'] or 0, row['items_total'])}, {row['file']})"


def _limited(row: dict[str, object]) -> str:
    """`gpqa_diamond (2 items per task, FILE)`: a limited run's score and where it is from."""
    limit = describe(str(row["limit"])) if row["limit"] is not None else "a limited run"
    return f"{row['benchmark_id']} ({limit}, {row['file']})"


def _records(frame: pl.DataFrame) -> list[dict[str, object]]:
    """The frame's rows as dicts of `READ_COLUMNS` (columns to lists: no query to plan)."""
    columns = [
        frame[name].to_list()
        if name in frame.columns or name not in OPTIONAL_COLUMNS
        else [None] * frame.height
        for name in READ_COLUMNS
    ]
    return [dict(zip(READ_COLUMNS, values, strict=True)) for values in zip(*columns, strict=True)]


def summarise_models(frame: pl.DataFrame) -> dict[str, ResultInputs]:
    """model -> its inputs, for every model of the frame (in first-seen order)."""
    files = _unique(frame["file"].to_list())
    formats = _unique(frame["format"].to_list())
    grouped: dict[str, list[dict[str, object]]] = {}
    for row in _records(frame):
        grouped.setdefault(row["model"], []).append(row)
    summaries = {}
    for model, rows in grouped.items():
        summary = _summary(rows, model, files, formats)
        if summary is None:
            probe_scores(frame, model)  # raises, naming both places
        summaries[model] = summary
    return summaries


def summarise(frame: pl.DataFrame, model: str | None = None) -> ResultInputs:
    """The inputs of one model (`model`, or the frame's only model; several without a
    choice, or a model the frame lacks, is a `ResultsError` naming the models). A benchmark
    scored by two rows is used once (two different scores are an error, see
    `probe_scores`)."""
    models = models_in(frame)
    alone = len(models) == 1 and model in (None, models[0])
    rows = frame if alone else model_rows(frame, model)  # model_rows names what is wrong
    chosen = models[0] if alone else str(model)
    files = _unique(frame["file"].to_list())
    formats = _unique(frame["format"].to_list())
    summary = _summary(_records(rows), chosen, files, formats)
    if summary is None:
        probe_scores(frame, chosen)  # raises, naming both places
    return summary
