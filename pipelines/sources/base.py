"""The common long schema every leaderboard parser produces, and the `Source` description.

A parser is a pure function from fetched payloads (URL -> bytes) to a Polars frame in
`SCORE_SCHEMA`. Keeping it pure means parsers are tested on recorded bytes without Dagster,
DuckDB or the network, and a parser bug can always be fixed and re-run from archived payloads.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime

import polars as pl

SCORE_SCHEMA: dict[str, pl.DataType] = {
    "source": pl.String(),
    "payload_url": pl.String(),  # which fetched payload the row came from
    "row_ref": pl.String(),  # where in the payload (file:line, json path) for error messages
    "model_key": pl.String(),  # the source-native unique key (dirname, id, Model version ...)
    "model_name": pl.String(),  # the display name the source shows
    "benchmark_key": pl.String(),  # source-native benchmark / column key
    "benchmark_name": pl.String(),
    "value": pl.Float64(),
    "unit": pl.String(),  # one of UNITS: what scale `value` is on, as published
    "reasoning_effort": pl.String(),  # settings the source states separately from the name
    "thinking_budget": pl.String(),
    "agent": pl.String(),  # agent / scaffold / harness / edit format
    "extra": pl.String(),  # JSON object of further facts (cost, stderr, votes, dates), keys sorted
    # The model's public release date as the payload states it (`stated_date`): YYYY-MM-DD, or
    # YYYY-MM / YYYY when only that is stated; null where the payload states none. Never an
    # evaluation, submission, upload or training cut-off date (those stay in `extra`).
    "release_date": pl.String(),
}

# What identifies one score within one payload: a model at a setting on a benchmark.
KEY_COLUMNS = (
    "payload_url",
    "model_key",
    "benchmark_key",
    "reasoning_effort",
    "thinking_budget",
    "agent",
)
_DIGITS = re.compile(r"\d+")
# A stated date: a day, month or year, optionally followed by a time of day (ISO 8601 or SQL
# style, with seconds, fractions and a zone); group 1 is the date part.
_STATED_DATE = re.compile(
    r"(\d{4}(?:-\d{2}(?:-\d{2})?)?)(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)

UNITS = frozenset(
    {
        "percent",
        "fraction",
        "edit_distance",  # a normalised distance on 0-1: 100 x (1 - d) on a higher-is-better column
        "elo",
        "rating",
        "dollars",
        "minutes",
        "index",
        "points",
        "score",
    }
)


class ParseError(ValueError):
    """A payload could not be parsed; the message names the source, URL and row."""

    def __init__(self, source: str, url: str, message: str, row: str | None = None):
        where = f" at {row}" if row else ""
        super().__init__(f"{source}: cannot parse {url}{where}: {message}")
        self.source, self.url, self.row = source, url, row


Parser = Callable[[Mapping[str, bytes]], pl.DataFrame]


@dataclass(frozen=True)
class Source:
    """One leaderboard: where it lives, how to read it, and under what terms."""

    id: str
    title: str
    homepage: str
    urls: Sequence[str]
    parse: Parser
    licence: str
    attribution: str
    # Which observation of a cell the matrix publishes when several sources report it: lower
    # wins (after BenchPress's own citations and the benchmark's owner; `pipelines.transforms.
    # matrix`). Required and unique across the registry, so a new source states where it
    # stands: first-party numbers before leaderboards before aggregators. Steps of 10 leave room.
    priority: int
    max_bytes: int = 32 * 1024 * 1024
    # For multi-file sources: given the payloads of `urls` (e.g. a listing), the further URLs.
    discover: Callable[[Mapping[str, bytes]], Sequence[str]] | None = None
    max_files: int = 5000
    # The frontier the matrix is about: the identity gate fails when too many of its rows stop
    # resolving (`pipelines.identity.checks`); not the long tails of small leaderboards.
    frontier: bool = False
    # Vendor-reported headline numbers: a row that states no setting is the model at its
    # canonical (headline) setting, not its default (`pipelines.identity.catalogue`).
    headline: bool = False
    # The field of SCORE_SCHEMA whose text names the model (`pipelines.identity.rules`): the
    # source-native key, or the display name where the key is a run folder or carries extras.
    name_field: str = "model_key"
    # A field read beside `name_field` for the date or setting the name leaves out (an API-id
    # key shown as `Claude-3.7-Sonnet (Thinking)`); None: nothing more to read.
    display_field: str | None = None
    # The rows' `extra` says what a run of the benchmark cost in USD (`cost`; ARC Prize's
    # `cost_per_task`): the snapshot's run costs are their medians (`pipelines.stages.costs`).
    run_costs: bool = False
    # For leaderboards of agent systems (a scaffold around one or more models): the agent (a
    # prefix) whose rows are one model's runs, named by the single model tag in
    # `extra["models"]` and displayed by the name after "+" in `model_name`; every other row is
    # a system, excluded (`pipelines.identity.resolve`). None: every row is one model's.
    one_model_agent: str | None = None
    # The release dates it states are upload days (a Hub repo's creation day), used only when
    # no other source dates the model (`pipelines.stages.side_information`).
    dates_are_uploads: bool = False
    # A long tail of small models (fine-tunes): `benchpress warehouse stats` also counts the
    # matrix without it, under this name ("the Open LLM Leaderboard"). None: not a long tail.
    long_tail: str | None = None

    def describe(self) -> dict[str, object]:
        return {
            "id": self.id,
            "title": self.title,
            "homepage": self.homepage,
            "urls": list(self.urls),
            "licence": self.licence,
            "attribution": self.attribution,
            "max_bytes": self.max_bytes,
        }


def decode_text(source: str, url: str, data: bytes) -> str:
    """UTF-8 or a clear error naming the byte offset: mis-decoded names would poison identity."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(source, url, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    stripped = text.lstrip()[:200].lower()
    if stripped.startswith(("<!doctype html", "<html")):
        raise ParseError(source, url, "got an HTML page where data was expected")
    return text


def load_json(source: str, url: str, data: bytes) -> object:
    """Strict JSON: NaN/Infinity literals are rejected rather than silently accepted."""
    text = decode_text(source, url, data)

    def _reject(token: str) -> float:
        raise ParseError(source, url, f"non-finite number {token!r} in JSON")

    try:
        return json.loads(text, parse_constant=_reject)
    except json.JSONDecodeError as exc:
        raise ParseError(source, url, f"invalid JSON ({exc.msg})", f"line {exc.lineno}") from None


def finite_value(source: str, url: str, raw: object, row: str) -> float | None:
    """Parse one score cell: blank -> None, numbers finite, anything else a ParseError."""
    if raw is None:
        return None
    if isinstance(raw, bool):
        raise ParseError(source, url, f"boolean {raw!r} where a score was expected", row)
    if isinstance(raw, int | float):
        value = float(raw)
    else:
        text = str(raw).strip()
        if text == "":
            return None
        try:
            value = float(text.rstrip("%"))
        except ValueError:
            raise ParseError(source, url, f"not a number: {text[:40]!r}", row) from None
    if not math.isfinite(value):
        raise ParseError(source, url, f"non-finite value {raw!r}", row)
    return value


def stated_date(raw: object) -> str | None:
    """A release date as a payload states it, in the one spelling the `release_date` column
    uses: `2025-04-16` (also from `2025-04-16T00:00:00.000Z`, `2025-04-16 12:00` or a parsed
    date), `2025-04` or `2025` when only that is stated; None when blank. Text that is no date
    at all is passed on stripped (at most 40 characters), so the release-date choice
    (`pipelines.stages.side_information`) rejects it and counts it instead of losing it here."""
    if raw is None or isinstance(raw, bool):
        return None
    if isinstance(raw, datetime):
        return raw.date().isoformat()
    if isinstance(raw, date):
        return raw.isoformat()
    text = str(raw).strip()
    if not text:
        return None
    match = _STATED_DATE.fullmatch(text)
    if match is None:
        return text[:40]
    return match.group(1)


def extra_json(facts: Mapping[str, object]) -> str | None:
    """Serialise extra facts deterministically (sorted keys, no NaN), None when empty."""
    kept = {
        k: v
        for k, v in facts.items()
        if v is not None and v != "" and not (isinstance(v, float) and not math.isfinite(v))
    }
    if not kept:
        return None
    return json.dumps(kept, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def scores_frame(rows: Sequence[Mapping[str, object]]) -> pl.DataFrame:
    """Build a frame in SCORE_SCHEMA from row dicts (missing keys become null), checking units."""
    frame = pl.DataFrame(
        [{name: row.get(name) for name in SCORE_SCHEMA} for row in rows],
        schema=SCORE_SCHEMA,
        orient="row",
    )
    bad = frame.filter(~pl.col("unit").is_in(list(UNITS)))
    if bad.height:
        raise ValueError(f"unknown unit {bad['unit'][0]!r} in parser output")
    return frame


def natural_order(ref: str) -> str:
    """A sort key putting row references in numeric order (`line 3` before `line 129`,
    `[9]` before `[10]`): every run of digits is zero-padded to one width."""
    return _DIGITS.sub(lambda m: m.group().zfill(32), ref)


def repeated_keys(frame: pl.DataFrame) -> pl.DataFrame:
    """Keys (KEY_COLUMNS) that more than one scored row of one payload has, with their row refs
    in row order (`rows`), first repeat first. Rows without a value (kept with a `rejected`
    reason, or keyless) never compete for a cell, so they are left out."""
    keyed = frame.filter(pl.col("model_key").is_not_null() & pl.col("value").is_not_null())
    if keyed.is_empty():
        return keyed.select(*KEY_COLUMNS, pl.lit(None, pl.List(pl.String)).alias("rows"))
    refs = keyed.select(*KEY_COLUMNS, pl.col("row_ref").fill_null("?"))
    grouped = (
        refs.group_by(KEY_COLUMNS)
        .agg(pl.col("row_ref").alias("rows"))
        .filter(pl.col("rows").list.len() > 1)
    )
    ordered = [sorted(rows, key=natural_order) for rows in grouped["rows"].to_list()]
    grouped = grouped.with_columns(pl.Series("rows", ordered, dtype=pl.List(pl.String)))
    second = [natural_order(rows[1]) for rows in ordered]
    return (
        grouped.with_columns(pl.Series("_second", second, dtype=pl.String))
        .sort("_second", "benchmark_key", "model_key", nulls_last=True)
        .drop("_second")
    )


def reject_repeated_keys(source: str, frame: pl.DataFrame) -> pl.DataFrame:
    """`frame`, or a ParseError naming both rows when one payload gives the same model, setting
    and benchmark twice: for sources where that is never legitimate, keeping either row would
    publish a number the file itself contradicts (or silently duplicates)."""
    repeats = repeated_keys(frame)
    if repeats.is_empty():
        return frame
    first = repeats.row(0, named=True)
    setting = ", ".join(
        f"{name} {first[name]!r}"
        for name in ("reasoning_effort", "thinking_budget", "agent")
        if first[name] is not None
    )
    where = f" ({setting})" if setting else ""
    also = f" and {len(first['rows']) - 2} more" if len(first["rows"]) > 2 else ""
    raise ParseError(
        source,
        first["payload_url"],
        f"model {first['model_key']!r}{where} on {first['benchmark_key']!r} appears twice in "
        f"one payload: {first['rows'][0]} and {first['rows'][1]}{also}"
        f" ({repeats.height} repeated keys in all)",
        first["rows"][1],
    )


def mark_repeated_keys(frame: pl.DataFrame) -> pl.DataFrame:
    """For sources that legitimately repeat a key (several runs, papers or tool settings of one
    model): every row of a repeated key gets `same_key_rows` in `extra`, all its rows in row
    order, so whichever row the matrix publishes, the others are named as the ones that lost."""
    repeats = repeated_keys(frame)
    if repeats.is_empty():
        return frame
    lookup = {
        tuple(row[c] for c in KEY_COLUMNS): row["rows"] for row in repeats.iter_rows(named=True)
    }
    extras = []
    for row in frame.select(*KEY_COLUMNS, "value", "extra").iter_rows(named=True):
        rows = lookup.get(tuple(row[c] for c in KEY_COLUMNS)) if row["value"] is not None else None
        if rows is None:
            extras.append(row["extra"])
            continue
        facts = json.loads(row["extra"]) if row["extra"] else {}
        extras.append(extra_json({**facts, "same_key_rows": rows}))
    return frame.with_columns(pl.Series("extra", extras, dtype=pl.String))
