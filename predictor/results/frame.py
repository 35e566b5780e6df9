"""The tidy results frame every reader's rows end up in, and the raw row readers produce.

Readers are pure: bytes in, `RawResult` rows out, in the file's own terms (task and metric as
the tool names them, the value as written with its unit). `predictor.results.mapping` then
puts each row on our benchmark ids and units; `result_frame` builds the frame."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from predictor.results.errors import ResultsError

UNITS = ("fraction", "percent", "value")  # 0-1, 0-100, or on the benchmark's own scale

# status of a row after mapping
MAPPED = "mapped"  # usable as a probe score of `benchmark_id`
UNMAPPED = "unmapped"  # the task maps to no benchmark of ours (listed, never dropped)
OTHER_METRIC = "other_metric"  # the task maps, but the benchmark is scored with another metric
NOT_RUN = "not_run"  # the tool says the metric was not computed (HELM's -1)
# set by `BenchPress.read_results`: the benchmark is ours, but the loaded snapshot's fit does
# not hold it (too few models scored it to be a probe); benchmark_id and score are kept
NOT_FITTED = "not_fitted"
# set by `read_results` (`predictor.results.limited`): a score of a run over part of the items
# (the tool's `limit`, a smoke test; or a subset, `--items`) where a run of the same model
# over more of them (a full run, a larger subset) scored the benchmark too; benchmark_id and
# score are kept, that run's score is the one used
LIMITED = "limited"

RESULT_SCHEMA: dict[str, pl.DataType] = {
    "model": pl.String,  # the model as the file names it
    "benchmark_id": pl.String,  # our canonical id; null unless status is mapped or not_fitted
    "score": pl.Float64,  # in the benchmark's unit (percent benchmarks: 0-100)
    "stderr": pl.Float64,  # standard error in the same unit (measurement noise), if given
    "status": pl.String,  # mapped | unmapped | other_metric | not_run | not_fitted | limited
    "task": pl.String,  # the tool's task or evaluation name
    "metric": pl.String,  # the metric key as written (`acc,none`, `accuracy`, ...)
    "raw_score": pl.Float64,  # the value as written
    "unit": pl.String,  # the unit of raw_score: fraction | percent | value
    "n": pl.Int64,  # samples scored
    "n_shot": pl.Int64,  # few-shot examples
    "group": pl.String,  # lm-eval: the group a subtask was run under
    "note": pl.String,  # mapping note: another harness or shot count than the matrix's
    "format": pl.String,  # lm_eval | inspect | eee | helm | tidy
    "tool": pl.String,  # the tool (or EEE source) that wrote the file
    "tool_version": pl.String,
    "evaluated_at": pl.String,  # ISO 8601 when the file says
    "file": pl.String,  # the path as given
    "file_sha256": pl.String,
    # the run scored only part of the task's items (lm-eval's `config.limit`, Inspect's
    # `eval.config.limit`): a smoke test's score, refused unless `--allow-limited`
    "limited": pl.Boolean,
    "limit": pl.String,  # the limit as the tool recorded it (`2`, `0.1`, `10-20`), if any
    # the run scored a random subset of the task's items (`benchpress run --items`): `n` of
    # `items_total`, a usable score with its standard error (not `limited`); null otherwise
    "items_total": pl.Int64,
    "subset": pl.String,  # which subset: `seed 0, sha256 1a2b3c4d5e6f`, as recorded
}


MAX_COUNT = 2**63 - 1  # `n` and `n_shot` are Int64 columns


def checked_count(value: int, path: str, field: str) -> int:
    """A sample or shot count as written, refused past Int64 or below zero."""
    if not 0 <= value <= MAX_COUNT:
        raise ResultsError(
            path, f"a count must be a whole number from 0 to {MAX_COUNT}, got {value}", field
        )
    return value


@dataclass(frozen=True)
class RawResult:
    """One (model, task, metric, value) fact as a file states it."""

    model: str
    task: str
    metric: str
    value: float | None  # None: the tool says "not run" (the row is kept as not_run)
    unit: str  # one of UNITS
    tool: str
    format: str
    tool_version: str | None = None
    stderr: float | None = None
    n: int | None = None
    n_shot: int | None = None
    group: str | None = None
    evaluated_at: str | None = None
    lower_is_better: bool | None = None
    benchmark_id: str | None = None  # set by readers whose files name our ids (tidy)
    limit: str | None = None  # the run's item limit as recorded (`2`, `0.1`, `10-20`)
    limited: bool = False  # the limit left out items of this task: a smoke test's score
    items_total: int | None = None  # a subset run: the task's items (`n` of them scored)
    subset: str | None = None  # a subset run: which subset (seed, digest of the items)
    extra: dict[str, object] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {self.unit!r}")


def result_frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    """The tidy frame, columns in `RESULT_SCHEMA` order (an empty list gives an empty frame)."""
    return pl.DataFrame(
        [{name: row.get(name) for name in RESULT_SCHEMA} for row in rows],
        schema=RESULT_SCHEMA,
    )
