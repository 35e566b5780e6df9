"""LMArena (Chatbot Arena): Arena ratings per arena, plus the HF Space's MT-Bench/MMLU/Arena-Hard.

LMArena publishes its scores only as Python pickles in its Hugging Face Space (never unpickled
here), so the ratings come from the third-party CSV conversions in `fboulnois/llm-leaderboard-csv`
(`csv/lmarena_{text,vision,image}.csv`, one per arena). Each arena is its own benchmark
(`lmarena_text`, `lmarena_vision`, `lmarena_image`); `value` is `arena_score` (integer
Bradley-Terry rating, unit `elo`), with the 95% CI (`+up/-down`), votes (`num_battles`), both ranks,
organisation, licence, knowledge cutoff and link in `extra`. The older converter's `lmsys.csv`
(same columns, text arena) parses as `lmarena_text` too. Ratings are relative and re-fitted on
every release: compare only within one snapshot.

Two genuine HF-Space CSVs add benchmarks the arena CSVs do not carry:
- `leaderboard_table_YYYYMMDD.csv`: MT-Bench (`mt_bench`, 0-10, unit `score`) and MMLU (`mmlu`,
  0-1, unit `fraction`) keyed by the pickle key (`key`, e.g. `gpt-4-0314`), display name `Model`;
  `-` means missing. This is also the only file mapping pickle keys to display names.
- `arena_hard_auto_leaderboard_v0.1.csv`: Arena-Hard-Auto v0.1 win rate (0-100, `percent`) against
  the fixed baseline `gpt-4-0314`, with rating quantiles/CI and average answer tokens in `extra`.

Not ingested: nakasyou's `elo_history/result.csv` (overall text Elo per pickle date, 2023-05 to
2025-02). It repeats one benchmark at ~100 dates whose ratings were re-fitted each time, so it adds
a time series rather than new (model, benchmark) facts; it would need a date setting column.

Model keys are the arena display names (`model`), the only key those CSVs have. A model key seen
twice in one file (`Yi-34B-Chat` in the 2025-08-04 text board; `yi-34b-chat` in the table) keeps
its first row; a later identical row is kept with a null value and a `rejected` reason, and if the
copies disagree every copy is rejected, as the file cannot say which one is right.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from posixpath import basename
from urllib.parse import urlsplit

import polars as pl

from pipelines.sources.base import (
    ParseError,
    Source,
    decode_text,
    extra_json,
    finite_value,
    scores_frame,
)

SOURCE_ID = "lmarena"
CSV_BASE = "https://raw.githubusercontent.com/fboulnois/llm-leaderboard-csv/main/csv"
SPACE_BASE = "https://huggingface.co/spaces/lmarena-ai/chatbot-arena-leaderboard/resolve/main"
TEXT_URL = f"{CSV_BASE}/lmarena_text.csv"
VISION_URL = f"{CSV_BASE}/lmarena_vision.csv"
IMAGE_URL = f"{CSV_BASE}/lmarena_image.csv"
TABLE_URL = f"{SPACE_BASE}/leaderboard_table_20250511.csv"
ARENA_HARD_URL = f"{SPACE_BASE}/arena_hard_auto_leaderboard_v0.1.csv"

# file name -> (benchmark key, benchmark name) for the arena rating CSVs
ARENAS = {
    "lmarena_text.csv": ("lmarena_text", "LMArena Text Arena"),
    "lmsys.csv": ("lmarena_text", "LMArena Text Arena"),  # older converter, same board
    "lmarena_vision.csv": ("lmarena_vision", "LMArena Vision Arena"),
    "lmarena_image.csv": ("lmarena_image", "LMArena Text-to-Image Arena"),
}
ARENA_COLUMNS = ("model", "arena_score", "95_pct_ci", "votes")
TABLE_COLUMNS = ("key", "Model", "MT-bench (score)", "MMLU")
TABLE_BENCHMARKS = {  # column -> (benchmark key, name, unit, max)
    "MT-bench (score)": ("mt_bench", "MT-Bench", "score", 10.0),
    "MMLU": ("mmlu", "MMLU", "fraction", 1.0),
}
ARENA_HARD_COLUMNS = ("model", "score")
ARENA_HARD = ("arena_hard_auto_v0.1", "Arena-Hard-Auto v0.1 (win rate vs baseline)")
ARENA_HARD_BASELINE = "gpt-4-0314"  # v0.1 baseline; its own row scores exactly 50.0
ELO_RANGE = (100.0, 4000.0)  # an Elo-like rating outside this is a broken row, not a rating
MISSING = {"", "-", "Unknown"}
CI_PATTERN = re.compile(r"^\+(\d+(?:\.\d+)?)/-(\d+(?:\.\d+)?)$")
TOLERANCE = 1e-9


def _records(url: str, data: bytes, required: tuple[str, ...]) -> tuple[list[str], list]:
    """Header and (line number, fields) of a CSV; missing required columns are a ParseError."""
    reader = csv.reader(io.StringIO(decode_text(SOURCE_ID, url, data), newline=""), strict=True)
    try:
        header = next(reader, None)
        if not header:
            raise ParseError(SOURCE_ID, url, "empty file", "line 1")
        missing = [c for c in required if c not in header]
        if missing:
            raise ParseError(SOURCE_ID, url, f"missing columns {missing}", "line 1")
        lines = []
        for fields in reader:
            if any(f.strip() for f in fields):  # entirely blank lines carry nothing
                lines.append((reader.line_num, fields))
    except csv.Error as exc:
        raise ParseError(
            SOURCE_ID, url, f"malformed CSV ({exc})", f"line {reader.line_num}"
        ) from None
    return header, lines


def _text(cell: str | None) -> str | None:
    if cell is None:
        return None
    cell = cell.strip()
    return None if cell in MISSING else cell


def _number(cell: str | None) -> float | int | None:
    text = _text(cell)
    if text is None:
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if number.is_integer() else number


class _Duplicates:
    """First-row-wins bookkeeping for model keys repeated within one file."""

    def __init__(self, rows_by_key: dict[str, list[tuple[int, tuple[str, ...]]]]):
        self.first = {key: occurrences[0] for key, occurrences in rows_by_key.items()}
        self.conflicting = {
            key for key, occurrences in rows_by_key.items() if len({o[1] for o in occurrences}) > 1
        }

    def reason(self, key: str, line_no: int) -> str | None:
        first_line = self.first[key][0]
        if key in self.conflicting:
            return f"model key {key!r} appears more than once in this file with different values"
        if line_no != first_line:
            return f"duplicate of line {first_line} (identical)"
        return None


def _index(
    lines: list, header: list[str], key_column: str, ignore: tuple[str, ...] = ()
) -> _Duplicates:
    """Group well-formed rows by model key; `ignore` names columns that are only row order."""
    position = header.index(key_column)
    compared = [i for i, name in enumerate(header) if name not in ignore]
    by_key: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    for line_no, fields in lines:
        if len(fields) == len(header) and fields[position].strip():
            content = tuple(fields[i] for i in compared)
            by_key.setdefault(fields[position].strip(), []).append((line_no, content))
    return _Duplicates(by_key)


def _row(url: str, ref: str, key: str | None, name: str | None, bench: tuple[str, str]) -> dict:
    return {
        "source": SOURCE_ID,
        "payload_url": url,
        "row_ref": ref,
        "model_key": key,
        "model_name": name,
        "benchmark_key": bench[0],
        "benchmark_name": bench[1],
    }


def _unusable(fields: list[str], header: list[str], key: str) -> str | None:
    if len(fields) != len(header):
        return f"ragged row: {len(fields)} fields for {len(header)} columns"
    if not key:
        return "empty model key"
    return None


def _arena_rows(url: str, data: bytes, bench: tuple[str, str]) -> list[dict]:
    header, lines = _records(url, data, ARENA_COLUMNS)
    col = {name: i for i, name in enumerate(header)}
    duplicates = _index(lines, header, "model", ignore=("rank",))  # rank = row order
    name = basename(urlsplit(url).path)
    rows = []
    for line_no, fields in lines:
        ref = f"{name} line {line_no}"
        key = fields[col["model"]].strip() if len(fields) > col["model"] else ""
        common = {**_row(url, ref, key or None, key or None, bench), "unit": "elo"}
        reason = _unusable(fields, header, key) or duplicates.reason(key, line_no)
        if reason:
            rows.append({**common, "value": None, "extra": extra_json({"rejected": reason})})
            continue
        cell = dict(zip(header, fields, strict=True))
        value = finite_value(SOURCE_ID, url, cell["arena_score"], f"{ref}, arena_score")
        if value is None:
            continue
        if not ELO_RANGE[0] <= value <= ELO_RANGE[1]:
            raise ParseError(SOURCE_ID, url, f"arena_score {value} is not a plausible rating", ref)
        ci = cell["95_pct_ci"].strip()
        bounds = CI_PATTERN.match(ci)
        facts = {
            "ci95": ci or None,
            "ci95_plus": float(bounds.group(1)) if bounds else None,
            "ci95_minus": float(bounds.group(2)) if bounds else None,
            "votes": _number(cell["votes"]),
            "rank": _number(cell.get("rank")),
            "rank_stylectrl": _number(cell.get("rank_stylectrl")),
            "organization": _text(cell.get("organization")),
            "license": _text(cell.get("license")),
            "knowledge_cutoff": _text(cell.get("knowledge_cutoff")),
            "url": _text(cell.get("url")),
        }
        rows.append({**common, "value": value, "extra": extra_json(facts)})
    return rows


def _table_rows(url: str, data: bytes) -> list[dict]:
    header, lines = _records(url, data, TABLE_COLUMNS)
    duplicates = _index(lines, header, "key")
    name = basename(urlsplit(url).path)
    table_date = re.search(r"(\d{8})", name)
    rows = []
    for line_no, fields in lines:
        ref = f"{name} line {line_no}"
        position = header.index("key")
        key = fields[position].strip() if len(fields) > position else ""
        cell = dict(zip(header, fields, strict=False))
        display = _text(cell.get("Model"))
        reason = _unusable(fields, header, key) or duplicates.reason(key, line_no)
        facts = {
            "table_date": table_date.group(1) if table_date else None,
            "knowledge_cutoff": _text(cell.get("Knowledge cutoff date")),
            "license": _text(cell.get("License")),
            "organization": _text(cell.get("Organization")),
            "link": _text(cell.get("Link")),
        }
        for column, (bench_key, bench_name, unit, top) in TABLE_BENCHMARKS.items():
            common = {**_row(url, ref, key or None, display, (bench_key, bench_name)), "unit": unit}
            if reason:
                if len(fields) != len(header) or _text(cell.get(column)) is not None:
                    rejected = extra_json({**facts, "rejected": reason})
                    rows.append({**common, "value": None, "extra": rejected})
                continue
            raw = _text(cell[column])
            value = finite_value(SOURCE_ID, url, raw, f"{ref}, {column}")
            if value is None:
                continue
            if not 0.0 <= value <= top + TOLERANCE:
                raise ParseError(SOURCE_ID, url, f"{column}={value} outside 0-{top:g}", ref)
            rows.append({**common, "value": value, "extra": extra_json(facts)})
    return rows


def _arena_hard_rows(url: str, data: bytes) -> list[dict]:
    header, lines = _records(url, data, ARENA_HARD_COLUMNS)
    duplicates = _index(lines, header, "model")
    name = basename(urlsplit(url).path)
    rows = []
    for line_no, fields in lines:
        ref = f"{name} line {line_no}"
        key = fields[header.index("model")].strip() if len(fields) == len(header) else ""
        common = {**_row(url, ref, key or None, key or None, ARENA_HARD), "unit": "percent"}
        reason = _unusable(fields, header, key) or duplicates.reason(key, line_no)
        if reason:
            rows.append({**common, "value": None, "extra": extra_json({"rejected": reason})})
            continue
        cell = dict(zip(header, fields, strict=True))
        value = finite_value(SOURCE_ID, url, cell["score"], f"{ref}, score")
        if value is None:
            continue
        if not 0.0 <= value <= 100.0:
            raise ParseError(SOURCE_ID, url, f"score {value} outside 0-100", ref)
        facts = {
            "rating_q025": _number(cell.get("rating_q025")),
            "rating_q975": _number(cell.get("rating_q975")),
            "ci": _text(cell.get("CI")),
            "avg_tokens": _number(cell.get("avg_tokens")),
            "date": _text(cell.get("date")),
            "baseline": ARENA_HARD_BASELINE,
        }
        rows.append({**common, "value": value, "extra": extra_json(facts)})
    return rows


def parse(payloads: Mapping[str, bytes]) -> pl.DataFrame:
    """Dispatch on the file name, so the older `lmsys.csv` and other table dates parse too."""
    rows: list[dict] = []
    for url in sorted(payloads):
        name = basename(urlsplit(url).path)
        if name in ARENAS:
            rows += _arena_rows(url, payloads[url], ARENAS[name])
        elif re.fullmatch(r"leaderboard_table_\d{8}\.csv", name):
            rows += _table_rows(url, payloads[url])
        elif re.fullmatch(r"arena_hard_auto_leaderboard_v[\d.]+\.csv", name):
            rows += _arena_hard_rows(url, payloads[url])
        else:
            raise ParseError(SOURCE_ID, url, f"unexpected payload {name!r}")
    return scores_frame(rows)


SOURCE = Source(
    id=SOURCE_ID,
    title="LMArena (Chatbot Arena) leaderboard",
    homepage="https://lmarena.ai/leaderboard",
    urls=(TEXT_URL, VISION_URL, IMAGE_URL, TABLE_URL, ARENA_HARD_URL),
    parse=parse,
    licence=(
        "Scores published by LMArena (HF Space card: apache-2.0); CSV conversions by "
        "fboulnois/llm-leaderboard-csv (MPL-2.0 code), derived data inherits LMArena's terms"
    ),
    attribution=(
        "Chiang et al., Chatbot Arena: An Open Platform for Evaluating LLMs by Human Preference, "
        "ICML 2024; CSVs converted by github.com/fboulnois/llm-leaderboard-csv."
    ),
    priority=60,
    frontier=True,
    # the MT-Bench/MMLU/Arena-Hard tables key models by old LMSYS ids (`wizardlm-13b`) and show
    # the arena's display name (`WizardLM-13b-v1.2`), which is also the arena tables' key
    name_field="model_name",
    max_bytes=4 * 1024 * 1024,
)
