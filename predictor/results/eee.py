"""Every Eval Ever (EEE) records: one model's results in the community exchange schema.

A record is validated against the published JSON Schema of its own `schema_version` before a
number is read (`schema/eee/`, vendored from `evaleval/every_eval_ever`, MIT; see SOURCE.md
there). Published schemas: 0.2.1, 0.2.2, 0.3.0. No 0.2.0 schema file survives in the history
we could read, yet the repository's own 0.2.0 records (the Open LLM Leaderboard, Global MMLU
Lite and LiveCodeBench Pro conversions) passed its validation gate; 0.2.0 records are checked
against 0.2.1 without the two rules 0.2.1 added that those records break: `eval_library` is
not required, and `model_info.additional_details` values may be any JSON value. A version we
have no schema for is refused.

One row per `evaluation_results[]` item:
- model: `model_info.id`. Agent leaderboards (HAL) name the scaffold in
  `model_info.additional_details.agent_scaffold` (and each result in its
  `generation_config.additional_details`): the row is the model under that scaffold,
  `"<model_info.name> (<scaffold>)"` (the name, not the id: HAL lists one id under several
  settings, e.g. "o4-mini Low" and "o4-mini High"), so two scaffolds are two models.
- task: `<leaderboard>/<evaluation_name>`, the leaderboard being the first segment of
  `evaluation_id` (EEE's `eval_name/model_id/retrieved_timestamp`), e.g. `hfopenllm_v2/GPQA`.
- metric: `metric_config.metric_id`, else `metric_name`, else `score` (0.2.x has neither).
- unit from `metric_config`: bounds 0-1 -> fraction, 0-100 -> percent, otherwise the
  metric's own scale (`value`); without bounds, `metric_unit` proportion/percent or a binary
  score. A score outside `min_score`..`max_score` is an error.
- not run: -1 where `has_unknown_level` says so, or in a record written by HELM.
- stderr: `score_details.uncertainty.standard_error.value`; n: its `num_samples`.
- tool: `source_metadata.source_name` (else the organisation); tool_version: the schema version.
- evaluated_at: the result's or record's `evaluation_timestamp`, else `retrieved_timestamp`
  (when the record was made: the latest the evaluation can have happened), as ISO 8601.
"""

from __future__ import annotations

import itertools
import json
import math
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from predictor.results.errors import ResultsError
from predictor.results.formats import ResultFormat
from predictor.results.frame import RawResult
from predictor.results.jsonio import refuse_repeated_keys
from predictor.results.result_file import ResultFile

if TYPE_CHECKING:
    import jsonschema
    from jsonschema.exceptions import ValidationError

SCHEMA_DIR = Path(__file__).parent / "schema" / "eee"
PUBLISHED = ("0.2.1", "0.2.2", "0.3.0")  # eval.schema.<version>.json
DERIVED = {"0.2.0": "0.2.1"}  # version -> the published schema it is checked against, relaxed
KNOWN_VERSIONS = ("0.2.0", *PUBLISHED)
# results of one record: a record holds tens; each costs ~1 ms to validate and read
# (`benchmarks/reader_limits.py`)
MAX_RESULTS = 1_000
MAX_VIOLATIONS = 1_000  # counted for the message; the first (most relevant) is shown
UNKNOWN_SCORE = -1.0  # HELM's and EEE's "levels with an unknown level" marker
TOLERANCE = 1e-9


def looks_like(doc: object) -> bool:
    """An EEE record: an object with `evaluation_results` (no other format uses the key);
    a broken record is still recognised so its schema violation can be named."""
    return isinstance(doc, dict) and "evaluation_results" in doc


def read(file: ResultFile, doc: object) -> list[RawResult]:
    """The rows of one record (validated first); see the module docstring for each column."""
    if not isinstance(doc, dict):
        raise ResultsError(file.path, "an Every Eval Ever record must be a JSON object")
    FORMAT.check_size(file)
    results = doc.get("evaluation_results")
    if isinstance(results, list) and len(results) > MAX_RESULTS:  # before the slow validation
        raise ResultsError(
            file.path,
            f"{len(results):,} results, over the {MAX_RESULTS:,} an Every Eval Ever record "
            "may hold",
            "evaluation_results",
            hint="split the record into several files",
        )
    refuse_repeated_keys(file.data, file.path)
    version = validate(file, doc)
    results = doc["evaluation_results"]
    if not results:
        raise ResultsError(file.path, "the record holds no results", "evaluation_results")
    info = doc["model_info"]
    board = doc["evaluation_id"].split("/", 1)[0].strip() or doc["evaluation_id"]
    source = doc["source_metadata"]
    tool = (source.get("source_name") or "").strip() or source["source_organization_name"]
    library = doc.get("eval_library") or {}
    from_helm = str(library.get("name", "")).strip().lower() == "helm"
    record_time = _iso(doc.get("evaluation_timestamp")) or _iso(doc["retrieved_timestamp"])
    details = info.get("additional_details") or {}
    rows: list[RawResult] = []
    seen: dict[tuple[str, str], tuple[int, float | None]] = {}
    for index, item in enumerate(results):
        where = f"evaluation_results[{index}]"
        name = item["evaluation_name"].strip()
        if not name:
            raise ResultsError(file.path, "evaluation_name is empty", f"{where}.evaluation_name")
        config, score = item["metric_config"], item["score_details"]
        model = _model(file, info, item)
        task = f"{board}/{name}"
        metric = _text(config.get("metric_id")) or _text(config.get("metric_name")) or "score"
        value = _value(file, where, score["score"], config, from_helm)
        key = (task, metric)
        if key in seen:
            first, earlier = seen[key]
            if earlier != value:
                raise ResultsError(
                    file.path,
                    f"{name!r} ({metric}) is scored twice: {earlier} in "
                    f"evaluation_results[{first}] and {value} here",
                    f"{where}.score_details.score",
                    hint="a record holds one score per evaluation and metric; keep one",
                )
            continue  # the same result written twice is one result
        seen[key] = (index, value)
        uncertainty = score.get("uncertainty") or {}
        stderr = (uncertainty.get("standard_error") or {}).get("value")
        rows.append(
            RawResult(
                model=model,
                task=task,
                metric=metric,
                value=value,
                unit=_unit(config),
                tool=tool,
                format=FORMAT.id,
                tool_version=version,
                stderr=None
                if stderr is None
                else _stderr(
                    file, f"{where}.score_details.uncertainty.standard_error.value", stderr
                ),
                n=uncertainty.get("num_samples"),
                evaluated_at=_iso(item.get("evaluation_timestamp"))
                or _iso(item.get("evaluation_result_timestamp"))
                or record_time,
                lower_is_better=bool(config["lower_is_better"]),
                extra={
                    "evaluation_id": doc["evaluation_id"],
                    "model_id": info["id"],
                    "agent_scaffold": details.get("agent_scaffold"),
                    "total_cost_usd": details.get("total_cost_usd"),
                    "description": config.get("evaluation_description"),
                    "eval_library": library.get("name"),
                },
            )
        )
    return rows


# ----------------------------------------------------------------------------- validation
def validate(file: ResultFile, doc: dict) -> str:
    """The record's schema version, after checking the record against that version's schema;
    a violation is an error naming the JSON path of the field."""
    version = doc.get("schema_version")
    if not isinstance(version, str):
        raise ResultsError(
            file.path,
            "the record has no schema_version string",
            "schema_version",
            hint=f"Every Eval Ever records name their schema version ({', '.join(KNOWN_VERSIONS)})",
        )
    if version not in KNOWN_VERSIONS:
        raise ResultsError(
            file.path,
            f"schema_version {version[:40]!r} is not one we have the schema of",
            "schema_version",
            hint=f"known versions: {', '.join(KNOWN_VERSIONS)}; convert the record to one of "
            "them with the every_eval_ever tools",
        )
    violations = list(itertools.islice(_validator(version).iter_errors(doc), MAX_VIOLATIONS))
    if violations:
        from jsonschema.exceptions import best_match  # deferred: as in `_validator`

        first = best_match(violations)
        count = len(violations)
        more = f" ({count}{'+' if count == MAX_VIOLATIONS else ''} violations in all)"
        raise ResultsError(
            file.path,
            f"not a valid Every Eval Ever {version} record: {_describe(first)}"
            + (more if count > 1 else ""),
            _violation_path(first),
            hint=f"fix the field (schema: predictor/results/schema/eee/{_schema_file(version)})",
        )
    return version


def _schema_file(version: str) -> str:
    return f"eval.schema.{DERIVED.get(version, version)}.json"


@cache
def schema(version: str) -> dict:
    """The JSON Schema a record of `version` is checked against (cached: do not modify it)."""
    published = DERIVED.get(version, version)
    document = json.loads((SCHEMA_DIR / f"eval.schema.{published}.json").read_text("utf-8"))
    if version == "0.2.0":
        document["version"] = "0.2.0"
        document["required"] = [r for r in document["required"] if r != "eval_library"]
        details = document["$defs"]["model_info"]["properties"]["additional_details"]
        details["additionalProperties"] = {}
        details["description"] = "Additional parameters (0.2.0: values of any JSON type)"
    return document


@cache
def _validator(version: str) -> jsonschema.Draft7Validator:
    import jsonschema  # deferred: slow to import; only an Every Eval Ever record needs it

    document = schema(version)
    jsonschema.Draft7Validator.check_schema(document)
    return jsonschema.Draft7Validator(document)


def _violation_path(error: ValidationError) -> str:
    parts = list(error.absolute_path)
    if error.validator == "required":
        missing = [p for p in error.validator_value if p not in error.instance]
        parts += missing[:1]
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(the record)"


_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}


def _describe(error: ValidationError) -> str:
    if error.validator == "required":
        missing = [p for p in error.validator_value if p not in error.instance]
        return f"the required field {missing[0]!r} is missing" if missing else error.message
    if error.validator == "type":
        wanted = error.validator_value
        wanted = " or ".join(wanted) if isinstance(wanted, list) else wanted
        got = _JSON_TYPES.get(type(error.instance))
        if got is None:
            got = "null" if error.instance is None else "a number"
        return f"must be of type {wanted}, got {got}"
    if error.validator == "enum":
        return f"must be one of {', '.join(map(repr, error.validator_value))}"
    message = error.message
    return message if len(message) <= 200 else message[:197] + "..."


# ----------------------------------------------------------------------------- values
def _model(file: ResultFile, info: dict, item: dict) -> str:
    """The model as written; an agent run is the model under its scaffold, which a result may
    name itself (HAL: `generation_config.additional_details.agent_scaffold`): a record whose
    results name two scaffolds mixes two models and is refused as such."""
    model = info["id"].strip() or info["name"].strip()
    if not model:
        raise ResultsError(file.path, "model_info names no model", "model_info.id")
    generation = item.get("generation_config") or {}
    scaffold = (generation.get("additional_details") or {}).get("agent_scaffold")
    if not isinstance(scaffold, str) or not scaffold.strip():
        scaffold = (info.get("additional_details") or {}).get("agent_scaffold")
    if isinstance(scaffold, str) and scaffold.strip():
        return f"{info['name'].strip() or model} ({scaffold.strip()})"
    return model


def _float(file: ResultFile, field: str, value: float) -> float:
    try:
        return float(value)
    except OverflowError:
        raise ResultsError(file.path, "the number is too large", field) from None


def _stderr(file: ResultFile, field: str, value: float) -> float:
    """A standard error is a finite number of at least 0: anything else is a damaged record."""
    number = _float(file, field, value)
    if not (math.isfinite(number) and number >= 0):
        raise ResultsError(
            file.path,
            f"a standard error must be a finite number of at least 0, got {value!r}",
            field,
        )
    return number


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _bound(value: object) -> float | None:
    if isinstance(value, str):  # 0.3.0: "Infinity" / "-Infinity" for open bounds
        return math.inf if value == "Infinity" else -math.inf
    if value is None:
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _unit(config: dict) -> str:
    """fraction (0-1), percent (0-100) or value (the metric's own scale), from metric_config."""
    if config.get("score_type") == "levels":
        return "value"
    low, high = _bound(config.get("min_score")), _bound(config.get("max_score"))
    if low == 0 and high == 1:
        return "fraction"
    if low == 0 and high == 100:
        return "percent"
    if low is None and high is None:
        stated = str(config.get("metric_unit", "")).strip().lower()
        if stated in ("proportion", "fraction") or config.get("score_type") == "binary":
            return "fraction"
        if stated in ("percent", "percentage", "%"):
            return "percent"
    return "value"


def _value(
    file: ResultFile, where: str, score: float, config: dict, from_helm: bool
) -> float | None:
    """The score, or None where the record says "not run"; outside the metric's range it is
    an error (a 0-1 metric holding 87.5 is a broken record, not a score)."""
    field = f"{where}.score_details.score"
    value = _float(file, field, score)
    if value == UNKNOWN_SCORE and (config.get("has_unknown_level") is True or from_helm):
        return None
    if not math.isfinite(value):
        raise ResultsError(file.path, f"score {score!r} is not a finite number", field)
    low, high = _bound(config.get("min_score")), _bound(config.get("max_score"))
    if (low is not None and value < low - TOLERANCE) or (
        high is not None and value > high + TOLERANCE
    ):
        shown = f"{'-inf' if low is None else f'{low:g}'}..{'inf' if high is None else f'{high:g}'}"
        raise ResultsError(
            file.path,
            f"score {value:g} lies outside the metric's range {shown}",
            field,
            hint="metric_config.min_score/max_score state the range; is the score on another "
            "scale (percent vs fraction)?",
        )
    return value


def _iso(text: object) -> str | None:
    """A Unix time (EEE's `retrieved_timestamp`) as ISO 8601 UTC; other text as written."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        seconds = float(text)
    except ValueError:
        return text.strip()
    if not (math.isfinite(seconds) and 0 <= seconds < 1e11):
        return text.strip()
    return datetime.fromtimestamp(seconds, tz=UTC).isoformat(timespec="seconds")


# bytes: a record holds tens of results (`benchmarks/reader_limits.py` times the largest
# record allowed)
FORMAT = ResultFormat(
    id="eee",
    label="Every Eval Ever",
    noun="an Every Eval Ever record",
    known_as="an Every Eval Ever record",
    max_bytes=8 * 2**20,
    read=read,
    looks_like=looks_like,
    task_map="eee",
)
