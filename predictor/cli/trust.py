"""`benchpress compare | probes | next | suspicious`: trustworthy-answer commands.

Every command prints a table, JSON with `--json` or, with `--csv`, the frame the Python API
returns (`predictor.cli.output.emit`).
"""

from __future__ import annotations

import argparse
import contextlib
import shlex

from predictor.api import BenchPress
from predictor.cli.commands import TRUST
from predictor.cli.inputs import (
    benchmark_names,
    check_distinct_benchmarks,
    command_scores,
    fractions_possible,
    print_benchmark_names,
    read_from,
)
from predictor.cli.options import (
    FROM_HELP,
    TARGETS_HELP,
    add_commands,
    add_from_options,
    add_progress_option,
    add_side_options,
    add_snapshot_options,
    check_from_options,
    from_args,
    interval_level,
    name_list,
    parse_scores,
    positive_float,
    positive_int,
    target_names,
    token_count,
)
from predictor.cli.output import (
    CommandError,
    emit,
    frame_rows,
    inputs_payload,
    level_label,
    no_scores_error,
    print_frame,
    print_inputs,
    print_next_steps,
    print_side,
    print_table,
    printable,
    progress_bar,
)
from predictor.harnesses import DEFAULT_HARNESS, get_harness, harnesses, task_column_names
from predictor.harnesses.endpoint import chat_only
from predictor.names.resolve import UnknownNameError
from predictor.results.inputs import ResultInputs, summarise_models
from predictor.results.runnable import next_steps
from predictor.trust import (
    compare_models,
    compare_with_known_models,
    default_references,
    suspicious_scores,
    what_to_run_next,
)

LEVEL_HELP = "interval level between 0 and 1 (default 0.9)"


def _load(args: argparse.Namespace) -> BenchPress:
    return BenchPress.load(args.version, store=args.store)


def _parse_model(
    text: str, bp: BenchPress | None = None
) -> tuple[str | None, dict[str, float | tuple[float, float]]]:
    """`NAME:bench=1,bench=2` or `bench=1,bench=2` (a score may carry its standard error,
    `bench=74+-1.5`). A bare name (`gpt-4o`) is a known model given where a new model's
    scores go: say where known models go instead."""
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


def _file_models(bp: BenchPress, args: argparse.Namespace) -> list[tuple[str, ResultInputs]]:
    """(name, inputs) of every model in the `--from` files, in first-seen order."""
    if not args.from_paths:
        return []
    found = list(summarise_models(read_from(bp, args)).items())
    for model, inputs in found:
        if not inputs.scores:
            raise no_scores_error(inputs, f"model {model!r}")
    return found


def cmd_compare(args: argparse.Namespace) -> int:
    check_from_options(args)
    if not args.model and not args.from_paths:
        raise CommandError("give the models: --model [NAME:]name=value,... or --from PATH")
    bp = _load(args)
    parsed = [_parse_model(t, bp) for t in args.model or ()]
    names = [n or f"model_{k + 1}" for k, (n, _) in enumerate(parsed)]
    models: list[str | None] = [n for n, _ in parsed]  # side information: named ones only
    probes = [p for _, p in parsed]
    for scores in probes:
        check_distinct_benchmarks(scores, bp.resolve_benchmark, "--model", bp.resolve_model)
    from_files = _file_models(bp, args)
    names += [name for name, _ in from_files]
    models += [inputs.model or name for name, inputs in from_files]
    probes += [inputs.measured for _, inputs in from_files]
    if len(set(names)) < len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise CommandError(f"model {', '.join(map(repr, twice))} is given twice; name each once")

    read_as = {
        n: b
        for scores in probes[: len(parsed)]
        for n, b in benchmark_names(scores, bp.resolve_benchmark).items()
    }

    def show_inputs() -> None:
        for _, inputs in from_files:
            print_inputs(inputs)
        if from_files:
            print()
        print_benchmark_names(read_as)

    inputs = [inputs_payload(i) for _, i in from_files]
    targets = target_names(args.targets)
    # the files of one model and nothing to rank it against: the default references
    defaulted = not args.reference and not parsed and len(from_files) == 1
    if args.reference or defaulted:
        if len(probes) != 1:
            raise CommandError(
                f"--reference compares exactly one model, got {len(probes)} "
                f"({', '.join(printable(n) for n in names)})"
            )
        known_targets = targets or "general_assistant"
        if defaulted:
            # deferred: only this branch says how the default references are chosen
            from predictor.trust.reference_choice import RULE as DEFAULT_RULE

            refs = default_references(bp, known_targets)
        else:
            refs = [n for text in args.reference for n in name_list(text, "--reference")]
        result = compare_with_known_models(
            bp,
            probes[0],
            refs,
            targets=known_targets,
            level=args.level,
            name=names[0],
            model=args.name or models[0],
            family=args.family,
            release_date=args.release_date,
            base=args.base,
        )
        frame = result.to_frame()
        payload = {
            "version": bp.version,
            "rows": frame_rows(frame),
            "measurement_noise": result.measurement_noise(),
        }
        if defaulted:
            payload["references"] = {"models": refs, "chosen_by": DEFAULT_RULE}
        if result.side is not None:
            payload["side"] = result.side.as_dict()
        if from_files:
            payload["inputs"] = inputs

        def reference_table() -> None:
            show_inputs()
            if defaulted:
                print(
                    f"the files hold one model and no --reference was given: ranking "
                    f"{printable(names[0])} among {DEFAULT_RULE} (--reference NAME,... "
                    "chooses others)"
                )
            print(result.summary())
            if result.side is not None:
                print_side(result.side, names[0])

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
    if args.name or args.family or args.release_date or args.base:
        raise CommandError(
            "--name, --family, --release-date and --base describe the one model of --reference; "
            "name each of several models as --model NAME:benchmark=score,..."
        )
    result = compare_models(bp, probes, targets, names=names, level=args.level, models=models)
    frame = result.to_frame()

    def table() -> None:
        show_inputs()
        columns = ["benchmark", "rank", "model", "score", "low", "high", "tie_group"]
        print_frame(frame, [*columns, "p_best", "expected_rank", "p_better_than_next"])
        print()
        print(result.summary())
        for name, side in result.sides.items():
            print_side(side, name)

    payload = {
        "version": bp.version,
        "rows": frame_rows(frame),
        "pairwise": frame_rows(result.pairwise()),
        "overall": frame_rows(result.overall()),
        "measurement_noise": result.measurement_noise(),
        "sides": {name: side.as_dict() for name, side in result.sides.items()},
    }
    if from_files:
        payload["inputs"] = inputs
    emit(args, frame, payload=payload, table=table)
    return 0


def cmd_probes(args: argparse.Namespace) -> int:
    if args.budget_tokens is not None and args.runnable is None:
        raise CommandError(
            "--budget-tokens plans the probes of one tool: add --runnable "
            f"{' or '.join(h.name for h in harnesses())}"
        )
    if args.budget_tokens is not None and args.budget is not None:
        raise CommandError(
            "--budget (standard runs) and --budget-tokens (tokens) are two budgets: give one"
        )
    bp = _load(args)
    allow = None if args.allow is None else name_list(args.allow, "--allow")
    chat = chat_only(args.model_type)
    harness = None if args.runnable is None else get_harness(args.runnable)
    if args.model_type and harness is not None and harness.chat_probe_set:
        # a mistyped chat type would choose log-likelihood probes that `run` then refuses
        with contextlib.suppress(ImportError):  # without the tool: nothing to check against
            harness.tool.check_model_type(args.model_type)
    if args.budget_tokens is not None:
        return _probe_plan(args, bp, harness, allow, chat)
    with progress_bar(args, desc="probe search", unit="candidate") as bar:
        sel = bp.select_probes(
            k=args.k,
            budget=args.budget,
            targets=target_names(args.targets),
            allowlist=allow,
            progress=bar.update_to if bar.enabled else None,
            runnable=args.runnable,
            chat=chat,
        )
    frame = sel.to_frame(chat=chat)
    steps = next_steps(
        frame["benchmark"].to_list(), chat_model_type=args.model_type if chat else None
    )

    def table() -> None:
        print(
            f"snapshot {bp.version}: greedy probes (expected MedAE of the targets, in-sample; "
            f"no probe: {sel.baseline_error:.2f})"
        )
        columns = ["step", "benchmark", "expected_medae", "cost", "cumulative_cost"]
        print_frame(frame, [*columns, *task_column_names()])
        if (short := sel.shortfall()) is not None:
            print(short)
        print_next_steps(steps)
        if harness is not None:
            named = [] if harness.id == DEFAULT_HARNESS else ["--harness", harness.name]
            command = ["benchpress", "run", "MODEL", *named]
            command += ["--model-type", args.model_type or "TYPE"]
            command += ["--probes", ",".join(sel.benchmarks), "--predict"]
            print("or let benchpress run them and predict:")
            print(f"  {shlex.join(command)}")

    payload = {"version": bp.version, **sel.as_dict(), "commands": steps.as_dict()}
    payload.update(requested=sel.requested, stopped=sel.stopped, shortfall=sel.shortfall())
    payload["tasks"] = frame_rows(frame.select("benchmark", *task_column_names()))
    emit(args, frame, payload=payload, table=table)
    return 0


def _probe_plan(args: argparse.Namespace, bp: BenchPress, harness, allow, chat: bool) -> int:
    """`probes --runnable TOOL --budget-tokens N`: the plan by cost (`BenchPress.plan_probes`)."""
    from predictor.runs.plan import format_tokens  # deferred: only this branch sizes tokens
    from predictor.trust.probe_plan import MIN_GAIN  # deferred: as above
    from predictor.trust.probes import NO_GAIN  # deferred: as above

    with progress_bar(args, desc="probe plan", unit="move") as bar:
        try:
            plan = bp.plan_probes(
                harness.id,
                args.budget_tokens,
                chat=chat,
                targets=target_names(args.targets),
                allowlist=allow,
                progress=bar.update_to if bar.enabled else None,
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
    frame = plan.to_frame()
    rows = [
        {
            "step": step,
            "benchmark": p.benchmark,
            "task": p.task,
            "items": f"{p.items} of {p.total}" if p.subset else p.items,
            "tokens": format_tokens(p.tokens),
            "expected_medae": f"{p.expected_medae:.2f}",
        }
        for step, p in enumerate(plan.probes, start=1)
    ]
    named = [] if harness.id == DEFAULT_HARNESS else ["--harness", harness.name]
    command = ["benchpress", "run", "MODEL", *named, "--model-type", args.model_type or "TYPE"]
    command += ["--budget-tokens", _token_text(args.budget_tokens), "--predict"]

    def table() -> None:
        print(
            f"snapshot {bp.version}: {harness.label} probe plan within "
            f"{format_tokens(args.budget_tokens)} tokens (expected MedAE of the targets, "
            f"in-sample, with each subset's sampling noise; no probe: {plan.baseline_error:.2f})"
        )
        print_table(rows, ["step", "benchmark", "task", "items", "tokens", "expected_medae"])
        subsets = sum(p.subset for p in plan.probes)
        print(
            f"plan: {len(plan.probes)} tasks ({subsets} on a seeded random subset of their "
            f"items), {format_tokens(plan.tokens)} tokens, expected MedAE "
            f"{plan.expected_error:.2f}"
        )
        if plan.stopped == NO_GAIN:
            print(
                f"below the budget: no other task, and no more items, lowers the expected "
                f"MedAE by {MIN_GAIN:g} or more"
            )
        print("run it and predict:")
        print(f"  {shlex.join(command)}")

    payload = {"version": bp.version, **plan.as_dict(), "command": shlex.join(command)}
    emit(args, frame, payload=payload, table=table)
    return 0


def _token_text(tokens: int) -> str:
    """`2M`, `500k` or `123456`: a token count as `--budget-tokens` takes it, short."""
    for suffix, scale in (("M", 1_000_000), ("k", 1000)):
        if tokens % scale == 0:
            return f"{tokens // scale}{suffix}"
    return str(tokens)


def _runnable_harness(args: argparse.Namespace):
    """The harness of `--runnable` (None without), its `--model-type` checked against the
    tool where it is installed (as `probes` does); `--model-type` alone is refused."""
    if args.runnable is None:
        if args.model_type:
            raise CommandError(
                "--model-type says what the --runnable tool runs on: add --runnable "
                f"{' or '.join(h.name for h in harnesses())}"
            )
        return None
    harness = get_harness(args.runnable)
    if args.model_type and harness.chat_probe_set:
        with contextlib.suppress(ImportError):  # without the tool: nothing to check against
            harness.tool.check_model_type(args.model_type)
    return harness


def cmd_next(args: argparse.Namespace) -> int:
    harness = _runnable_harness(args)
    chat = chat_only(args.model_type)
    given = command_scores(args, "known")
    bp, inputs, extra, replaced = given.bp, given.inputs, given.extra, given.replaced
    side_used = bp.side_for(**given.side)[0]
    frame = what_to_run_next(
        bp,
        given.scores,
        targets=target_names(args.targets),
        budget=args.budget,
        top=args.top,
        level=args.level,
        runnable=None if harness is None else harness.id,
        chat=chat,
        convert_fractions=fractions_possible(inputs, extra),
        **given.side,
    )
    again = from_args(args) + (["--scores", args.scores] if args.scores is not None else [])
    steps = next_steps(
        frame["benchmark"].to_list(),
        predict_args=again,
        chat_model_type=args.model_type if chat else None,
    )
    run_line = None
    if harness is not None and frame.height:
        named = [] if harness.id == DEFAULT_HARNESS else ["--harness", harness.name]
        command = ["benchpress", "run", "MODEL", *named]
        command += ["--model-type", args.model_type or "TYPE"]
        run_line = shlex.join([*command, "--probes", frame["benchmark"][0], "--predict"])

    def table() -> None:
        if inputs is not None:
            print_inputs(inputs, extra, replaced)
        print_benchmark_names(given.names)
        print(
            f"snapshot {bp.version}: mean {level_label(args.level)} interval width of the "
            "targets before / after running each benchmark"
        )
        columns = ["rank", "benchmark", "cost", "predicted", "width_before", "width_after"]
        print_frame(frame, [*columns, "reduction_per_cost", *task_column_names()])
        print_side(side_used)
        print_next_steps(steps)
        if run_line is not None:
            print(f"or let benchpress run the first with {harness.label} and predict:")
            print(f"  {run_line}")

    payload = {
        "version": bp.version,
        "level": args.level,
        "side": side_used.as_dict(),
        "rows": frame_rows(frame),
        "commands": steps.as_dict(),
    }
    if harness is not None:
        payload["runnable"] = harness.id
        payload["commands"]["run"] = run_line
    if inputs is not None:
        payload["inputs"] = inputs_payload(inputs, extra, replaced)
    emit(args, frame, payload=payload, table=table)
    return 0


TABLE_ROWS = 50  # suspicious cells in the human table unless --top says otherwise


def cmd_suspicious(args: argparse.Namespace) -> int:
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


def compare_arguments(compare: argparse.ArgumentParser) -> None:
    compare.add_argument(
        "--model",
        action="append",
        help="[NAME:]name=value,name=value (repeat per model); a score may carry its standard "
        "error, name=74+-1.5; observed scores are compared +- their noise (that error, else "
        "a default per benchmark, stated in the answer)",
    )
    add_from_options(  # --model means a model's scores here: every model of the files is one
        compare,
        model_option=False,
        from_help=f"{FROM_HELP}; every model in them is compared",
    )
    compare.add_argument("--targets", help=TARGETS_HELP)
    compare.add_argument(
        "--reference",
        action="append",
        help="known models to rank one model against: NAME,NAME,... (repeatable); "
        "private:NAME is a private model (benchpress models add)",
    )
    add_side_options(compare)
    compare.add_argument("--level", type=interval_level, default=0.9, help=LEVEL_HELP)
    add_snapshot_options(compare)
    compare.set_defaults(func=cmd_compare)


def probes_arguments(probes: argparse.ArgumentParser) -> None:
    probes.add_argument("--k", type=positive_int, default=5, help="probes to pick (default 5)")
    probes.add_argument("--budget", type=positive_float, help="total cost budget (trust.costs)")
    probes.add_argument(
        "--budget-tokens",
        type=token_count,
        metavar="N",
        help="with --runnable: plan the probes by cost within N tokens (2M, 500k): "
        "benchmarks and how many of their items to run, by expected error per token "
        "(--k is not used)",
    )
    probes.add_argument("--targets", help=TARGETS_HELP)
    probes.add_argument("--allow", help="benchmarks allowed as probes: name,name,...")
    add_runnable_options(
        probes,
        "choose only among benchmarks this tool has a task for (what `benchpress run` can run)",
    )
    add_snapshot_options(probes)
    add_progress_option(probes)
    probes.set_defaults(func=cmd_probes)


def add_runnable_options(parser: argparse.ArgumentParser, runnable_help: str) -> None:
    """`--runnable TOOL` and the `--model-type` it is run on (`probes`, `next`)."""
    parser.add_argument("--runnable", choices=[h.name for h in harnesses()], help=runnable_help)
    parser.add_argument(
        "--model-type",
        metavar="TYPE",
        help="with --runnable: the model type to run them on; a chat endpoint "
        "(local-chat-completions, openai-chat-completions, ...) gets only generative tasks",
    )


def next_arguments(nxt: argparse.ArgumentParser) -> None:
    nxt.add_argument(
        "--scores",
        help="known scores: name=value,name=value, a score may carry its standard error "
        "(name=74+-1.5) (with --from: added to the files' scores)",
    )
    add_from_options(nxt)
    add_side_options(nxt)
    nxt.add_argument("--targets", help=TARGETS_HELP)
    nxt.add_argument("--budget", type=positive_float, help="largest cost of one benchmark")
    nxt.add_argument("--top", type=positive_int, default=5, help="rows to show (default 5)")
    nxt.add_argument("--level", type=interval_level, default=0.9, help=LEVEL_HELP)
    add_runnable_options(
        nxt,
        "recommend only benchmarks this tool has a task for (what `benchpress run` can run), "
        "as `probes --runnable` chooses",
    )
    add_snapshot_options(nxt)
    nxt.set_defaults(func=cmd_next)


def suspicious_arguments(sus: argparse.ArgumentParser) -> None:
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
    add_snapshot_options(sus)
    sus.set_defaults(func=cmd_suspicious)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `compare`, `probes`, `next` and `suspicious` to a parser's sub-commands."""
    add_commands(subparsers, TRUST)
