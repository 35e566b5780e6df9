"""A percent column holding two scales (fractions or distances beside 0-100 scores) is caught:
by the publish gate's matrix check, and by `suspicious` on any snapshot."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl

from pipelines.checks import matrix_problems
from predictor import BenchPress
from predictor.evaluation.protocols import DEFAULT_MATRIX_PATH, load_paper_matrix
from predictor.trust.scale_mix import mixed_scale_cells, mixed_scale_columns


def cells(rows: list[tuple[str, str, float]]) -> pl.DataFrame:
    frame = pl.DataFrame(rows, schema=["model_id", "benchmark_id", "score"], orient="row")
    return frame.with_columns(source=pl.lit("src"), payload_url=pl.lit("https://example.org/x"))


# four models of one strength on two ordinary benchmarks, then the column under test
PEERS = [
    (m, b, s)
    for m, s in (("a", 70.0), ("b", 72.0), ("c", 74.0), ("d", 76.0))
    for b in ("mmlu_pro", "gpqa_diamond")
]
SCALES = {"mmlu_pro": "percent", "gpqa_diamond": "percent", "ocr": "percent"}


def test_fractions_beside_percents_among_like_models_are_a_mix() -> None:
    frame = cells(
        [*PEERS, ("a", "ocr", 0.85), ("d", "ocr", 0.88), ("b", "ocr", 86.0), ("c", "ocr", 90.0)]
    )
    mixed = mixed_scale_columns(frame, SCALES)
    assert mixed.rows() == [("ocr", 2, 0.88, 2, 86.0, "fraction")]
    assert matrix_problems(frame, SCALES, 1, 1) == [
        "ocr mixes scales: 2 scores in (0, 0.88] beside 2 from 86 up "
        "(fractions or distances among percents)"
    ]
    odd = mixed_scale_cells(frame, SCALES)
    assert odd.rows() == [("a", "ocr", 0.85), ("d", "ocr", 0.88)]


def test_a_single_fraction_is_flagged_but_does_not_block_publishing() -> None:
    frame = cells(
        [*PEERS, ("b", "ocr", 0.9), ("a", "ocr", 88.0), ("c", "ocr", 86.0), ("d", "ocr", 90.0)]
    )
    assert mixed_scale_cells(frame, SCALES).rows() == [("b", "ocr", 0.9)]
    assert matrix_problems(frame, SCALES, 1, 1) == []  # the gate needs two on each side


def test_weak_models_scoring_under_one_percent_are_not_a_mix() -> None:
    weak = [(m, b, 5.0) for m in ("w1", "w2") for b in ("mmlu_pro", "gpqa_diamond")]
    frame = cells(
        [
            *PEERS,
            *weak,
            ("w1", "hard", 0.3),
            ("w2", "hard", 1.0),
            ("a", "hard", 25.0),
            ("b", "hard", 31.0),
        ]
    )
    assert mixed_scale_columns(frame, {**SCALES, "hard": "percent"}).is_empty()


def test_zeros_and_open_scales_are_never_fraction_looking() -> None:
    frame = cells(
        [*PEERS, ("a", "elo", 0.5), ("b", "elo", 0.7), ("c", "elo", 1300.0), ("d", "elo", 1350.0)]
    )
    frame = pl.concat(
        [
            frame,
            cells([("a", "ocr", 0.0), ("b", "ocr", 0.0), ("c", "ocr", 80.0), ("d", "ocr", 85.0)]),
        ]
    )
    assert mixed_scale_columns(frame, {**SCALES, "elo": "unbounded"}).is_empty()


def published_paper_cells() -> tuple[pl.DataFrame, dict[str, str]]:
    """The BenchPress matrix's cells exactly as its data.json publishes them (no unit handling)."""
    values, models, benchmarks, scales = load_paper_matrix(DEFAULT_MATRIX_PATH)
    i, j = np.nonzero(~np.isnan(values))
    frame = pl.DataFrame(
        {
            "model_id": [models[k] for k in i],
            "benchmark_id": [benchmarks[k] for k in j],
            "score": values[i, j],
        }
    )
    return frame, dict(zip(benchmarks, scales, strict=True))


def test_the_published_paper_matrix_mixes_scales_in_omnidocbench_1_5() -> None:
    frame, scale_of = published_paper_cells()
    scale_of["omnidocbench"] = "unbounded"  # the edit-distance column: a fraction throughout
    mixed = mixed_scale_columns(frame, scale_of)
    # aime_2025 (1B models at 0.33 and 1.0, the rest from 20 up) is a hard benchmark, no mix
    assert mixed.rows() == [("omnidocbench_1.5", 9, 0.154, 2, 89.1, "percent")]


def test_resolved_paper_matrix_reads_omnidocbench_1_5_on_one_scale() -> None:
    paper = BenchPress.from_pretrained("microsoft/benchpress-v1")
    benchmarks = paper.snapshot.benchmarks
    scale_of = dict(benchmarks.select("benchmark_id", "scale").iter_rows())
    assert mixed_scale_columns(paper.snapshot.cells, scale_of).is_empty()
    column = paper.snapshot.cells.filter(pl.col("benchmark_id") == "omnidocbench_1.5")
    assert column.height == 11 and column["score"].min() > 80


def test_suspicious_lists_the_odd_cells_of_a_mixed_column_first() -> None:
    bp = BenchPress.load()
    cells = bp.snapshot.cells
    # the column as the paper matrix publishes it: edit distances beside two 100 x (1 - d)
    in_column = pl.col("benchmark_id") == "omnidocbench_1.5"
    as_published = pl.when(in_column).then(pl.col("raw_value")).otherwise(pl.col("score"))
    mixed = dataclasses.replace(bp.snapshot, cells=cells.with_columns(as_published.alias("score")))
    flagged = BenchPress(mixed).suspicious_scores()
    head = flagged.head(2).select("model_id", "benchmark_id", "observed", "reason")
    assert head.rows() == [
        ("gpt-5.4", "omnidocbench_1.5", 89.1, "mixed scale"),
        ("qwen3.6-plus", "omnidocbench_1.5", 91.2, "mixed scale"),
    ]
    assert set(flagged["reason"][2:]) == {"residual"}
    assert flagged["z"][2:].abs().min() > 3.5
