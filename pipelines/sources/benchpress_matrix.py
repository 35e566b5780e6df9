"""Microsoft BenchPress paper score matrix (84 models x 133 benchmarks), the canonical id space.

Each model's `release_date` (`models[].release_date`: a day, or `2023-05` / `2023` where the
paper gives only that) is the `release_date` of every one of its rows."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from pipelines.sources.base import (
    ParseError,
    Source,
    extra_json,
    finite_value,
    load_json,
    reject_repeated_keys,
    scores_frame,
    stated_date,
)

URL = "https://microsoft.github.io/benchpress/data.json"

# Columns that are not 0-100 percentages (SOURCE.md, "Scales"). `omnidocbench` is a normalised
# edit distance on 0-1 (every recorded value is below 0.2): a fraction, made percent downstream.
NON_PERCENT_UNITS = {
    "omnidocbench": "fraction",
    "chatbot_arena_elo": "elo",
    "codeforces_rating": "rating",
    "gdpval_aa_elo": "elo",
    "swelancer_freelance_dollars": "dollars",
    "vending_bench_2": "score",
}
# `omnidocbench_1.5` ("OmniDocBench 1.5", higher is better) holds two spellings of one metric:
# most cells are the overall normalised edit distance on 0-1 (lower is better, as the citations
# say; Kimi's card converted its 1 - distance to it), two are llm-stats' 100 x (1 - distance):
# gpt-5.4 is 0.109 in `omnidocbench` and 89.1 here. A cell at or below 1 is the distance.
EDIT_DISTANCE_COLUMNS = frozenset({"omnidocbench_1.5"})


# `longfact_concepts` / `longfact_objects` are "hallucination rate" columns (lower is better;
# OpenAI's GPT-5 developer post: 0.7 to 8.9). The cells the matrix cites to the Doubao Seed 2.0
# model card (gpt-5.2, claude-opus-4.5, claude-sonnet-4.5, gemini-3-pro, doubao-seed-2.0-pro:
# 92.8 to 99.7) are that card's higher-is-better score, another metric: they go to a benchmark
# id of their own, keyed by (column, citation), rather than into the rate's column.
SEED2_MODEL_CARD = (
    "https://lf3-static.bytednsdoc.com/obj/eden-cn/lapzild-tss/ljhwZthlaukjlkulzlp/seed2/0214/"
    "Seed2.0%20Model%20Card.pdf"
)
OTHER_METRIC_CELLS = {
    ("longfact_concepts", SEED2_MODEL_CARD): (
        "longfact_concepts_score",
        "LongFact-Concepts (score as the Seed 2.0 model card reports it; higher is better)",
    ),
    ("longfact_objects", SEED2_MODEL_CARD): (
        "longfact_objects_score",
        "LongFact-Objects (score as the Seed 2.0 model card reports it; higher is better)",
    ),
}


def cell_benchmark(
    benchmark: str, name: str | None, citation_url: str | None
) -> tuple[str, str | None]:
    """(benchmark key, name) of a cell: its column's, unless its citation gives another metric."""
    return OTHER_METRIC_CELLS.get((benchmark, citation_url or ""), (benchmark, name))


def cell_unit(benchmark: str, value: float) -> str:
    if benchmark in EDIT_DISTANCE_COLUMNS and value <= 1.0:
        return "edit_distance"
    return NON_PERCENT_UNITS.get(benchmark, "percent")


# Plausible range per unit: a value outside is a broken export, never a score.
UNIT_RANGES = {
    "percent": (0.0, 100.0),
    "fraction": (0.0, 1.0),
    "edit_distance": (0.0, 1.0),
    "elo": (0.0, 10_000.0),
    "rating": (0.0, 10_000.0),
    "dollars": (0.0, 1e7),
    "score": (-1e7, 1e7),
}


def _entry_id(entries: list, i: int, kind: str) -> str:
    entry = entries[i]
    key = entry.get("id") if isinstance(entry, dict) else None
    if not isinstance(key, str) or not key.strip():
        raise ParseError("benchpress_matrix", URL, f"{kind} without an 'id'", f"{kind}s[{i}]")
    return key


def parse(payloads: Mapping[str, bytes]) -> pl.DataFrame:
    doc = load_json("benchpress_matrix", URL, payloads[URL])
    if not isinstance(doc, dict) or not {"models", "benchmarks", "observed"} <= doc.keys():
        raise ParseError("benchpress_matrix", URL, "expected keys models, benchmarks, observed")
    models, benchmarks, observed = doc["models"], doc["benchmarks"], doc["observed"]
    model_ids = [_entry_id(models, i, "model") for i in range(len(models))]
    bench_ids = [_entry_id(benchmarks, j, "benchmark") for j in range(len(benchmarks))]
    citations = doc.get("sources") or [[None] * len(benchmarks)] * len(models)
    if len(observed) != len(models):
        raise ParseError("benchpress_matrix", URL, f"{len(observed)} rows for {len(models)} models")
    rows = []
    for i, model in enumerate(models):
        line = observed[i]
        if not isinstance(line, list) or len(line) != len(benchmarks):
            raise ParseError("benchpress_matrix", URL, "row length != benchmark count", f"row {i}")
        setting = model.get("canonical_setting") or {}
        for j, bench in enumerate(benchmarks):
            ref = f"observed[{i}][{j}]"
            value = finite_value("benchpress_matrix", URL, line[j], ref)
            if value is None:
                continue
            unit = cell_unit(bench_ids[j], value)
            low, high = UNIT_RANGES[unit]
            if not low <= value <= high:
                raise ParseError(
                    "benchpress_matrix", URL, f"{bench_ids[j]}={value} outside {unit} range", ref
                )
            cite = citations[i][j] if i < len(citations) and j < len(citations[i]) else None
            cite = cite or {}
            key, name = cell_benchmark(bench_ids[j], bench.get("name"), cite.get("url"))
            rows.append(
                {
                    "source": "benchpress_matrix",
                    "payload_url": URL,
                    "row_ref": ref,
                    "model_key": model_ids[i],
                    "model_name": model.get("name"),
                    "benchmark_key": key,
                    "benchmark_name": name,
                    "value": value,
                    "unit": unit,
                    "reasoning_effort": setting.get("effort"),
                    "release_date": stated_date(model.get("release_date")),
                    "extra": extra_json(
                        {
                            "provider": model.get("provider"),
                            "reasoning": model.get("reasoning"),
                            "release_date": model.get("release_date"),
                            "open_weights": model.get("open_weights"),
                            "mode": setting.get("mode"),
                            "citation_url": cite.get("url"),
                            "citation_type": cite.get("type"),
                            "audit_status": cite.get("audit_status"),
                            "matrix_column": bench_ids[j] if key != bench_ids[j] else None,
                        }
                    ),
                }
            )
    return reject_repeated_keys("benchpress_matrix", scores_frame(rows))


SOURCE = Source(
    id="benchpress_matrix",
    title="BenchPress score matrix (Microsoft, arXiv:2606.24020)",
    homepage="https://microsoft.github.io/benchpress/",
    urls=(URL,),
    parse=parse,
    licence="CDLA-Permissive-2.0 (scores); MIT (code)",
    attribution='Zeng & Papailiopoulos, "You Don\'t Need to Run Every Eval", 2026.',
    priority=0,  # audited citations: first in every cell
    frontier=True,
    headline=True,
    max_bytes=16 * 1024 * 1024,
)
