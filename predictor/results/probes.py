"""From a results frame to one model's probe scores: {benchmark_id: score}."""

from __future__ import annotations

import polars as pl

from predictor.results.errors import ResultsError
from predictor.results.frame import MAPPED

SAME_SCORE = 1e-9  # one result read twice (two names of one file) is not a conflict


def models_in(frame: pl.DataFrame) -> list[str]:
    """The models the frame holds results for, in first-seen order."""
    return list(dict.fromkeys(frame["model"].to_list()))


def model_rows(frame: pl.DataFrame, model: str | None = None) -> pl.DataFrame:
    """The rows of one model: `model`, or the only model in the frame."""
    models = models_in(frame)
    if model is None:
        if len(models) > 1:
            shown = ", ".join(models[:6]) + (" ..." if len(models) > 6 else "")
            raise ResultsError(
                "results",
                f"the files hold {len(models)} models ({shown})",
                hint="choose one with --model NAME (Python: model=NAME)",
            )
        if not models:
            raise ResultsError("results", "the files hold no results")
        return frame
    if model not in models:
        raise ResultsError(
            "results",
            f"no results for model {model!r}",
            hint=f"the files hold: {', '.join(models)}",
        )
    return frame.filter(pl.col("model") == model)


def probe_scores(frame: pl.DataFrame, model: str | None = None) -> dict[str, float]:
    """{benchmark_id: score} of one model's mapped rows.

    The same benchmark scored twice with different values (a task run twice, two tasks mapped
    on one benchmark) is an error naming both places: which one is meant is the user's call
    (drop a file, or `--map` one of the tasks elsewhere)."""
    rows = model_rows(frame, model).filter(pl.col("status") == MAPPED)
    scores: dict[str, float] = {}
    where: dict[str, str] = {}
    for benchmark, score, task, path in rows.select(
        "benchmark_id", "score", "task", "file"
    ).iter_rows():
        place = f"{path} ({task})"
        if benchmark in scores and abs(scores[benchmark] - score) > SAME_SCORE:
            raise ResultsError(
                path,
                f"{benchmark} is scored twice with different values: {scores[benchmark]:g} "
                f"in {where[benchmark]} and {score:g} in {place}",
                hint="keep one of the two files, or map one task elsewhere with --map",
            )
        scores.setdefault(benchmark, score)
        where.setdefault(benchmark, place)
    if not scores:
        raise ResultsError(
            "results",
            "no result maps onto a benchmark of ours",
            hint="see the unmapped tasks listed; map one with --map task=benchmark",
        )
    return scores
