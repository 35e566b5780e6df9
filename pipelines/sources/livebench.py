"""LiveBench (livebench.ai): wide CSV, one row per model configuration, 23 tasks scored 0-100.

Each row is one model configuration (the setting is in the key), so a key repeated in the file
is a ParseError naming both lines: the file contradicts itself, and neither row can be chosen.
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
    load_json,
    reject_repeated_keys,
    scores_frame,
)

RELEASE = "2026_01_08"
TABLE_URL = f"https://livebench.ai/table_{RELEASE}.csv"
CATEGORIES_URL = f"https://livebench.ai/categories_{RELEASE}.json"


def _categories(data: bytes) -> dict[str, str]:
    doc = load_json("livebench", CATEGORIES_URL, data)
    if not isinstance(doc, dict):
        raise ParseError("livebench", CATEGORIES_URL, "expected an object of category -> tasks")
    return {task: category for category, tasks in doc.items() for task in tasks}


def parse(payloads: Mapping[str, bytes]) -> pl.DataFrame:
    """One row per (model config, task). A ragged row cannot say which tasks its values belong to,
    so its cells are kept with a null value and the reason, never assigned positionally."""
    category_of = _categories(payloads[CATEGORIES_URL]) if CATEGORIES_URL in payloads else {}
    reader = csv.reader(io.StringIO(decode_text("livebench", TABLE_URL, payloads[TABLE_URL])))
    header = next(reader, None)
    if not header or header[0] != "model" or len(header) < 2:
        raise ParseError("livebench", TABLE_URL, "header must start with 'model'", "line 1")
    tasks = header[1:]
    missing = sorted(set(category_of) - set(tasks))
    if missing:  # the categories file lists every task of the release: a lost column, not a
        # retired task (dropping its scores silently would shrink the matrix unnoticed)
        raise ParseError("livebench", TABLE_URL, f"missing task columns {missing}", "line 1")
    rows = []
    for line_no, fields in enumerate(reader, start=2):
        if not fields:
            continue
        key = fields[0].strip()
        ref = f"line {line_no}"
        if not key:
            raise ParseError("livebench", TABLE_URL, "empty model key", ref)
        ragged = len(fields) != len(header)
        for position, task in enumerate(tasks, start=1):
            common = {
                "source": "livebench",
                "payload_url": TABLE_URL,
                "row_ref": ref,
                "model_key": key,
                "model_name": key,
                "benchmark_key": task,
                "benchmark_name": task,
                "unit": "percent",
            }
            facts: dict[str, object] = {"release": RELEASE, "category": category_of.get(task)}
            if ragged:
                facts["rejected"] = f"ragged row: {len(fields) - 1} values for {len(tasks)} tasks"
                rows.append({**common, "value": None, "extra": extra_json(facts)})
                continue
            value = finite_value("livebench", TABLE_URL, fields[position], f"{ref}, {task}")
            if value is None:
                continue
            if not 0.0 <= value <= 100.0:
                raise ParseError("livebench", TABLE_URL, f"{task}={value} outside 0-100", ref)
            rows.append({**common, "value": value, "extra": extra_json(facts)})
    return reject_repeated_keys("livebench", scores_frame(rows))


SOURCE = Source(
    id="livebench",
    title="LiveBench",
    homepage="https://livebench.ai/",
    urls=(TABLE_URL, CATEGORIES_URL),
    parse=parse,
    licence="No licence file on livebench.github.io; LiveBench code is Apache-2.0",
    attribution=(
        "White et al., LiveBench: A Challenging, Contamination-Free LLM Benchmark, ICLR 2025."
    ),
    priority=20,
    frontier=True,
    max_bytes=8 * 1024 * 1024,
)
