"""LiveCodeBench code generation: per-problem pass@1 aggregated to one pass@1 per model (0-100).

The site ships `performances_generation.json`: per (model, problem) pass@1 records with the
problem's contest `date` (epoch ms), `difficulty` and `platform`, plus a `models` list
(`model_name` = API id with effort suffix such as `o3-mini-2025-01-31__high`, `model_repr` =
display name the records refer to, `model_style`, `release_date` = contamination cut-off, `link`).
The leaderboard is not stored: the site averages pass@1 over the problems whose date falls in a
user-chosen window (`getLeaderboard` in the site's `leaderboardLib`), and its default window has
changed between releases.

Aggregation choice: **the full window of the payload**, from the earliest to the latest problem
date in the file, i.e. the mean pass@1 over every problem recorded for the model (no rounding; the
site rounds to 0.1). A fixed, window-free rule keeps every model on the same problem set and makes
re-runs reproducible; the window itself (`window_start`/`window_end`), the number of problems
(overall and per difficulty and platform), the per-difficulty pass@1, the cut-off date
(`cutoff_date`, the `release_date` field) and the site's contamination
flag for that window (`release_date >= window_start`) are stored in `extra`, so a narrower window
can be recomputed from the same payload later. One row per model, benchmark key `code_generation`.
The rows' `release_date` column stays null: the payload's `release_date` is the model's
training-data cut-off the site uses to flag contaminated problems (GPT-4O-2024-08-06 and
o4-mini are both dated 2023-04-30), not when the model was released.

`model_key` is `model_name` (the API id); `model_name` in the output is `model_repr`, which can
state a setting the API id does not (`claude-3-7-sonnet-20250219` is shown as
`Claude-3.7-Sonnet (Thinking)`, `model_style` `Claude3Thinking`): identity reads both (the
source's `display_field`, `pipelines/identity/rules.py`), so that run is the thinking one. A model
listed without records is kept with a null value and a `rejected` reason; records naming a model
missing from `models` are still aggregated (keyed by their display name) with a note. Repeated
(model, problem) records with the same value are counted once; with different values they are a
ParseError, as the mean would depend on which one is right.

The recorded payload is the only obtainable version (16 models, 1,055 problems, 2023-05-08 to
2025-04-07), pinned by commit in the site repository where it was bundled into the app. The live
site serves the same schema at https://livecodebench.github.io/performances_generation.json
(larger than 4 MiB); pointing `URL` there and raising `max_bytes` is all a live switch needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import polars as pl

from pipelines.sources.base import (
    ParseError,
    Source,
    extra_json,
    finite_value,
    load_json,
    scores_frame,
)

SOURCE_ID = "livecodebench"
COMMIT = "83b6481b4890c4951730f53bdde815b25e0f7f3a"
URL = (
    f"https://raw.githubusercontent.com/LiveCodeBench/livecodebench.github.io/{COMMIT}"
    "/src/mocks/performances_generation.json"
)
BENCHMARK = ("code_generation", "LiveCodeBench code generation (pass@1)")
RECORD_KEYS = ("model", "question_id", "date", "pass@1")
DIFFICULTIES = ("easy", "medium", "hard")


def _day(epoch_ms: object) -> str | None:
    if isinstance(epoch_ms, bool) or not isinstance(epoch_ms, int | float):
        return None
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).date().isoformat()


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _records(doc: dict) -> dict[str, dict[str, tuple[float, dict]]]:
    """model_repr -> question_id -> (pass@1, record), validated."""
    performances = doc["performances"]
    if not isinstance(performances, list):
        raise ParseError(SOURCE_ID, URL, "'performances' is not a list")
    by_model: dict[str, dict[str, tuple[float, dict]]] = {}
    first_at: dict[tuple[str, str], int] = {}
    for i, record in enumerate(performances):
        ref = f"performances[{i}]"
        if not isinstance(record, dict):
            raise ParseError(SOURCE_ID, URL, "record is not an object", ref)
        missing = [k for k in RECORD_KEYS if k not in record]
        if missing:
            raise ParseError(SOURCE_ID, URL, f"missing keys {missing}", ref)
        model, question = record["model"], record["question_id"]
        if not isinstance(model, str) or not model.strip():
            raise ParseError(SOURCE_ID, URL, "empty model name", ref)
        if not isinstance(question, str | int) or isinstance(question, bool):
            raise ParseError(SOURCE_ID, URL, f"bad question_id {question!r}", ref)
        date = record["date"]
        if isinstance(date, bool) or not isinstance(date, int | float) or date != date:
            raise ParseError(SOURCE_ID, URL, f"date {date!r} is not epoch milliseconds", ref)
        value = finite_value(SOURCE_ID, URL, record["pass@1"], f"{ref}, pass@1")
        if value is None or not 0.0 <= value <= 100.0:
            raise ParseError(SOURCE_ID, URL, f"pass@1 {record['pass@1']!r} outside 0-100", ref)
        problems = by_model.setdefault(model, {})
        key = str(question)
        first = first_at.setdefault((model, key), i)
        if key in problems and problems[key][0] != value:
            raise ParseError(
                SOURCE_ID,
                URL,
                f"conflicting pass@1 for {model!r} on problem {key!r}:"
                f" performances[{first}] and {ref}",
                ref,
            )
        problems.setdefault(key, (value, record))
    return by_model


def _models(doc: dict) -> list[dict]:
    models = doc["models"]
    if not isinstance(models, list):
        raise ParseError(SOURCE_ID, URL, "'models' is not a list")
    seen_repr: dict[str, int] = {}
    seen_key: dict[str, int] = {}
    for i, model in enumerate(models):
        ref = f"models[{i}]"
        if not isinstance(model, dict) or not isinstance(model.get("model_repr"), str):
            raise ParseError(SOURCE_ID, URL, "model entry without a 'model_repr'", ref)
        key = model.get("model_name") or model["model_repr"]
        first = seen_repr.get(model["model_repr"], seen_key.get(key))
        if first is not None:
            raise ParseError(
                SOURCE_ID, URL, f"model {key!r} listed twice: models[{first}] and {ref}", ref
            )
        seen_repr[model["model_repr"]] = i
        seen_key[key] = i
    return models


def parse(payloads: Mapping[str, bytes]) -> pl.DataFrame:
    doc = load_json(SOURCE_ID, URL, payloads[URL])
    if not isinstance(doc, dict):
        raise ParseError(SOURCE_ID, URL, "expected an object with performances and models")
    missing = [k for k in ("performances", "models") if k not in doc]
    if missing:
        raise ParseError(SOURCE_ID, URL, f"missing keys {missing}")
    models = _models(doc)
    by_model = _records(doc)
    dates = [r["date"] for problems in by_model.values() for _, r in problems.values()]
    start, end = (min(dates), max(dates)) if dates else (None, None)
    all_problems = {q for problems in by_model.values() for q in problems}
    window = {
        "aggregation": "mean pass@1 over all problems in the payload (full date window)",
        "window_start": _day(start),
        "window_end": _day(end),
        "problems_in_window": len(all_problems),
    }
    listed = [(m.get("model_name") or m["model_repr"], m["model_repr"], m) for m in models]
    known = {m["model_repr"] for m in models}
    listed += [(r, r, None) for r in sorted(by_model) if r not in known]
    rows = []
    for index, (key, display, model) in enumerate(listed):
        ref = f"models[{index}]" if model is not None else f"performances (model {display!r})"
        problems = by_model.get(display, {})
        facts: dict[str, object] = dict(window)
        if model is not None:
            release = model.get("release_date")
            facts.update(
                {
                    "model_style": model.get("model_style"),
                    "link": model.get("link"),
                    "cutoff_date": _day(release),  # contamination cut-off, not the release
                    "contaminated": (
                        release >= start
                        if isinstance(release, int | float) and start is not None
                        else None
                    ),
                }
            )
        else:
            facts["note"] = "model has records but no entry in 'models'"
        common = {
            "source": SOURCE_ID,
            "payload_url": URL,
            "row_ref": ref,
            "model_key": key,
            "model_name": display,
            "benchmark_key": BENCHMARK[0],
            "benchmark_name": BENCHMARK[1],
            "unit": "percent",
        }
        if not problems:
            facts["rejected"] = "no performance records for this model"
            rows.append({**common, "value": None, "extra": extra_json(facts)})
            continue
        values = [v for v, _ in problems.values()]
        facts["problems"] = len(values)
        for level in DIFFICULTIES:
            level_values = [v for v, r in problems.values() if r.get("difficulty") == level]
            facts[f"problems_{level}"] = len(level_values)
            facts[f"pass@1_{level}"] = _mean(level_values)
        platforms: dict[str, int] = {}
        for _, record in problems.values():
            platform = str(record.get("platform") or "unknown")
            platforms[platform] = platforms.get(platform, 0) + 1
        facts["problems_by_platform"] = dict(sorted(platforms.items()))
        rows.append({**common, "value": _mean(values), "extra": extra_json(facts)})
    return scores_frame(rows)


SOURCE = Source(
    id=SOURCE_ID,
    title="LiveCodeBench (code generation leaderboard)",
    homepage="https://livecodebench.github.io/leaderboard.html",
    urls=(URL,),
    parse=parse,
    licence=(
        "No licence file in the LiveCodeBench site repository; "
        "problems from LeetCode/AtCoder/Codeforces"
    ),
    attribution=(
        "Jain et al., LiveCodeBench: Holistic and Contamination Free Evaluation of Large Language "
        "Models for Code, ICLR 2025."
    ),
    priority=70,
    # keys `claude-3-7-sonnet-20250219`, shows `Claude-3.7-Sonnet (Thinking)`: the display
    # name's date and setting fill what the key does not state
    display_field="model_name",
    max_bytes=8 * 1024 * 1024,
)
