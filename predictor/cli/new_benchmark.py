"""`benchpress predict-benchmark`: a new benchmark's scores for every model, from a few models'
scores on it (`BenchPress.predict_benchmark`, the transpose of `predict`).

Prints the predicted table (best first, one decimal, with the unit and P(above the next row)
for the ranked top), the public benchmarks it behaves most like and the models to run next;
`--json` prints every table, `--csv` the predictions frame (every model).
"""

from __future__ import annotations

import argparse
from typing import Any

from predictor.api import BenchPress
from predictor.cli.commands import NEW_BENCHMARK
from predictor.cli.options import (
    add_commands,
    add_snapshot_options,
    interval_level,
    parse_scores,
    positive_int,
)
from predictor.cli.output import (
    CommandError,
    emit,
    interval_text,
    level_label,
    print_table,
    printable,
)
from predictor.new_benchmark import MIN_SCORES, SCALES, NewBenchmarkPrediction

DEFAULT_TOP = 20
MAX_RANKED = 50  # rows with P(above next): the pairwise figures grow with the square
LISTED = 5  # similar benchmarks and models to run next in the table output


def _table_rows(result: NewBenchmarkPrediction, top: int) -> list[dict[str, Any]]:
    """The first `top` predictions as printable rows (one decimal, the interval as its two
    ends, like `predict`; blank for the known scores)."""
    above = {
        r["model"]: r["p_better_than_next"]
        for r in result.ranking.to_frame().iter_rows(named=True)
        if r["p_better_than_next"] is not None
    }
    rows = []
    for r in result.predictions.head(top).iter_rows(named=True):
        p = above.get(r["model_id"])
        rows.append(
            {
                "rank": r["rank"],
                "model": printable(r["model_id"]),
                "predicted": f"{r['predicted']:.1f}",
                "interval": "" if r["observed"] else interval_text(r["lower"], r["upper"]),
                "unit": result.unit,
                "P(>next)": "" if p is None else f"{100 * p:.0f}%",
                "kind": "known" if r["observed"] else "predicted",
            }
        )
    return rows


def print_result(result: NewBenchmarkPrediction, top: int) -> None:
    """The human output: header, predicted table, similar benchmarks, models to run next."""
    n = result.predictions.height
    print(
        f"{printable(result.name)}: {n:,} models of snapshot {result.version} from "
        f"{len(result.known)} known scores ({result.scale}), {level_label(result.level)} "
        "intervals"
    )
    for note in result.notes:
        print(f"  {printable(note)}")
    interval = f"{level_label(result.level)} interval"
    rows = [{**r, interval: r["interval"]} for r in _table_rows(result, top)]
    columns = ["rank", "model", "predicted", interval, "unit", "P(>next)", "kind"]
    print_table(rows, columns)
    if top < n:
        print(f"... {n - top:,} more; --top N shows more, --json or --csv every model")
    print()
    print(
        f"behaves most like (correlation of mean scores over the {n:,} models; r near 1 for "
        "most benchmarks when few scores are known):"
    )
    similar = [
        {
            "rank": r["rank"],
            "benchmark": printable(r["benchmark_id"]),
            "r": f"{r['correlation']:.3f}",
            "models": r["n_models"],
        }
        for r in result.similar.head(LISTED).iter_rows(named=True)
    ]
    print_table(similar, ["rank", "benchmark", "r", "models"])
    print()
    unit = "points" if result.scale == "percent" else "units"
    print(
        "run next (share of the other models' variance its score would remove; their mean "
        f"{level_label(result.level)} interval width in {unit}, now -> after):"
    )
    following = [
        {
            "rank": r["rank"],
            "model": printable(r["model_id"]),
            "predicted": f"{r['predicted']:.1f}",
            "removes": f"{100 * r['variance_reduction']:.0f}%",
            "width": f"{r['width_before']:.1f} -> {r['width_after']:.1f}",
        }
        for r in result.next_models.head(LISTED).iter_rows(named=True)
    ]
    if following:
        print_table(following, ["rank", "model", "predicted", "removes", "width"])
    else:
        print("(every model is known)")


def cmd_predict_benchmark(args: argparse.Namespace) -> int:
    scores = parse_scores(args.scores)
    if len(scores) < MIN_SCORES:
        raise CommandError(
            f"--scores: a new benchmark needs the scores of at least {MIN_SCORES} models, got "
            f"{len(scores)} (model=score,model=score,model=score)"
        )
    bp = BenchPress.load(args.version, store=args.store)
    result = bp.predict_benchmark(
        scores,
        scale=args.scale,
        level=args.level,
        name=args.name,
        top=max(min(args.top, MAX_RANKED), LISTED),
    )
    emit(
        args,
        result.predictions,
        payload=result.as_dict(),
        table=lambda: print_result(result, args.top),
    )
    return 0


def predict_benchmark_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--scores",
        required=True,
        help=(
            f"known models' scores on the new benchmark: model=score,... (at least "
            f"{MIN_SCORES}); a score may carry its standard error, model=61+-2.5"
        ),
    )
    p.add_argument(
        "--scale",
        choices=SCALES,
        default="percent",
        help="percent (0-100, the default) or unbounded (Elo, dollars, other open scales)",
    )
    p.add_argument("--level", type=interval_level, default=0.9, help="interval level (default 0.9)")
    p.add_argument("--name", help="the benchmark's name in the output (default 'new benchmark')")
    p.add_argument(
        "--top",
        type=positive_int,
        default=DEFAULT_TOP,
        help=f"rows of the table (default {DEFAULT_TOP}; P(>next) for the first "
        f"{MAX_RANKED}); --json and --csv hold every model",
    )
    add_snapshot_options(p)  # --version, --store, --json / --csv
    p.set_defaults(func=cmd_predict_benchmark)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `predict-benchmark` to a parser's sub-commands."""
    add_commands(subparsers, NEW_BENCHMARK)
