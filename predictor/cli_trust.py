"""`benchpress compare | probes | next | suspicious`: trustworthy-answer commands.

Wired into `benchpress` by `register(subparsers)`; every command prints a table, JSON with
`--json` or, with `--csv`, the frame the Python API returns (`predictor.cli_output.emit`).
Helpers of `predictor.cli` are imported inside the commands (cli imports this module at load
time).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from predictor.cli_output import (
    CommandError,
    add_output_options,
    add_progress_option,
    emit,
    frame_rows,
    interval_level,
    level_label,
    positive_float,
    positive_int,
    print_frame,
    printable,
    progress_bar,
)
from predictor.cli_results import FROM_HELP, add_from_options
from predictor.resolve import UnknownNameError

if TYPE_CHECKING:
    from predictor.results.inputs import ResultInputs

STORE_HELP = "snapshot store: a directory, s3://bucket/prefix or https:// URL"
LEVEL_HELP = "interval level between 0 and 1 (default 0.9)"
TARGETS_HELP = "a profile (coding_assistant, chat, reasoning, general_assistant) or name,name,..."


def _load(args: argparse.Namespace):
    from predictor.api import BenchPress

    return BenchPress.load(args.version, store=args.store)


def _names(text: str, option: str) -> list[str]:
    """`a,b,,c` -> [a, b, c]; a list with no name in it is a usage error naming `option`."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise CommandError(f"{option} needs at least one name, got {text!r}")
    return names


def target_names(text: str | None) -> str | list[str] | None:
    """One name is a profile or a benchmark (`resolve_targets` tells which); several are
    benchmarks."""
    if text is None:
        return None
    names = _names(text, "--targets")
    return names[0] if len(names) == 1 else names


def _parse_model(text: str, bp=None) -> tuple[str | None, dict[str, float]]:
    """`NAME:bench=1,bench=2` or `bench=1,bench=2`. A bare name (`gpt-4o`) is a known model
    given where a new model's scores go: say where known models go instead."""
    from predictor.cli import parse_scores

    if "=" not in text and text.strip():
        known = ""
        if bp is not None:
            try:
                known = f" ({bp.resolve_model(text.strip())} is a known model)"
            except (UnknownNameError, ValueError):
                known = ""
        raise CommandError(
            f"--model takes a new model's scores, [NAME:]benchmark=score,..., got "
            f"{printable(text)!r}{known}; rank against known models with --reference "
            f"{printable(text.strip())}"
        )
    name, sep, rest = text.partition(":")
    if sep and "=" not in name:
        return name.strip(), parse_scores(rest)
    return None, parse_scores(text)


def _file_models(bp, args: argparse.Namespace) -> list[tuple[str, ResultInputs]]:
    """(name, inputs) of every model in the `--from` files, in first-seen order."""
    from predictor.cli_results import no_scores_error, read_from
    from predictor.results.inputs import summarise_models

    if not args.from_paths:
        return []
    found = list(summarise_models(read_from(bp, args)).items())
    for model, inputs in found:
        if not inputs.scores:
            raise no_scores_error(inputs, f"model {model!r}")
    return found


def cmd_compare(args: argparse.Namespace) -> int:
    from predictor.cli import check_distinct_benchmarks
    from predictor.cli_results import check_from_options, inputs_payload, print_inputs
    from predictor.trust import compare_models, compare_with_known_models

    check_from_options(args)
    if not args.model and not args.from_paths:
        raise CommandError("give the models: --model [NAME:]name=value,... or --from PATH")
    bp = _load(args)
    parsed = [_parse_model(t, bp) for t in args.model or ()]
    names = [n or f"model_{k + 1}" for k, (n, _) in enumerate(parsed)]
    probes = [p for _, p in parsed]
    for scores in probes:
        check_distinct_benchmarks(scores, bp.resolve_benchmark, "--model", bp.resolve_model)
    from_files = _file_models(bp, args)
    names += [name for name, _ in from_files]
    probes += [inputs.scores for _, inputs in from_files]
    if len(set(names)) < len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise CommandError(f"model {', '.join(map(repr, twice))} is given twice; name each once")

    def show_inputs() -> None:
        for _, inputs in from_files:
            print_inputs(inputs)
        if from_files:
            print()

    inputs = [inputs_payload(i) for _, i in from_files]
    targets = target_names(args.targets)
    if args.reference:
        if len(probes) != 1:
            raise CommandError(
                f"--reference compares exactly one model, got {len(probes)} "
                f"({', '.join(printable(n) for n in names)})"
            )
        refs = _names(args.reference, "--reference")
        result = compare_with_known_models(
            bp,
            probes[0],
            refs,
            targets=targets or "general_assistant",
            level=args.level,
            name=names[0],
        )
        frame = result.to_frame()
        payload = {"version": bp.version, "rows": frame_rows(frame)}
        if from_files:
            payload["inputs"] = inputs

        def reference_table() -> None:
            show_inputs()
            print(result.summary())

        emit(args, frame, payload=payload, table=reference_table)
        return 0
    if len(probes) < 2:
        raise CommandError(
            "give two or more --model, or one --model with --reference"
            if not args.from_paths
            else f"the --from files hold {len(from_files)} model(s) and --model gives "
            f"{len(parsed)}: give two or more models, or one with --reference"
        )
    if targets is None:
        raise CommandError("--targets is required when comparing models")
    result = compare_models(bp, probes, targets, names=names, level=args.level)
    frame = result.to_frame()

    def table() -> None:
        show_inputs()
        columns = ["benchmark", "rank", "model", "score", "low", "high", "tie_group"]
        print_frame(frame, [*columns, "p_better_than_next"])
        print()
        print(result.summary())

    payload = {
        "version": bp.version,
        "rows": frame_rows(frame),
        "pairwise": frame_rows(result.pairwise()),
    }
    if from_files:
        payload["inputs"] = inputs
    emit(args, frame, payload=payload, table=table)
    return 0


def cmd_probes(args: argparse.Namespace) -> int:
    from predictor.cli_results import print_next_steps
    from predictor.results.runnable import next_steps

    bp = _load(args)
    allow = None if args.allow is None else _names(args.allow, "--allow")
    with progress_bar(args, desc="probe search", unit="candidate") as bar:
        sel = bp.select_probes(
            k=args.k,
            budget=args.budget,
            targets=target_names(args.targets),
            allowlist=allow,
            progress=bar.update_to if bar.enabled else None,
        )
    frame = sel.to_frame()
    steps = next_steps(frame["benchmark"].to_list())

    def table() -> None:
        print(
            f"snapshot {bp.version}: greedy probes (expected MedAE of the targets, in-sample; "
            f"no probe: {sel.baseline_error:.2f})"
        )
        columns = ["step", "benchmark", "expected_medae", "cost", "cumulative_cost"]
        print_frame(frame, [*columns, "lm_eval_task", "inspect_task"])
        print_next_steps(steps)

    payload = {"version": bp.version, **sel.as_dict(), "commands": steps.as_dict()}
    payload["tasks"] = frame_rows(frame.select("benchmark", "lm_eval_task", "inspect_task"))
    emit(args, frame, payload=payload, table=table)
    return 0


def cmd_next(args: argparse.Namespace) -> int:
    from predictor.cli import parse_scores
    from predictor.cli_results import (
        check_from_options,
        fractions_checked,
        from_args,
        gathered_scores,
        inputs_payload,
        print_inputs,
        print_next_steps,
    )
    from predictor.results.runnable import next_steps
    from predictor.trust import what_to_run_next

    check_from_options(args)
    if args.scores is None and not args.from_paths:
        raise CommandError(
            "give the known scores: --scores name=value,... or --from PATH (results files), or both"
        )
    extra = parse_scores(args.scores) if args.scores is not None else None
    bp = _load(args)
    inputs, known, replaced = gathered_scores(bp, args, extra)
    with fractions_checked(inputs, extra):
        frame = what_to_run_next(
            bp,
            known,
            targets=target_names(args.targets),
            budget=args.budget,
            top=args.top,
            level=args.level,
        )
    again = from_args(args) + (["--scores", args.scores] if args.scores is not None else [])
    steps = next_steps(frame["benchmark"].to_list(), predict_args=again)

    def table() -> None:
        if inputs is not None:
            print_inputs(inputs, extra, replaced)
        print(
            f"snapshot {bp.version}: mean {level_label(args.level)} interval width of the "
            "targets before / after running each benchmark"
        )
        columns = ["rank", "benchmark", "cost", "predicted", "width_before", "width_after"]
        print_frame(frame, [*columns, "reduction_per_cost", "lm_eval_task", "inspect_task"])
        print_next_steps(steps)

    payload = {
        "version": bp.version,
        "level": args.level,
        "rows": frame_rows(frame),
        "commands": steps.as_dict(),
    }
    if inputs is not None:
        payload["inputs"] = inputs_payload(inputs, extra, replaced)
    emit(args, frame, payload=payload, table=table)
    return 0


TABLE_ROWS = 50  # suspicious cells in the human table unless --top says otherwise


def cmd_suspicious(args: argparse.Namespace) -> int:
    from predictor.trust import suspicious_scores

    bp = _load(args)
    every = suspicious_scores(bp, threshold=args.threshold)
    # the table shows TABLE_ROWS by default; --json/--csv mirror the whole Python frame
    top = args.top or (None if args.json or args.csv else TABLE_ROWS)
    frame = every if top is None else every.head(top)

    def table() -> None:
        print(
            f"snapshot {bp.version}: observed scores with |leave-one-out z| > "
            f"{args.threshold:g}, and the odd cells of columns that mix scales"
        )
        columns = ["model_id", "benchmark_id", "observed", "predicted", "z", "reason"]
        print_frame(frame, [*columns, "source"] if "source" in frame.columns else columns)
        if frame.height < every.height:
            print(f"... {every.height - frame.height} more of {every.height}; --top N shows more")

    payload = {
        "version": bp.version,
        "threshold": args.threshold,
        "total": every.height,
        "rows": frame_rows(frame),
    }
    emit(args, frame, payload=payload, table=table)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    from predictor.cli import VERSION_HELP, snapshot_reference

    p.add_argument("--version", type=snapshot_reference, default="latest", help=VERSION_HELP)
    p.add_argument("--store", help=STORE_HELP)
    add_output_options(p)


def register(subparsers) -> None:
    compare = subparsers.add_parser(
        "compare", help="rank models predicted from probe scores, with P(A better than B)"
    )
    compare.add_argument(
        "--model",
        action="append",
        help="[NAME:]name=value,name=value (repeat per model)",
    )
    add_from_options(  # --model means a model's scores here: every model of the files is one
        compare,
        model_option=False,
        from_help=f"{FROM_HELP}; every model in them is compared",
    )
    compare.add_argument("--targets", help=TARGETS_HELP)
    compare.add_argument("--reference", help="snapshot models to rank one --model against")
    compare.add_argument("--level", type=interval_level, default=0.9, help=LEVEL_HELP)
    _common(compare)
    compare.set_defaults(func=cmd_compare)

    probes = subparsers.add_parser("probes", help="which benchmarks to run as probes")
    probes.add_argument("--k", type=positive_int, default=5, help="probes to pick (default 5)")
    probes.add_argument("--budget", type=positive_float, help="total cost budget (trust.costs)")
    probes.add_argument("--targets", help=TARGETS_HELP)
    probes.add_argument("--allow", help="benchmarks allowed as probes: name,name,...")
    _common(probes)
    add_progress_option(probes)
    probes.set_defaults(func=cmd_probes)

    nxt = subparsers.add_parser("next", help="which benchmark to run next for a new model")
    nxt.add_argument(
        "--scores",
        help="known scores: name=value,name=value (with --from: added to the files' scores)",
    )
    add_from_options(nxt)
    nxt.add_argument("--targets", help=TARGETS_HELP)
    nxt.add_argument("--budget", type=positive_float, help="largest cost of one benchmark")
    nxt.add_argument("--top", type=positive_int, default=5, help="rows to show (default 5)")
    nxt.add_argument("--level", type=interval_level, default=0.9, help=LEVEL_HELP)
    _common(nxt)
    nxt.set_defaults(func=cmd_next)

    sus = subparsers.add_parser("suspicious", help="observed scores far from their prediction")
    sus.add_argument(
        "--threshold",
        type=positive_float,
        default=3.5,
        help="flag cells whose |leave-one-out z| exceeds this (default 3.5)",
    )
    sus.add_argument(
        "--top",
        type=positive_int,
        help=f"rows to show (default: {TABLE_ROWS} in the table, every row with --json/--csv)",
    )
    _common(sus)
    sus.set_defaults(func=cmd_suspicious)
