"""Aider leaderboards: YAML lists of benchmark runs (polyglot, and the older code-editing board).

One output row per run record, keyed by `dirname` (the `model` string is free text and not
unique). The headline score is `pass_rate_2` (percent solved after one retry with test feedback);
`pass_rate_1`, well-formed %, cost and timing go to `extra`. A `dirname` is one run, so one
listed twice in a file is a ParseError naming both records.

**Partial runs.** A board's score is a pass rate over its whole exercise set: 225 exercises for
polyglot (SOURCE.md; `total_tests: 225` on every record that states it) and 133 for the code
editing board (93 of its 98 records). A record whose `test_cases` lies outside the board's size
(`FULL_TEST_CASES`) less 1% (`MISSING_CASES_ALLOWED`: 2 of 225, 1 of 133) is kept with a null
value and a `rejected` reason naming both counts (`published_value` holds the number): a run on
a subset (`o1-mini-flex-sr-markers`, 36 cases) or on the other board's set
(`polyglot-o1-mini-whole`, 225 cases in the edit file) is not the benchmark's score. In the
recorded files that is 3 edit records (33, 36 and 225 cases); the 8 runs one or two exercises
short (224 or 223 of 225, 132 of 133), which Aider ranks on its board, move a pass rate by
under a point and are kept. A record without `test_cases` is kept (none lacks it).

**Release dates.** The code-editing board states the model's release in `released` (or
`_released`, the same fact on records the site does not chart: `claude-3-opus-20240229`
2024-02-29, `o1-preview` 2024-09-12); that is the row's `release_date`. `date` is the run's
day, not the model's, and stays `extra["eval_date"]`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping

import polars as pl
import yaml

from pipelines.sources.base import (
    ParseError,
    Source,
    decode_text,
    extra_json,
    finite_value,
    reject_repeated_keys,
    scores_frame,
    stated_date,
)

SOURCE_ID = "aider"
BASE = "https://raw.githubusercontent.com/Aider-AI/aider/main/aider/website/_data"
POLYGLOT_URL = f"{BASE}/polyglot_leaderboard.yml"
EDIT_URL = f"{BASE}/edit_leaderboard.yml"

# URL -> (benchmark key, benchmark name, file name for row refs)
BOARDS = {
    POLYGLOT_URL: ("polyglot", "Aider Polyglot (pass rate, 2 tries)", "polyglot_leaderboard.yml"),
    EDIT_URL: ("edit", "Aider code editing (pass rate, 2 tries)", "edit_leaderboard.yml"),
}
# URL -> exercises in the board's full set (SOURCE.md; `total_tests` of the polyglot records).
FULL_TEST_CASES = {POLYGLOT_URL: 225, EDIT_URL: 133}
MISSING_CASES_ALLOWED = 0.01  # of the full set: a case or two lost to a crash is still the board
SCORE_KEY = "pass_rate_2"
REQUIRED = ("dirname", "model", SCORE_KEY)

# Scalar run facts carried into `extra` (renamed where the common vocabulary has a name).
EXTRA_KEYS = {
    "pass_rate_1": "pass_rate_1",
    "percent_cases_well_formed": "percent_cases_well_formed",
    "total_cost": "cost",
    "seconds_per_case": "seconds_per_case",
    "date": "eval_date",
    "released": "release_date",
    "_released": "release_date",
    "test_cases": "test_cases",
    "total_tests": "total_tests",
    "pass_num_1": "pass_num_1",
    "pass_num_2": "pass_num_2",
    "error_outputs": "error_outputs",
    "num_malformed_responses": "num_malformed_responses",
    "num_with_malformed_responses": "num_with_malformed_responses",
    "user_asks": "user_asks",
    "lazy_comments": "lazy_comments",
    "syntax_errors": "syntax_errors",
    "indentation_errors": "indentation_errors",
    "exhausted_context_windows": "exhausted_context_windows",
    "test_timeouts": "test_timeouts",
    "prompt_tokens": "prompt_tokens",
    "completion_tokens": "completion_tokens",
    "editor_model": "editor_model",
    "editor_edit_format": "editor_edit_format",
    "command": "command",
    "versions": "aider_version",
    "commit_hash": "commit_hash",
}


def _scalar(value: object) -> object:
    """JSON-safe scalar or None (nested values and aliases are never expanded into extra)."""
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float | str):
        return value
    return None


def _text(value: object) -> str | None:
    if value is None or isinstance(value, list | dict):
        return None
    text = str(value).strip()
    return text or None


def _item_lines(text: str) -> list[int]:
    """1-based line numbers of the top-level `- ` list items, for row refs."""
    return [n for n, line in enumerate(text.split("\n"), start=1) if re.match(r"^-(\s|$)", line)]


def load_board(url: str, data: bytes) -> list[object]:
    text = decode_text(SOURCE_ID, url, data)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else None
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ParseError(SOURCE_ID, url, f"invalid YAML ({problem})", where) from None
    if not isinstance(doc, list):
        raise ParseError(SOURCE_ID, url, f"expected a YAML list of runs, got {type(doc).__name__}")
    return doc


def parse_board(url: str, data: bytes) -> list[dict[str, object]]:
    bench, bench_name, file_name = BOARDS[url]
    records = load_board(url, data)
    lines = _item_lines(decode_text(SOURCE_ID, url, data))
    if len(lines) != len(records):
        lines = []
    rows: list[dict[str, object]] = []
    for i, record in enumerate(records):
        ref = f"{file_name}[{i}]" + (f" line {lines[i]}" if lines else "")
        common: dict[str, object] = {
            "source": SOURCE_ID,
            "payload_url": url,
            "row_ref": ref,
            "benchmark_key": bench,
            "benchmark_name": bench_name,
            "unit": "percent",
        }
        if not isinstance(record, dict):
            reason = f"run record is a {type(record).__name__}, not a mapping"
            rows.append({**common, "value": None, "extra": extra_json({"rejected": reason})})
            continue
        key, name = _text(record.get("dirname")), _text(record.get("model"))
        facts: dict[str, object] = {}
        for field, target in EXTRA_KEYS.items():
            value = _scalar(record.get(field))
            if value is not None and target not in facts:
                facts[target] = value
        if isinstance(facts.get("cost"), int | float):
            facts["cost"] = float(facts["cost"])  # USD for the whole run
        missing = [k for k in REQUIRED if record.get(k) is None or _text(record.get(k)) is None]
        value = None
        if missing:
            facts["rejected"] = f"missing {', '.join(missing)}"
            if _scalar(record.get(SCORE_KEY)) is not None:
                facts["published_value"] = _scalar(record.get(SCORE_KEY))
        else:
            value = finite_value(SOURCE_ID, url, record[SCORE_KEY], f"{ref}, {SCORE_KEY}")
            if value is not None and not 0.0 <= value <= 100.0:
                raise ParseError(SOURCE_ID, url, f"{SCORE_KEY}={value} outside 0-100", ref)
            cases, full = record.get("test_cases"), FULL_TEST_CASES[url]
            shortest = full - int(full * MISSING_CASES_ALLOWED)
            counted = (isinstance(cases, int) and not isinstance(cases, bool)) or (
                isinstance(cases, float) and cases.is_integer()
            )
            if value is None or cases is None:
                pass
            elif not counted:
                facts["rejected"] = f"test_cases {cases!r} is not a count of exercises"
            elif not shortest <= cases <= full:
                facts["rejected"] = (
                    f"partial run: test_cases {cases} is not the board's {full} exercises"
                )
            if "rejected" in facts:
                facts["published_value"] = value
                value = None
        pr1 = facts.get("pass_rate_1")
        if pr1 is not None:
            pr1 = finite_value(SOURCE_ID, url, pr1, f"{ref}, pass_rate_1")
            facts["pass_rate_1"] = pr1
        thinking = record.get("thinking_tokens")
        rows.append(
            {
                **common,
                "model_key": key,
                "model_name": name,
                "value": value,
                "reasoning_effort": _text(record.get("reasoning_effort")),
                "thinking_budget": (
                    _text(thinking)
                    if isinstance(thinking, int | str) and not isinstance(thinking, bool)
                    else None
                ),
                "agent": _text(record.get("edit_format")),
                "extra": extra_json(facts),
                "release_date": stated_date(
                    record.get("released")
                    if record.get("released") is not None
                    else record.get("_released")
                ),
            }
        )
    return rows


def parse(payloads: Mapping[str, bytes]) -> pl.DataFrame:
    if POLYGLOT_URL not in payloads:
        raise ParseError(SOURCE_ID, POLYGLOT_URL, "payload missing")
    rows: list[dict[str, object]] = []
    for url in (POLYGLOT_URL, EDIT_URL):
        if url in payloads:
            rows.extend(parse_board(url, payloads[url]))
    return reject_repeated_keys(SOURCE_ID, scores_frame(rows))


SOURCE = Source(
    id=SOURCE_ID,
    title="Aider LLM leaderboards (polyglot and code editing)",
    homepage="https://aider.chat/docs/leaderboards/",
    urls=(POLYGLOT_URL, EDIT_URL),
    parse=parse,
    licence="Apache-2.0 (Aider-AI/aider repository)",
    attribution="Paul Gauthier and Aider contributors, Aider LLM Leaderboards, aider.chat",
    priority=50,
    frontier=True,
    name_field="model_name",  # the key is a run directory
    run_costs=True,
    max_bytes=4 * 1024 * 1024,
)
