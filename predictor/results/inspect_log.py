"""Inspect AI eval logs (`.eval` zip or `.json`), read with Inspect's own log reader.

`inspect_ai` is an optional extra (`pip install 'benchpress-llm[inspect]'`): its reader knows
every log version Inspect has written and migrates old ones, which a copy of the schema here
would not. Only the header is read (results, not samples): much faster on large logs.

One row per (scorer, metric) of `results.scores`: the metric key is `<scorer>/<metric>`
(`choice/accuracy`, `match/accuracy`), or `<scorer>/<reducer>/<metric>` for a reducer other
than the default `mean` (a task reducing epochs several ways, e.g. `verify/pass_at_1/mean`).
A `stderr` metric is not a row: it is the stderr of its sibling metrics. `n` is the scorer's
scored samples (older logs: the completed samples), the time Inspect's `eval.created`, the
version the log's `packages.inspect_ai` (else the installed Inspect's).

A log that did not finish (`status` other than `success`) or holds no results is refused,
naming the status and what to do."""

from __future__ import annotations

import math
import os
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from predictor.results.errors import ResultsError
from predictor.results.frame import RawResult
from predictor.results.paths import ResultFile

FORMAT = "inspect"
TOOL = "inspect_ai"
EXTRA_HINT = "pip install 'benchpress-llm[inspect]'"
ZIP_MAGIC = b"PK\x03\x04"
STDERR_METRICS = ("stderr", "bootstrap_stderr")
DEFAULT_REDUCER = "mean"
# metrics on 0-1; `mean` is 0-1 when the scores are (CORRECT/INCORRECT), so it counts as a
# fraction only when its value lies in 0-1; anything else (std, var, counts) is a `value`
FRACTION_METRICS = frozenset({"accuracy", "f1", "exact", "precision", "recall", "f_score"})
FRACTION_SUFFIXES = ("_acc", "_accuracy")
FRACTION_PREFIXES = ("pass_at_", "pass@")
SHOT_ARGS = ("fewshot", "num_fewshot", "n_shot", "shots")


def looks_like(doc: object) -> bool:
    """An Inspect log in JSON: an `eval` spec naming the task and model."""
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        return False
    spec = doc["eval"]
    return "task" in spec and "model" in spec and ("status" in doc or "results" in doc)


def metric_unit(metric: str, value: float) -> str:
    if (
        metric in FRACTION_METRICS
        or metric.endswith(FRACTION_SUFFIXES)
        or metric.startswith(FRACTION_PREFIXES)
    ):
        return "fraction"
    if metric == "mean" and math.isfinite(value) and 0.0 <= value <= 1.0:
        return "fraction"
    return "value"


def read(file: ResultFile, doc: object | None = None) -> list[RawResult]:
    """The rows of one log (`doc`, the parsed JSON of a `.json` log, is not needed: the log
    is read by Inspect from the same bytes)."""
    log = _read_header(file)
    status = getattr(log, "status", None)
    if status != "success":
        error = getattr(log, "error", None)
        message = getattr(error, "message", None) if error is not None else None
        detail = f": {_short(message)}" if message else ""
        raise ResultsError(
            file.path,
            f"the run did not complete: its status is {status!r}, not 'success'{detail}",
            "status",
            hint="only a finished run has scores; re-run it, or resume it with "
            "`inspect eval-retry` on this log",
        )
    results = getattr(log, "results", None)
    if results is None or not results.scores:
        raise ResultsError(
            file.path,
            "the log holds no results",
            "results.scores",
            hint="was the task run with a scorer? (`inspect score` adds scores to a log)",
        )
    return _rows(file, log)


def _inspect_log_module():
    try:
        import inspect_ai.log as inspect_log  # noqa: PLC0415  # deferred: the optional `inspect` extra
    except ImportError:
        raise ResultsError(
            "inspect",
            "reading Inspect logs needs the `inspect` extra (the inspect_ai package)",
            hint=f"install it with: {EXTRA_HINT}",
        ) from None
    return inspect_log


def _read_header(file: ResultFile):
    """The log header, read by Inspect from a private copy of the bytes (its reader takes a
    path; the user's file is never read a second time)."""
    try:
        inspect_log = _inspect_log_module()
    except ResultsError as exc:
        raise ResultsError(file.path, exc.problem, hint=exc.hint) from None
    suffix = ".eval" if file.data.startswith(ZIP_MAGIC) else ".json"
    with tempfile.TemporaryDirectory(prefix="benchpress-inspect-") as folder:
        copy = Path(folder) / f"log{suffix}"
        copy.write_bytes(file.data)
        try:
            return inspect_log.read_eval_log(str(copy), header_only=True)
        except Exception as exc:  # Inspect raises many kinds; each means "cannot be read"
            invalid = _schema_violation(exc)
            if invalid is not None:
                field, problem = invalid
                raise ResultsError(
                    file.path,
                    f"not a valid Inspect log: {problem}",
                    field,
                    hint="was the log edited after Inspect wrote it? re-export it from the run",
                ) from None
            raise ResultsError(
                file.path,
                f"Inspect cannot read this log: {_reason(exc)}",
                hint="is it a complete log as Inspect wrote it? a log cut short or edited "
                "afterwards (e.g. its `version` removed) cannot be read",
            ) from None


# Inspect's log sections, by the name of the model class that validates them
SECTIONS = {
    "EvalResults": "results",
    "EvalSpec": "eval",
    "EvalStats": "stats",
    "EvalPlan": "plan",
    "EvalError": "error",
}


def _schema_violation(exc: BaseException) -> tuple[str, str] | None:
    """(field, problem) of a pydantic validation error in the chain (a value of the wrong
    type, a missing field), else None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        errors = getattr(exc, "errors", None)
        title = getattr(exc, "title", None)
        if callable(errors) and isinstance(title, str):
            try:
                found = list(errors())
            except Exception:  # not pydantic's errors() after all
                found = []
            if found:
                locations = [tuple(str(p) for p in e.get("loc", ())) for e in found]
                common = os.path.commonprefix(locations)  # element-wise, on tuples too
                field = ".".join([SECTIONS.get(title, title), *common])
                message = found[0].get("msg", "invalid value")
                return field, f"{message} (got {_short(repr(found[0].get('input')), 80)})"
        exc = exc.__cause__ or exc.__context__
    return None


def _reason(exc: BaseException) -> str:
    """The innermost message (Inspect wraps the cause in 'Unable to read log file')."""
    messages = []
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        text = str(exc).strip()
        if text:
            messages.append(text)
        exc = exc.__cause__ or exc.__context__
    inner = [m for m in messages if not m.startswith("Unable to read log file")]
    return _short((inner or messages or ["unknown error"])[-1])


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _installed_version() -> str | None:
    try:
        return version("inspect_ai")
    except PackageNotFoundError:
        return None


def _rows(file: ResultFile, log) -> list[RawResult]:
    spec = log.eval
    packages = getattr(spec, "packages", None) or {}
    tool_version = packages.get("inspect_ai")
    version_from = "log"
    if not tool_version:
        tool_version, version_from = _installed_version(), "installed inspect_ai"
    task_args = getattr(spec, "task_args", None) or {}
    shots = [task_args.get(k) for k in SHOT_ARGS if k in task_args]
    n_shot = next((s for s in shots if isinstance(s, int) and not isinstance(s, bool)), None)
    config = getattr(spec, "config", None)
    results = log.results
    rows: dict[str, RawResult] = {}
    for index, score in enumerate(results.scores):
        stderr = _stderr(score.metrics)
        n = (
            score.scored_samples
            if score.scored_samples is not None
            else (results.completed_samples)
        )
        reducer = score.reducer if score.reducer not in (None, DEFAULT_REDUCER) else None
        prefix = f"{score.name}/{reducer}" if reducer else score.name
        for key, metric in score.metrics.items():
            if key in STDERR_METRICS or metric.name in STDERR_METRICS:
                continue
            name = f"{prefix}/{key}"
            value = float(metric.value) if metric.value is not None else None
            row = RawResult(
                model=spec.model,
                task=spec.task,
                metric=name,
                value=value,
                unit=metric_unit(key, value) if value is not None else "value",
                tool=TOOL,
                format=FORMAT,
                tool_version=tool_version,
                stderr=stderr,
                n=n,
                n_shot=n_shot,
                evaluated_at=spec.created,
                extra={
                    "scorer": score.scorer,
                    "reducer": score.reducer,
                    "eval_id": getattr(spec, "eval_id", None),
                    "run_id": getattr(spec, "run_id", None),
                    "task_version": getattr(spec, "task_version", None),
                    "limit": getattr(config, "limit", None),
                    "epochs": getattr(config, "epochs", None),
                    "tool_version_from": version_from,
                },
            )
            if name in rows and not _same(rows[name].value, value):
                raise ResultsError(
                    file.path,
                    f"metric {name!r} is reported twice with different values: "
                    f"{rows[name].value!r} and {value!r}",
                    f"results.scores[{index}].metrics.{key}",
                    hint="was the log edited? re-export it from Inspect",
                )
            rows[name] = row
    return list(rows.values())


def _stderr(metrics) -> float | None:
    for key, metric in metrics.items():
        if key in STDERR_METRICS or metric.name in STDERR_METRICS:
            value = metric.value
            if isinstance(value, int | float) and math.isfinite(value):
                return float(value)
    return None


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))
