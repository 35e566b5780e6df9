"""(format, task, metric) -> our benchmark id, from the reviewed tables in `maps/<name>.csv`
(a format names its table: `ResultFormat.task_map`).

Each table row says which benchmark a tool's task measures and with which metric: a task
reported under several metrics (lm-eval's `acc,none` and `acc_norm,none`) maps on the one
the benchmark uses; the others are kept as `other_metric`. `metric` `*` accepts any metric
of a task that reports one. `transform` `complement` turns an error rate into the accuracy a
higher-is-better benchmark records (100 - x). `note` says where a local run is known to sit
on another harness or shot count than the matrix's scores; it is shown with the score.

A row with an empty `benchmark_id` lists a task known to measure none of our benchmarks (a
subset, a single language, another metric): its rows are `unmapped`, with the note saying why.
A metric the file marks lower-is-better maps only through a `complement` row (or `--map`).

A task in no table is kept as `unmapped` (listed, never dropped); `--map task=benchmark`
(or `task:metric=benchmark`) overrides or extends the tables for one call."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from predictor.results import registry
from predictor.results.errors import ResultsError
from predictor.results.frame import (
    MAPPED,
    NOT_RUN,
    OTHER_METRIC,
    UNMAPPED,
    RawResult,
    checked_count,
)
from predictor.results.result_file import ResultFile

MAPS_DIR = Path(__file__).parent / "maps"
MAP_COLUMNS = ("task", "metric", "benchmark_id", "transform", "note")
TRANSFORMS = ("", "complement")
ANY_METRIC = "*"


@dataclass(frozen=True)
class MapEntry:
    benchmark_id: str
    metric: str
    transform: str = ""
    note: str = ""


Overrides = Mapping[tuple[str, str | None], str]  # (task, metric or None) -> benchmark id


@cache
def load_map(fmt: str) -> dict[str, list[MapEntry]]:
    """task -> its entries (usually one) for one format; a format without a table maps
    nothing. The tables ship with the package and are checked by the tests."""
    path = MAPS_DIR / f"{fmt}.csv"
    if not path.is_file():
        return {}
    table: dict[str, list[MapEntry]] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != MAP_COLUMNS:
            raise ValueError(f"{path.name}: columns must be {','.join(MAP_COLUMNS)}")
        for number, row in enumerate(reader, start=2):
            if row["transform"] not in TRANSFORMS:
                raise ValueError(f"{path.name} line {number}: unknown transform")
            entry = MapEntry(row["benchmark_id"], row["metric"], row["transform"], row["note"])
            table.setdefault(row["task"], []).append(entry)
    return table


def parse_overrides(items: Iterable[str] | None) -> dict[tuple[str, str | None], str]:
    """`["mmlu_custom=mmlu_pro", "my_task:acc,none=gpqa_diamond"]` -> the overrides mapping.

    The metric part (after `:`) is needed only for a task reported under several metrics."""
    overrides: dict[tuple[str, str | None], str] = {}
    for item in items or ():
        left, sep, benchmark = item.rpartition("=")
        if not sep or not left.strip() or not benchmark.strip():
            raise ResultsError(
                "--map", f"expected task=benchmark or task:metric=benchmark, got {item!r}"
            )
        task, colon, metric = left.partition(":")
        key = (task.strip(), metric.strip() if colon else None)
        if key in overrides:
            raise ResultsError("--map", f"{left.strip()!r} is mapped twice")
        overrides[key] = benchmark.strip()
    return overrides


def _entry_for(raw: RawResult, overrides: Overrides, fmt: str) -> tuple[MapEntry | None, bool]:
    """(entry, task known) for one row: an override first, then the table."""
    for key in ((raw.task, raw.metric), (raw.task, None)):
        if key in overrides:
            return MapEntry(overrides[key], raw.metric, "", "mapped by --map"), True
    table = registry.task_map(fmt)
    entries = load_map(table).get(raw.task, []) if table else []
    for entry in entries:
        if entry.metric in (raw.metric, ANY_METRIC):
            return entry, True
    return None, bool(entries)


_RANGES = {"fraction": (0.0, 1.0), "percent": (0.0, 100.0)}


def _to_score(raw: RawResult, entry: MapEntry) -> tuple[float | None, float | None]:
    """(score, stderr) in the benchmark's unit: fractions become percentages."""
    factor = 100.0 if raw.unit == "fraction" else 1.0
    score = None if raw.value is None else raw.value * factor
    stderr = None if raw.stderr is None else raw.stderr * factor
    if score is not None and entry.transform == "complement":
        score = 100.0 - score
    return score, stderr


def check_range(raw: RawResult, path: str) -> None:
    """A value outside its unit's range (an accuracy of 1.3) is a broken file, not a score;
    so is a count past Int64 or below zero (whichever reader let it through)."""
    for name in ("n", "n_shot", "items_total"):
        count = getattr(raw, name)
        if count is not None:
            checked_count(count, path, f"{_field(raw)}, {name}")
    if raw.value is None:
        return
    if not math.isfinite(raw.value):
        raise ResultsError(path, f"score {raw.value!r} is not a finite number", _field(raw))
    low, high = _RANGES.get(raw.unit, (-math.inf, math.inf))
    if not low <= raw.value <= high:
        raise ResultsError(
            path,
            f"score {raw.value:g} lies outside the {raw.unit} range {low:g}-{high:g}",
            _field(raw),
            hint="is the metric's scale stated correctly?",
        )
    if raw.stderr is not None and not (math.isfinite(raw.stderr) and raw.stderr >= 0):
        raise ResultsError(path, f"stderr {raw.stderr!r} is not a non-negative number", _field(raw))


def _field(raw: RawResult) -> str:
    return f"task {raw.task!r}, metric {raw.metric!r}"


LOWER_IS_BETTER_NOTE = (
    "the file says lower is better for this metric; it maps only through a table row "
    "with transform complement (or --map)"
)


def _against_direction(raw: RawResult, entry: MapEntry) -> bool:
    """A lower-is-better metric (an error rate) on a table row that would map it as is: the
    reviewed rows map higher-is-better scores, so only `complement` (or the user's own
    `--map`) may map it."""
    return (
        raw.lower_is_better is True
        and entry.transform != "complement"
        and entry.note != "mapped by --map"
    )


def map_rows(
    raws: list[RawResult], file: ResultFile, overrides: Overrides | None = None
) -> list[dict[str, object]]:
    """The frame rows of one file's raw results, each with its status and benchmark."""
    overrides = overrides or {}
    sha256 = file.sha256  # a property that hashes the bytes: once per file, not per row
    rows = []
    for raw in raws:
        check_range(raw, file.path)
        if raw.benchmark_id is not None:  # the file names our benchmark itself (tidy)
            entry, known = MapEntry(raw.benchmark_id, raw.metric), True
            override = overrides.get((raw.task, None))
            if override:
                entry = MapEntry(override, raw.metric, "", "mapped by --map")
        else:
            entry, known = _entry_for(raw, overrides, raw.format)
        score, stderr = (None, None) if entry is None else _to_score(raw, entry)
        if raw.value is None:
            status = NOT_RUN
        elif entry is not None and not entry.benchmark_id:
            status = UNMAPPED  # the table lists the task as measuring none of our benchmarks
        elif entry is not None and _against_direction(raw, entry):
            status, entry = OTHER_METRIC, MapEntry("", raw.metric, "", LOWER_IS_BETTER_NOTE)
        elif entry is not None:
            status = MAPPED
        else:
            status = OTHER_METRIC if known else UNMAPPED
        rows.append(
            {
                "model": raw.model,
                "benchmark_id": entry.benchmark_id if status == MAPPED else None,
                "score": score if status == MAPPED else None,
                "stderr": stderr if status == MAPPED else None,
                "status": status,
                "task": raw.task,
                "metric": raw.metric,
                "raw_score": raw.value,
                "unit": raw.unit,
                "n": raw.n,
                "n_shot": raw.n_shot,
                "group": raw.group,
                "note": (entry.note or None) if entry is not None else None,
                "format": raw.format,
                "tool": raw.tool,
                "tool_version": raw.tool_version,
                "evaluated_at": raw.evaluated_at,
                "file": file.path,
                "file_sha256": sha256,
                "limited": raw.limited,
                "limit": raw.limit,
                "items_total": raw.items_total,
                "subset": raw.subset,
            }
        )
    return rows
