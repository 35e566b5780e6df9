"""Probe scores as `predict`, `next` and `compare` take them: `--scores name=value,...` and
`--from PATH` results files. A score may carry its standard error (`--scores mmlu_pro=74+-1.5`;
a file's `stderr`, or the binomial rule on its item count): the fold-in weighs it by that.

Files, folders and globs of lm-eval, Inspect, Every Eval Ever, HELM or tidy results are read
(`BenchPress.read_results`); `--scores` add to and override the files' scores. What the files
gave is printed above the answer by `predictor.cli.output.print_inputs`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from predictor.api import BenchPress
from predictor.cli.options import check_from_options, parse_scores, side_arguments
from predictor.cli.output import CommandError, no_scores_error, printable
from predictor.names.resolve import UnknownNameError
from predictor.results import parse_overrides
from predictor.results.inputs import ResultInputs, summarise
from predictor.results.limited import limited_checked


def _benchmark_not_model(
    name: str,
    resolve: Callable[[str], str],
    option: str,
    resolve_model: Callable[[str], str] | None,
) -> str:
    """The benchmark `name` resolves to; a model's name given where a benchmark goes
    (`GPT-4o=80`) is said to be one, instead of suggesting look-alike benchmarks."""
    try:
        return resolve(name)
    except UnknownNameError:
        model = None
        if resolve_model is not None:
            try:
                model = resolve_model(name)
            except (UnknownNameError, ValueError):
                model = None
        if model is None:
            raise
        raise CommandError(
            f"{option}: {printable(name)!r} is a model ({printable(model)}), not a benchmark; "
            "give benchmark=score pairs, e.g. gpqa_diamond=80 (known models go in "
            "`benchpress compare --reference`)"
        ) from None


def check_distinct_benchmarks(
    scores: dict[str, float],
    resolve: Callable[[str], str],
    option: str = "--scores",
    resolve_model: Callable[[str], str] | None = None,
) -> None:
    """Two spellings of one benchmark (`gpqa_diamond`, `GPQA Diamond`) are a usage error, as an
    exact duplicate is in `parse_scores`; the API would reject them later as a failure."""
    seen: dict[str, str] = {}
    for name in scores:
        benchmark = _benchmark_not_model(name, resolve, option, resolve_model)
        if benchmark in seen:
            raise CommandError(
                f"{option}: {benchmark} is given twice (as {seen[benchmark]!r} and {name!r}); "
                "give each benchmark once"
            )
        seen[benchmark] = name


def read_from(bp: BenchPress, args: argparse.Namespace):
    """The results frame of the `--from` files on `bp`'s benchmark ids; scores of a run over
    part of the items (a smoke test) refused unless `--allow-limited`, which says so in a
    warning (`predictor.results.limited`)."""
    frame = bp.read_results(args.from_paths, overrides=parse_overrides(args.maps))
    allowed = getattr(args, "allow_limited", False)
    return limited_checked(frame, allowed, getattr(args, "from_model", None))


def inputs_from(bp: BenchPress, args: argparse.Namespace) -> ResultInputs | None:
    """What the `--from` files give the `--model` chosen (None without --from)."""
    if not args.from_paths:
        return None
    return summarise(read_from(bp, args), getattr(args, "from_model", None))


Scores = dict[str, float | tuple[float, float]]  # a score, or (score, standard error)


def scores_with(
    inputs: ResultInputs | None,
    extra: Scores | None,
    resolve: Callable[[str], str],
) -> tuple[Scores, list[str]]:
    """(scores, benchmarks whose file score `extra` replaced): the files' scores (with their
    standard errors, `ResultInputs.measured`), then the `--scores` given on the command
    line, which add to and override them."""
    scores: Scores = dict(inputs.measured) if inputs else {}
    replaced = []
    for name, value in (extra or {}).items():
        benchmark = resolve(name)
        if benchmark in scores:
            replaced.append(benchmark)
        scores[benchmark] = value
    return scores, replaced


def gathered_scores(
    bp: BenchPress, args: argparse.Namespace, extra: Scores | None
) -> tuple[ResultInputs | None, Scores, list[str]]:
    """(file inputs, scores, replaced) of `--from` and `--scores` together, as `predict` and
    `next` take them: `--scores` names checked (twice given, a model's name), the files read,
    and at least one usable score, else the error saying why there is none."""
    if extra:
        check_distinct_benchmarks(extra, bp.resolve_benchmark, resolve_model=bp.resolve_model)
    inputs = inputs_from(bp, args)
    scores, replaced = scores_with(inputs, extra, bp.resolve_benchmark)
    if not scores:
        raise no_scores_error(inputs)
    return inputs, scores, replaced


def benchmark_names(
    scores: dict[str, float] | None, resolve: Callable[[str], str]
) -> dict[str, str]:
    """name -> id of each `--scores` name that is not its benchmark's id (`gpqa`,
    `GPQA Diamond`), for `print_benchmark_names`."""
    names = {}
    for name in scores or {}:
        benchmark = resolve(name)
        if benchmark != name:
            names[name] = benchmark
    return names


def print_benchmark_names(names: dict[str, str]) -> None:
    """One line per benchmark name read as another id, above the answer, as reference
    models are echoed (`reference gpt-5-5 = gpt-5.5`): `benchmark gpqa = gpqa_diamond`."""
    for name, benchmark in names.items():
        print(f"benchmark {printable(name)} = {benchmark}")


@dataclass(frozen=True)
class CommandScores:
    """What `predict` and `next` start from: the snapshot, the `--from` files' inputs (None
    without), the scores, the benchmarks whose file score `--scores` replaced, the
    `--scores` themselves, the model's side information (`side_arguments`) and the
    `--scores` names read as another id (`benchmark_names`)."""

    bp: BenchPress
    inputs: ResultInputs | None
    scores: Scores
    replaced: list[str]
    extra: Scores | None
    side: dict[str, Any]
    names: dict[str, str] = field(default_factory=dict)


def command_scores(args: argparse.Namespace, kind: str) -> CommandScores:
    """`--scores` and `--from` of `predict` / `next` read and checked (`kind`: "probe",
    "known"); neither given is a usage error saying both ways."""
    check_from_options(args)
    if args.scores is None and not args.from_paths:
        raise CommandError(
            f"give the {kind} scores: --scores name=value,... or --from PATH (results files), "
            "or both"
        )
    extra = parse_scores(args.scores) if args.scores is not None else None
    bp = BenchPress.load(args.version, store=args.store)
    inputs, scores, replaced = gathered_scores(bp, args, extra)
    side = side_arguments(args, inputs.model if inputs is not None else None)
    names = benchmark_names(extra, bp.resolve_benchmark)
    return CommandScores(bp, inputs, scores, replaced, extra, side, names)


def fractions_possible(inputs: ResultInputs | None, extra: Scores | None) -> bool:
    """Whether the scores may be fractions typed as percentages (`BenchPress.predict`'s
    `convert_fractions`): not when every one was converted from the unit its file states
    (lm-eval, Inspect, EEE, HELM), where a score under 1 is a model's real score."""
    return not (inputs is not None and inputs.units_known and not extra)
