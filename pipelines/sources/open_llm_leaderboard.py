"""Hugging Face Open LLM Leaderboard v2 (retired March 2025): 6 benchmarks for ~4.5k open models.

Read from the third-party flattening in `fboulnois/llm-leaderboard-csv` (`csv/huggingface_v2.csv`,
last version before deletion, pinned by commit). One row per (evaluation, benchmark) for IFEval,
BBH, MATH Level 5, GPQA, MuSR and MMLU-Pro.

Unit choice: `value` is the **raw accuracy on 0-1 (`fraction`)**, `evaluations_<b>_value`. The
leaderboard's headline number, `evaluations_<b>_normalized_score` (0-100 after subtracting each
task's random-guess baseline, so GPQA tops out near 29), is kept in `extra["normalized_score"]`.
The raw value is what other sources report for the same benchmark (GPQA accuracy is comparable to
GPQA accuracy elsewhere); the normalised one is not a percentage of correct answers and cannot be
turned back into one, so storing it as `percent` would mislead the later normalisation.

Model key: `id` = `<repo>_<precision>_<sha>_<chat template flag>` (unique; 79 repos were evaluated
more than once, e.g. in bfloat16 and float16, so the repo name `model_name` is not unique). A key
repeated within a file keeps its first row (a later identical copy is rejected with a reason, and
conflicting copies are all rejected). Booleans `TRUE`/`FALSE` become JSON booleans in `extra`.

The older snapshot (2024-12-02, scraped from the Gradio page) has another schema: normalised
scores under the bare names (`ifeval`, `math_lvl_5`, `mmlupro`, ...), raw values as `*_raw` rounded
to 2 decimals, and no `id`. It is recognised by its header; the same `id` is rebuilt from
`fullname`, `precision`, `model_sha` and `chat_template`, and benchmark keys are mapped onto the
newer ones (`math_lvl_5` -> `math`, `mmlupro` -> `mmlu_pro`) so re-ingestion lines up.

Release date: the day the repo was uploaded to the Hub (`metadata_upload_date`, older
`upload_to_hub_date`) is the row's `release_date`: an open model is released when its weights
are published. A later re-upload of a known model by someone else states a later day, and the
release-date choice keeps the earliest stated date, so copies never move a model's date.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping

import polars as pl

from pipelines.sources.base import (
    ParseError,
    Source,
    decode_text,
    extra_json,
    finite_value,
    scores_frame,
    stated_date,
)

SOURCE_ID = "open_llm_leaderboard"
COMMIT = "0f4e5c69c6fb6515afa31ae61f4d699649bc9503"
URL = f"https://raw.githubusercontent.com/fboulnois/llm-leaderboard-csv/{COMMIT}/csv/huggingface_v2.csv"

BENCHMARKS = {  # benchmark key -> fallback display name (the newer file names them itself)
    "ifeval": "IFEval",
    "bbh": "BBH",
    "math": "MATH Level 5",
    "gpqa": "GPQA",
    "musr": "MUSR",
    "mmlu_pro": "MMLU-PRO",
}
OLD_COLUMNS = {  # older snapshot column stem -> benchmark key
    "ifeval": "ifeval",
    "bbh": "bbh",
    "math_lvl_5": "math",
    "gpqa": "gpqa",
    "musr": "musr",
    "mmlupro": "mmlu_pro",
}
NEW_REQUIRED = ("id", "model_name") + tuple(
    f"evaluations_{b}_{part}" for b in BENCHMARKS for part in ("value", "normalized_score")
)
OLD_REQUIRED = ("fullname", "precision", "model_sha", "chat_template") + tuple(
    c for stem in OLD_COLUMNS for c in (stem, f"{stem}_raw")
)
NEW_FACTS = {  # extra key -> column
    "average_score": "model_average_score",
    "precision": "model_precision",
    "sha": "model_sha",
    "model_type": "model_type",
    "weight_type": "model_weight_type",
    "architecture": "model_architecture",
    "has_chat_template": "model_has_chat_template",
    "not_available_on_hub": "features_is_not_available_on_hub",
    "is_merged": "features_is_merged",
    "is_moe": "features_is_moe",
    "is_flagged": "features_is_flagged",
    "is_official_provider": "features_is_official_provider",
    "upload_date": "metadata_upload_date",
    "submission_date": "metadata_submission_date",
    "generation": "metadata_generation",
    "base_model": "metadata_base_model",
    "hub_license": "metadata_hub_license",
    "hub_hearts": "metadata_hub_hearts",
    "params_billions": "metadata_params_billions",
    "co2_cost_kg": "metadata_co2_cost",
}
OLD_FACTS = {
    "average_score": "average",
    "precision": "precision",
    "sha": "model_sha",
    "model_type": "type",
    "weight_type": "weight_type",
    "architecture": "architecture",
    "has_chat_template": "chat_template",
    "available_on_hub": "available_on_the_hub",
    "not_merged": "not_merged",
    "is_moe": "moe",
    "is_flagged": "flagged",
    "maintainers_highlight": "maintainers_highlight",
    "upload_date": "upload_to_hub_date",
    "submission_date": "submission_date",
    "generation": "generation",
    "base_model": "base_model",
    "hub_license": "hub_license",
    "hub_hearts": "hub_hearts",
    "params_billions": "params_b",
    "co2_cost_kg": "co_cost_kg",
    "url": "url",
}
TOLERANCE = 1e-9


def _fact(cell: str | None) -> object:
    """`TRUE`/`FALSE` -> bool, numbers -> int/float, blanks -> None, else the string."""
    if cell is None or not cell.strip():
        return None
    text = cell.strip()
    if text in ("TRUE", "FALSE"):
        return text == "TRUE"
    try:
        number = float(text)
    except ValueError:
        return text
    if number != number or number in (float("inf"), float("-inf")):
        return text
    return int(number) if number.is_integer() and "." not in text else number


def _schema(url: str, header: list[str]) -> str:
    if "id" in header or "evaluations_ifeval_value" in header:
        missing = [c for c in NEW_REQUIRED if c not in header]
        kind = "new"
    elif "fullname" in header or "ifeval_raw" in header:
        missing = [c for c in OLD_REQUIRED if c not in header]
        kind = "old"
    else:
        missing = [c for c in NEW_REQUIRED if c not in header]
        kind = "new"
    if missing:
        raise ParseError(SOURCE_ID, url, f"missing columns {missing}", "line 1")
    return kind


def _old_key(cell: Mapping[str, str]) -> str:
    """The newer file's `id` format, rebuilt from the older columns (7 rows lack a sha: the
    key then has an empty sha part, still unique since (fullname, precision) is)."""
    name, precision = cell["fullname"].strip(), cell["precision"].strip()
    template = {"TRUE": "True", "FALSE": "False"}.get(cell["chat_template"].strip(), "")
    if not (name and precision and template):
        return ""
    return "_".join([name, precision, cell["model_sha"].strip(), template])


def _observations(kind: str, cell: Mapping[str, str]) -> list[tuple[str, str, str, str]]:
    """(benchmark key, name, raw column, normalised column) for one row."""
    if kind == "new":
        return [
            (
                bench,
                (cell.get(f"evaluations_{bench}_name") or "").strip() or name,
                f"evaluations_{bench}_value",
                f"evaluations_{bench}_normalized_score",
            )
            for bench, name in BENCHMARKS.items()
        ]
    return [(key, BENCHMARKS[key], f"{stem}_raw", stem) for stem, key in OLD_COLUMNS.items()]


def parse(payloads: Mapping[str, bytes]) -> pl.DataFrame:
    rows: list[dict] = []
    for url in sorted(payloads):
        rows += _parse_file(url, payloads[url])
    return scores_frame(rows)


def _parse_file(url: str, data: bytes) -> list[dict]:
    reader = csv.reader(io.StringIO(decode_text(SOURCE_ID, url, data), newline=""), strict=True)
    try:
        header = next(reader, None)
        if not header:
            raise ParseError(SOURCE_ID, url, "empty file", "line 1")
        kind = _schema(url, header)
        lines = [(reader.line_num, f) for f in reader if any(x.strip() for x in f)]
    except csv.Error as exc:
        raise ParseError(
            SOURCE_ID, url, f"malformed CSV ({exc})", f"line {reader.line_num}"
        ) from None
    facts_map = NEW_FACTS if kind == "new" else OLD_FACTS
    keyed = []
    occurrences: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    for line_no, fields in lines:
        ragged = len(fields) != len(header)
        cell = dict(zip(header, fields, strict=False))
        if ragged:
            key = fields[0].strip() if kind == "new" and fields else ""
        else:
            key = cell["id"].strip() if kind == "new" else _old_key(cell)
        keyed.append((line_no, fields, cell, key, ragged))
        if key and not ragged:
            occurrences.setdefault(key, []).append((line_no, tuple(fields)))
    rows = []
    for line_no, fields, cell, key, ragged in keyed:
        ref = f"line {line_no}"
        reason = None
        if ragged:
            reason = f"ragged row: {len(fields)} fields for {len(header)} columns"
        elif not key:
            reason = "empty model key" if kind == "new" else "cannot build the model key"
        else:
            seen = occurrences[key]
            if len({content for _, content in seen}) > 1:
                reason = f"model key {key!r} appears more than once with different values"
            elif seen[0][0] != line_no:
                reason = f"duplicate of line {seen[0][0]} (identical)"
        name = (cell.get("model_name") if kind == "new" else cell.get("fullname")) or ""
        facts = {k: _fact(cell.get(c)) for k, c in facts_map.items()} if not ragged else {}
        if kind == "old":
            facts["model_key_rebuilt"] = True
        for bench, bench_name, raw_col, norm_col in _observations(kind, cell):
            common = {
                "source": SOURCE_ID,
                "payload_url": url,
                "row_ref": ref,
                "model_key": key or None,
                "model_name": name.strip() or None,
                "benchmark_key": bench,
                "benchmark_name": bench_name,
                "unit": "fraction",
                "release_date": stated_date(facts.get("upload_date")),
            }
            if reason:
                rejected = extra_json({**facts, "rejected": reason})
                rows.append({**common, "value": None, "extra": rejected})
                continue
            value = finite_value(SOURCE_ID, url, cell[raw_col], f"{ref}, {raw_col}")
            normalised = finite_value(SOURCE_ID, url, cell[norm_col], f"{ref}, {norm_col}")
            if value is None:
                continue
            if not -TOLERANCE <= value <= 1.0 + TOLERANCE:
                raise ParseError(SOURCE_ID, url, f"{raw_col}={value} outside 0-1", ref)
            if normalised is not None and not -TOLERANCE <= normalised <= 100.0 + TOLERANCE:
                raise ParseError(SOURCE_ID, url, f"{norm_col}={normalised} outside 0-100", ref)
            extra = extra_json({**facts, "normalized_score": normalised})
            rows.append({**common, "value": value, "extra": extra})
    return rows


SOURCE = Source(
    id=SOURCE_ID,
    title="Hugging Face Open LLM Leaderboard v2 (final, via fboulnois/llm-leaderboard-csv)",
    homepage="https://huggingface.co/spaces/open-llm-leaderboard/open_llm_leaderboard",
    urls=(URL,),
    parse=parse,
    licence=(
        "Results published by Hugging Face (check HF terms before redistribution); "
        "CSV conversion code MPL-2.0 (fboulnois/llm-leaderboard-csv)"
    ),
    attribution=(
        "Fourrier et al., Open LLM Leaderboard v2, Hugging Face, 2024; "
        "CSV by github.com/fboulnois/llm-leaderboard-csv."
    ),
    priority=90,
    name_field="model_name",  # the key carries precision and a commit
    dates_are_uploads=True,  # the Hub repo's creation day
    long_tail="the Open LLM Leaderboard",  # thousands of fine-tunes
    max_bytes=16 * 1024 * 1024,
)
