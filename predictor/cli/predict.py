"""`benchpress predict`: unseen benchmarks predicted from probe scores (`--scores`) or results
files (`--from`), with intervals. A probe may carry its standard error (`mmlu_pro=74+-1.5`,
or a file's): the table's `kind` shows it (`probe +-1.5`).

The table shows each interval as its two ends (`90% interval` `35.5-100.0`), never as a
`±` half-width: near a bound of the scale an interval is far from symmetric about the score.
`--handle-missing` is `BenchPress.predict`'s `handle_missing`: a probe the snapshot lacks or
cannot use (too few scores to fit) is left out with a warning, or refused."""

from __future__ import annotations

import argparse
from typing import Any

from predictor.cli.commands import PREDICT
from predictor.cli.inputs import command_scores, fractions_possible, print_benchmark_names
from predictor.cli.options import (
    STORE_HELP,
    TARGETS_HELP,
    VERSION_HELP,
    add_commands,
    add_from_options,
    add_output_options,
    add_side_options,
    interval_level,
    snapshot_reference,
    store_uri,
    target_names,
)
from predictor.cli.output import (
    emit,
    inputs_payload,
    interval_text,
    level_label,
    plural,
    print_inputs,
    print_side,
    print_table,
)
from predictor.missing_probes import HANDLE_MISSING
from predictor.values import predictions_frame


def _one_decimal(row: dict[str, Any], interval: str) -> dict[str, str]:
    """Score and interval (`low-high`, column `interval`) to one decimal whatever the level or
    the unit: a tenth of a point (or of an Elo point, a dollar, a minute) is the resolution any
    benchmark reports. A probe's interval is blank: it is the score as given."""
    shown = "" if row["observed"] else interval_text(row["low"], row["high"])
    return {"score": f"{row['score']:.1f}", interval: shown}


def _kind(observed: bool, stderr: float | None) -> str:
    """`predicted`, `probe`, or `probe +-1.5` for a probe given with its standard error."""
    if not observed:
        return "predicted"
    return "probe" if stderr is None else f"probe +-{stderr:.2g}"


def _percent(p: float | None) -> str:
    """A probability as a whole percentage; blank when there is none."""
    return "" if p is None else f"{100 * p:.0f}%"


def cmd_predict(args: argparse.Namespace) -> int:
    given = command_scores(args, "probe")
    bp, inputs, extra, replaced = given.bp, given.inputs, given.extra, given.replaced
    predictions = bp.predict(
        given.scores,
        level=args.level,
        targets=target_names(args.targets),
        handle_missing=args.handle_missing,
        convert_fractions=fractions_possible(inputs, extra),
        **given.side,
    )
    frame = predictions_frame(predictions)  # --csv: the Python API's table, as is
    shown = frame.sort("benchmark")

    def table() -> None:
        if inputs is not None:
            print_inputs(inputs, extra, replaced)
        print_benchmark_names(given.names)
        print(
            f"snapshot {bp.version}: {plural(len(predictions), 'benchmark')}, "
            f"{level_label(args.level)} intervals"
        )
        unit = dict(bp.snapshot.benchmarks.select("benchmark_id", "unit").iter_rows())
        interval = f"{level_label(args.level)} interval"
        rows = [
            {
                **r,
                **_one_decimal(r, interval),
                "unit": unit.get(r["benchmark"]) or "",
                "P(|err|<=5)": _percent(r["p_within_5"]) if not r["observed"] else "",
                "kind": _kind(r["observed"], predictions.stderr.get(r["benchmark"])),
            }
            for r in shown.to_dicts()
        ]
        columns = ["benchmark", "score", interval, "unit", "P(|err|<=5)", "kind"]
        print_table(rows, columns)
        print_side(predictions.side)

    payload = {
        "version": bp.version,
        "level": args.level,
        "side": predictions.side.as_dict(),
        "predictions": shown.to_dicts(),
        "stderr": predictions.stderr,  # each probe's standard error, where it had one
    }
    if inputs is not None:
        payload["inputs"] = inputs_payload(inputs, extra, replaced)
    emit(args, frame, payload=payload, table=table)
    return 0


def predict_arguments(predict: argparse.ArgumentParser) -> None:
    predict.add_argument(
        "--scores",
        help="probe scores: name=value,name=value; a score may carry its standard error, "
        "name=74+-1.5 (or 74±1.5), and then weighs less (with --from: added to the files' "
        "scores, replacing a file's score of the same benchmark)",
    )
    add_from_options(predict)
    add_side_options(predict)
    predict.add_argument("--version", type=snapshot_reference, default="latest", help=VERSION_HELP)
    predict.add_argument("--store", type=store_uri, help=STORE_HELP)
    predict.add_argument(
        "--level", type=interval_level, default=0.9, help="interval level (default 0.9)"
    )
    predict.add_argument(
        "--targets",
        help=f"only these: {TARGETS_HELP} (default: every benchmark)",
    )
    predict.add_argument(
        "--handle-missing",
        choices=HANDLE_MISSING,
        default="interpolate",
        help="a probe this snapshot lacks or has too few scores to use: left out with a "
        "warning while another probe is left (interpolate, the default), or refused (error)",
    )
    add_output_options(predict)
    predict.set_defaults(func=cmd_predict)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `predict` to a parser's sub-commands."""
    add_commands(subparsers, PREDICT)
