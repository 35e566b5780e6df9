"""`--from PATH` for `predict`, `compare` and `next`: probe scores read from results files.

Files, folders and globs of lm-eval, Inspect, Every Eval Ever, HELM or tidy results are read
(`BenchPress.read_results`), and the block printed above the answer says what was used and
what not: `read N files (formats): M scores used: ...`, the unmapped tasks, and notes where
a local run sits on another harness or shot count than the matrix's scores. Names from
files are data: everything printed from them goes through `printable`."""

from __future__ import annotations

import argparse
import contextlib
import warnings
from collections.abc import Callable, Iterator

from predictor.cli_output import CommandError, printable
from predictor.results.errors import ResultsError
from predictor.results.inputs import ResultInputs, summarise
from predictor.results.runnable import NextSteps

FROM_HELP = (
    "results files, folders or globs (lm-eval results_*.json, Inspect logs, Every Eval Ever "
    "records, HELM run folders, model,benchmark,score CSV); repeatable"
)
MAP_HELP = "read TASK (or TASK:METRIC) as BENCHMARK, over the bundled map tables; repeatable"
SHOWN_NAMES = 12  # unmapped tasks listed in the table output (all of them in --json)


def add_from_options(
    parser: argparse.ArgumentParser, model_option: bool = True, from_help: str = FROM_HELP
) -> None:
    """`--from PATH` (repeatable), `--map TASK=BENCHMARK` (repeatable) and, unless the
    command uses `--model` for something else, `--model NAME`."""
    parser.add_argument(
        "--from", dest="from_paths", action="append", metavar="PATH", help=from_help
    )
    if model_option:
        parser.add_argument(
            "--model",
            dest="from_model",
            metavar="NAME",
            help="the model to use of files holding several (as the files name it)",
        )
    parser.add_argument(
        "--map", dest="maps", action="append", metavar="TASK=BENCHMARK", help=MAP_HELP
    )


def check_from_options(args: argparse.Namespace) -> None:
    """`--model` and `--map` only mean something with `--from`."""
    if args.from_paths:
        return
    if getattr(args, "from_model", None) is not None:
        raise CommandError("--model chooses a model of the --from files; give --from PATH")
    if getattr(args, "maps", None):
        raise CommandError("--map applies to the --from files; give --from PATH")


def read_from(bp, args: argparse.Namespace):
    """The results frame of the `--from` files on `bp`'s benchmark ids."""
    from predictor.results import parse_overrides

    return bp.read_results(args.from_paths, overrides=parse_overrides(args.maps))


def inputs_from(bp, args: argparse.Namespace) -> ResultInputs | None:
    """What the `--from` files give the `--model` chosen (None without --from)."""
    if not args.from_paths:
        return None
    return summarise(read_from(bp, args), getattr(args, "from_model", None))


def scores_with(
    inputs: ResultInputs | None,
    extra: dict[str, float] | None,
    resolve: Callable[[str], str],
) -> tuple[dict[str, float], list[str]]:
    """(scores, benchmarks whose file score `extra` replaced): the files' scores, then the
    `--scores` given on the command line, which add to and override them."""
    scores = dict(inputs.scores) if inputs else {}
    replaced = []
    for name, value in (extra or {}).items():
        benchmark = resolve(name)
        if benchmark in scores:
            replaced.append(benchmark)
        scores[benchmark] = value
    return scores, replaced


def gathered_scores(
    bp, args: argparse.Namespace, extra: dict[str, float] | None
) -> tuple[ResultInputs | None, dict[str, float], list[str]]:
    """(file inputs, scores, replaced) of `--from` and `--scores` together, as `predict` and
    `next` take them: `--scores` names checked (twice given, a model's name), the files read,
    and at least one usable score, else the error saying why there is none."""
    from predictor.cli import check_distinct_benchmarks

    if extra:
        check_distinct_benchmarks(extra, bp.resolve_benchmark, resolve_model=bp.resolve_model)
    inputs = inputs_from(bp, args)
    scores, replaced = scores_with(inputs, extra, bp.resolve_benchmark)
    if not scores:
        raise no_scores_error(inputs)
    return inputs, scores, replaced


@contextlib.contextmanager
def fractions_checked(
    inputs: ResultInputs | None, extra: dict[str, float] | None
) -> Iterator[None]:
    """The warning about fractions given as percentages, only where it can be true: scores
    converted from the units lm-eval, Inspect, EEE or HELM files state cannot be."""
    from predictor.api import FractionScoresWarning

    with warnings.catch_warnings():
        if inputs is not None and inputs.units_known and not extra:
            warnings.simplefilter("ignore", FractionScoresWarning)
        yield


def _names(names: list[str], limit: int = SHOWN_NAMES) -> str:
    shown = ", ".join(printable(n) for n in names[:limit])
    more = len(names) - limit
    return shown + (f" ... (+{more} more; --json lists all)" if more > 0 else "")


def _score(value: float) -> str:
    return f"{value:.4g}"


def print_inputs(
    inputs: ResultInputs, extra: dict[str, float] | None = None, replaced: list[str] = ()
) -> None:
    """The block above the answer: files read, scores used, what was not used and why."""
    count = len(inputs.files)
    formats = ", ".join(inputs.formats)
    model = f" for {printable(inputs.model)}" if inputs.model is not None else ""
    used = [f"{b}={_score(v)}" for b, v in inputs.scores.items() if b not in replaced]
    head = f"read {count} file{'s' if count != 1 else ''} ({formats}){model}: "
    head += f"{len(used)} score{'s' if len(used) != 1 else ''} used"
    print(head + (f": {', '.join(used)}" if used else ""))
    if extra:
        given = ", ".join(f"{printable(n)}={_score(v)}" for n, v in extra.items())
        over = f" (replacing the files' {', '.join(replaced)})" if replaced else ""
        print(f"--scores: {given}{over}")
    if inputs.unmapped or inputs.subtasks:
        groups = [
            f"{n} subtask{'s' if n != 1 else ''} of {printable(g)}"
            for g, n in inputs.subtasks.items()
        ]
        listed = _names(inputs.unmapped) if inputs.unmapped else ""
        counted = f"({'; '.join(groups)} not listed)" if groups else ""
        print(f"unmapped: {' '.join(p for p in (listed, counted) if p)}")
    if inputs.other_metric:
        print(f"other metric than the benchmark's: {_names(inputs.other_metric)}")
    if inputs.not_run:
        print(f"not run by the tool: {_names(inputs.not_run)}")
    if inputs.not_fitted:
        print(f"not in this snapshot's fit: {_names(inputs.not_fitted)}")
    for note in inputs.notes:
        print(f"note: {printable(note)}")
    if inputs.unmapped or inputs.subtasks:
        print("(map a task with --map TASK=BENCHMARK)")


def inputs_payload(
    inputs: ResultInputs | None, extra: dict[str, float] | None = None, replaced: list[str] = ()
) -> dict[str, object]:
    """`--json` `inputs`: the rows used with their source, unmapped tasks, notes."""
    payload: dict[str, object] = inputs.as_dict() if inputs else {"used": []}
    payload["scores"] = dict(extra or {})  # as given with --scores
    payload["replaced_by_scores"] = list(replaced)
    return payload


def from_args(args: argparse.Namespace) -> list[str]:
    """The `--from`/`--map`/`--model` arguments again, for a command line printed back."""
    argv: list[str] = []
    for path in args.from_paths or ():
        argv += ["--from", path]
    for item in getattr(args, "maps", None) or ():
        argv += ["--map", item]
    if getattr(args, "from_model", None):
        argv += ["--model", args.from_model]
    return argv


def no_scores_error(inputs: ResultInputs | None, where: str = "results") -> ResultsError:
    """Nothing usable in the files (and no --scores): say what was there instead."""
    seen = (
        [
            *inputs.unmapped,
            *(f"{n} subtasks of {g}" for g, n in inputs.subtasks.items()),
            *(f"{t} (another metric)" for t in inputs.other_metric),
            *(f"{b} (not in this snapshot's fit)" for b in inputs.not_fitted),
            *(f"{t} (not run)" for t in inputs.not_run),
        ]
        if inputs
        else []
    )
    found = f"the files hold {_names(seen, 6)}; " if seen else ""
    return ResultsError(
        where,
        "no result maps onto a benchmark of ours",
        hint=f"{found}map a task with --map TASK=BENCHMARK, or give --scores",
    )


def print_next_steps(steps: NextSteps) -> None:
    """The ready command lines under a probes / next table."""
    lines = steps.lines()
    if lines:
        print()
        for line in lines:
            print(printable(line))
    if steps.unregistered:
        bare = ", ".join(steps.unregistered)
        print(f"Inspect tasks without a registry name (run them from their own package): {bare}")
    if steps.unknown:
        print(f"no lm-eval or Inspect task known for: {', '.join(steps.unknown)}")
