"""`benchpress run MODEL`: run the probes with lm-eval or Inspect, then predict, compare,
store or track from what they wrote, in one command.

The plan is printed before any request (`--dry-run` stops there). The follow-ups are the
commands a user would type next, run on the files just written: `predict --from`, `compare
--from --reference`, `models add --from` and `track --from --step` (the last two are the
private store's, registered through the `benchpress.commands` entry points, so this module
imports nothing of the warehouse)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from predictor.cli.commands import RUN
from predictor.cli.main import main as benchpress_main
from predictor.cli.options import (
    STORE_HELP,
    TARGETS_HELP,
    VERSION_HELP,
    add_commands,
    add_side_options,
    interval_level,
    nonempty_text,
    positive_int,
    snapshot_reference,
    store_uri,
    token_count,
    whole_number,
)
from predictor.cli.output import EXIT_FAILED, CommandError, plural, print_table, printable
from predictor.harnesses import DEFAULT_HARNESS, either, get_harness, harnesses
from predictor.runs.settings import parse_task_overrides
from predictor.util.item_subsets import shown_score
from predictor.util.text_safety import raw_stream

if TYPE_CHECKING:
    from predictor.runs.plan import RunPlan


@contextmanager
def tool_stderr() -> Iterator[None]:
    """The tools' own progress bars (lm-eval's per-task request bars, Inspect's) write
    carriage returns, which the escaping of `benchpress` output would print as text: they
    get the raw stderr while the tasks run. What they show is the tool's and the user's own
    endpoint's, not a downloaded payload's."""
    saved = sys.stderr
    sys.stderr = raw_stream(saved)
    try:
        yield
    finally:
        sys.stderr = saved


def print_plan(plan: RunPlan) -> None:
    # deferred: the plan's helpers read the maps (Polars); `run --help` loads neither
    from predictor.runs.plan import format_duration, format_tokens, plan_rows

    tool = get_harness(plan.harness).label
    limited = f", {plan.limit} items per task (a smoke test)" if plan.limit else ""
    if plan.subset is not None:
        limited = f", {plan.subset.describe()}"
    elif plan.subsets:
        seed = next(iter(plan.subsets.values())).seed
        limited = (
            f", a probe plan by cost ({plural(len(plan.subsets), 'task')} on seeded random "
            f"subsets of their items, seed {seed})"
        )
    print(
        f"plan: {printable(plan.model)} with {tool} ({plan.model_type}), "
        f"{plural(len(plan.tasks), 'probe')}{limited}, files in {printable(plan.out)}"
    )
    for name, value in plan.settings.items():
        print(f"  {name}: {printable(value)}")
    print_table(plan_rows(plan), ["benchmark", "task", "items", "shots", "tokens", "status"])
    notes = [(t.benchmark, t.note) for t in plan.tasks if t.note]
    if notes:
        print("how these runs differ from the matrix's scores:")
        for benchmark, note in notes:
            print(f"  {printable(benchmark)}: {printable(note)}")
    todo = plan.to_run
    if not todo:
        print("nothing to run: every task finished in an earlier run (their files are read)")
        return
    print(
        f"to run: {plural(len(todo), 'task')}, {format_tokens(plan.tokens)} tokens, "
        f"{format_duration(plan.seconds)} at {plan.tokens_per_second:,.0f} tokens/s "
        "(estimates)"
    )


def _follow_ups(args: argparse.Namespace, files: Sequence[str], maps: Sequence[str]) -> list:
    """The commands that use the run's files, as argument lists for `benchpress`."""
    sources = [a for f in files for a in ("--from", f)] + [a for m in maps for a in ("--map", m)]
    # a smoke test's files: read as such on purpose (`cmd_run` asked --allow-limited to store)
    # (a subset run's are usable probes: nothing to allow)
    sources += ["--allow-limited"] if args.limit is not None else []
    snapshot = ["--version", args.version] + (["--store", args.store] if args.store else [])
    side = [
        *(["--family", args.family] if args.family else []),
        *(["--release-date", args.release_date] if args.release_date else []),
    ]
    level = ["--level", str(args.level)]
    targets = ["--targets", args.targets] if args.targets else []
    commands = []
    if args.predict:
        commands.append(
            ["predict", *sources, "--name", args.model, *side, *snapshot, *level, *targets]
        )
    if args.compare:
        commands.append(
            ["compare", *sources, "--name", args.model, "--reference", args.compare, *side]
            + [*snapshot, *level, *targets]
        )
    if args.add:
        commands.append(["models", "add", args.add, *sources, "--replace", *snapshot])
    if args.track:
        trackers = [
            *(["--mlflow", args.mlflow] if args.mlflow else []),
            *(["--wandb", args.wandb] if args.wandb else []),
        ]
        commands.append(
            ["track", args.track, *sources, "--step", str(args.step), *side, *snapshot, *level]
            + [*targets, *trackers]
        )
    return commands


def cmd_run(args: argparse.Namespace) -> int:
    from predictor.api import BenchPress  # deferred: numpy, Polars; `run --help` needs none
    from predictor.runs.dataset_preflight import DatasetError  # deferred: as above
    from predictor.runs.options import run_options  # deferred: as above
    from predictor.runs.runner import execute_plan, plan_probe_run  # deferred: as above

    stores = [flag for flag, on in (("--add", args.add), ("--track", args.track)) if on]
    if args.limit is not None and stores and not args.allow_limited:
        raise CommandError(
            f"--limit runs {args.limit} items per task, a smoke test: its scores are not the "
            f"model's, so {stores[0]} refuses them; add --allow-limited to store them anyway"
        )
    if args.track and args.step is None:
        raise CommandError("--track RUN needs --step N (the checkpoint's training step)")
    if (args.mlflow or args.wandb) and not args.track:
        raise CommandError("--mlflow and --wandb log a tracked run: add --track RUN --step N")
    harness = get_harness(args.harness)
    if not args.dry_run:  # a plan is printed only if it can run
        harness.require("`benchpress run`")
    bp = BenchPress.load(args.version, store=args.store)
    own = parse_task_overrides(args.task)
    plan, endpoint, tool = plan_probe_run(
        args.model,
        args.probes,
        harness.id,
        args.out,
        args.limit,
        model_type=args.model_type,
        model_args=args.model_args,
        tasks=own or None,
        include_path=args.include_path,
        bp=bp,
        timeout=args.timeout,
        task_timeout=args.task_timeout,
        items=args.items,
        items_seed=args.items_seed,
        budget_tokens=args.budget_tokens,
        options=run_options(
            args.num_fewshot, args.batch_size, args.apply_chat_template, args.gen_kwargs
        ),
        tokenizer=args.tokenizer,
    )
    if not args.dry_run and plan.to_run:  # a plan is printed only if its tool can run it
        tool.check_model_type(endpoint.model_type)
    print_plan(plan)
    if args.dry_run:
        return 0
    sys.stdout.flush()

    def told(benchmark: str, task: str, outcome: str) -> None:
        print(f"{printable(benchmark)} ({printable(task)}): {printable(outcome)}", flush=True)

    try:
        with tool_stderr():
            scores = execute_plan(
                plan, endpoint, tool, progress=args.progress is not False, on_task=told
            )
    except DatasetError as error:  # one line per task and dataset, then nothing runs
        for problem in error.problems:
            print(f"benchpress: error: {printable(problem)}", file=sys.stderr)
        count = plural(len(error.problems), "dataset problem")
        print(f"benchpress: error: nothing was run ({count})", file=sys.stderr)
        return EXIT_FAILED
    ran = [t for t in plan.tasks if t.benchmark in scores.files]
    if scores.failed:
        print(
            f"{plural(len(scores.failed), 'probe')} failed, so what follows is from "
            f"{len(ran)} of {len(plan.tasks)} probes:"
        )
        for benchmark, error in scores.failed.items():
            print(f"  {printable(benchmark)}: {printable(error)}")
    if scores.limited:
        print(f"scores from {args.limit} items per task (--limit): a smoke test, not the model's")
    if scores.subsets:
        asked = f"--items {args.items}" if args.items is not None else "the probe plan"
        print(
            f"scores from a seeded random subset of the items ({asked}, seed "
            f"{args.items_seed}): usable probes, each with its standard error"
        )
    if not ran:
        return EXIT_FAILED
    files = [str(scores.files[t.benchmark]) for t in ran]
    maps = [f"{t.task.rpartition('@')[2]}={t.benchmark}" for t in ran if t.own_task]
    code = 0
    for command in _follow_ups(args, files, maps):
        print()
        sys.stdout.flush()
        code = max(code, benchpress_main(command))
    if not any((args.predict, args.compare, args.add, args.track)):
        print(f"probe scores: {', '.join(_shown(scores, b) for b in scores)}")
        # a line that works as printed: your own tasks mapped, a smoke test's scores allowed
        argv = ["--from", str(plan.out), *(a for m in maps for a in ("--map", m))]
        argv += ["--allow-limited"] if args.limit is not None else []
        print(f"predict from them: benchpress predict {printable(shlex.join(argv))}")
    return EXIT_FAILED if scores.failed else code


def _shown(scores, benchmark: str) -> str:
    """`gsm8k=62.5`, or for a subset's score `gsm8k=62.5 ±4.8 (100 of 240 items)`."""
    found = scores.subsets.get(benchmark)
    value = scores[benchmark]
    if found is None:
        return f"{benchmark}={value:g}"
    score = value.score if isinstance(value, tuple) else value
    shown = shown_score(score, found["stderr"], found["items"], found["items_total"])
    return f"{benchmark}={shown}"


def seed_number(text: str) -> int:
    """argparse type: a whole number >= 0 (`--items-seed`, `--num-fewshot`)."""
    return whole_number(text, 0)


def run_arguments(run: argparse.ArgumentParser) -> None:
    every = harnesses()
    run.description = (
        f"Run MODEL's probe benchmarks with {either([h.title for h in every], quote=False)} "
        "(the plan is printed first), write each task's results file under --out, then predict "
        "(--predict), compare (--compare), store (--add) or track (--track) from them. "
        "Re-running the same command resumes: finished tasks are read, not run. The "
        "endpoint and key can come from BENCHPRESS_MODEL_BASE_URL, BENCHPRESS_MODEL_TYPE and "
        "BENCHPRESS_MODEL_API_KEY (the key only from there)."
    )
    run.add_argument("model", type=nonempty_text, help="the model's name")
    default = get_harness(DEFAULT_HARNESS).name
    run.add_argument(
        "--harness",
        choices=sorted(h.name for h in every),
        default=default,
        help=f"default {default}",
    )
    types = "; ".join(f"{h.label}'s {', '.join(h.model_types)}" for h in every if h.model_types)
    run.add_argument(
        "--model-type",
        metavar="TYPE",
        help=f"the tool's model type: {types} (default: BENCHPRESS_MODEL_TYPE)",
    )
    run.add_argument(
        "--model-args",
        metavar="K=V,...",
        help="the tool's model arguments, e.g. base_url=http://127.0.0.1:8000/v1/completions "
        "(the full endpoint; default: BENCHPRESS_MODEL_BASE_URL); never the key",
    )
    run.add_argument(
        "--probes",
        default="default",
        help="benchmarks to run, in full: name,name,... or 'default' (the snapshot's probe "
        "plan for the tool: its benchmarks, each on a seeded subset of its items or all; "
        "generative tasks only for a chat model type)",
    )
    run.add_argument(
        "--task",
        action="append",
        metavar="BENCHMARK=TASK",
        help="run BENCHMARK with a task of your own (found with --include-path); repeatable",
    )
    run.add_argument(
        "--include-path",
        action="append",
        metavar="DIR",
        help="a folder of your own task definitions (lm-eval's --include_path); repeatable",
    )
    run.add_argument(
        "--out", metavar="DIR", help="where results files go (default: BENCHPRESS_HOME/runs/MODEL)"
    )
    run.add_argument(
        "--limit",
        type=positive_int,
        metavar="N",
        help="N items per task: a smoke test whose scores are marked as such",
    )
    run.add_argument(
        "--items",
        type=positive_int,
        metavar="N",
        help="a seeded random subset of N items per task (all of a smaller task): usable "
        "probes with their standard error, files in --out/items-N; a larger N later extends "
        "the same subset",
    )
    run.add_argument(
        "--budget-tokens",
        type=token_count,
        metavar="N",
        help="with the default probes: plan them within N tokens (2M, 500k), each task on a "
        "seeded subset of its items or all, by expected error per token (default: the "
        "snapshot's plan, within what the default lm-eval set cost before plans, ~8.6M; "
        "`benchpress probes --runnable TOOL --budget-tokens N` shows it)",
    )
    run.add_argument(
        "--items-seed",
        type=seed_number,
        default=0,
        metavar="S",
        help="with --items: the seed of the subset (default 0)",
    )
    run.add_argument(
        "--allow-limited",
        action="store_true",
        help="let --add / --track store scores of a --limit run",
    )
    run.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="longest one request may wait for the server, per read, and the endpoint check "
        "in all (default: BENCHPRESS_MODEL_TIMEOUT, else 120)",
    )
    run.add_argument(
        "--task-timeout",
        type=float,
        metavar="SECONDS",
        help="longest one task may run, in a process of its own killed past it (default: 10 "
        "x the plan's estimate for the task, at least 1 h, 12 h if unsized; 0: none)",
    )
    _tool_options(run)
    run.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    run.add_argument("--predict", action="store_true", help="then print the predictions")
    run.add_argument(
        "--compare", metavar="REF,...", help="then rank the model among these snapshot models"
    )
    run.add_argument("--add", metavar="NAME", help="then store the scores as private model NAME")
    run.add_argument("--track", metavar="RUN", help="then store them as a checkpoint of RUN")
    run.add_argument("--step", type=int, metavar="N", help="with --track: the checkpoint's step")
    run.add_argument(
        "--mlflow", metavar="URI", help="with --track: log the run to this MLflow tracking URI"
    )
    run.add_argument(
        "--wandb", metavar="PROJECT", help="with --track: log the run to this W&B project"
    )
    run.add_argument("--targets", help=f"for --predict/--compare/--track: {TARGETS_HELP}")
    add_side_options(run, name=False)
    run.add_argument(
        "--level", type=interval_level, default=0.9, help="interval level (default 0.9)"
    )
    run.add_argument("--version", type=snapshot_reference, default="latest", help=VERSION_HELP)
    run.add_argument("--store", type=store_uri, help=STORE_HELP)
    run.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars (default: on)",
    )
    run.set_defaults(func=cmd_run)


def batch_size(text: str) -> int | str:
    """argparse type: a positive whole number, `auto` or `auto:N` (`--batch-size`)."""
    from predictor.runs.options import parse_batch_size  # deferred: `run --help` loads little

    try:
        return parse_batch_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--batch-size: ")) from None


def _tool_options(run: argparse.ArgumentParser) -> None:
    """The options passed through to the harness (lm-eval's `simple_evaluate` names)."""
    group = run.add_argument_group(
        "tool options",
        "passed to the harness as lm-eval's simple_evaluate takes them, shown in the plan and "
        "recorded with each task's results (a re-run with other options runs the task again); "
        "Inspect takes --gen-kwargs as its generation settings and has none of the others",
    )
    group.add_argument(
        "--num-fewshot", type=seed_number, metavar="N", help="shots per item (0: none)"
    )
    group.add_argument(
        "--batch-size", type=batch_size, metavar="N", help="requests per batch: N, auto, auto:N"
    )
    group.add_argument(
        "--apply-chat-template",
        nargs="?",
        const=True,
        default=None,
        metavar="NAME",
        help="format prompts with the model's chat template (or the one named NAME)",
    )
    group.add_argument(
        "--gen-kwargs",
        metavar="K=V,...",
        help="generation settings, e.g. temperature=0,max_gen_toks=512",
    )
    run.add_argument(
        "--tokenizer",
        metavar="HF_NAME",
        help="tokenize with this Hugging Face tokenizer (a Hub name or a local folder) instead "
        "of the server's: for a server without /tokenizer_info, such as llama.cpp's",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `run` to a parser's sub-commands."""
    add_commands(subparsers, RUN)
