"""What `benchpress` commands share on the way in: how a command is declared, the options
several commands take and the parsers of their values.

A command is declared as a `Command` (name, help line, and the "module:function" that adds its
options and handler) and added with `add_commands`: under `benchpress` (a `Commands`
sub-parsers action) the function's module is imported only when that command is parsed, so
`benchpress --help` lists every command and loads none of them. The pipeline's and the
private store's commands (`benchpress.commands` entry points) are declared the same way.

This module and `predictor.cli.output` load no numpy or Polars: they are imported on every
`benchpress` start.
"""

from __future__ import annotations

import argparse
import importlib
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from predictor.cli.output import CommandError

STORE_HELP = "snapshot store: a directory, s3://bucket/prefix or https:// URL"
VERSION_HELP = "snapshot version, or VERSION@sha256:DIGEST to pin its manifest too (default latest)"
EMPTY_STORE = "must not be empty: give a directory, s3://bucket/prefix or https:// URL"
TARGETS_HELP = "a profile (coding_assistant, chat, reasoning, general_assistant) or name,name,..."
FROM_HELP = (
    "results files, folders or globs (lm-eval results_*.json, Inspect logs, Every Eval Ever "
    "records, HELM run folders, model,benchmark,score CSV); repeatable"
)
MAP_HELP = "read TASK (or TASK:METRIC) as BENCHMARK, over the bundled map tables; repeatable"
PROGRESS_HELP = (
    "progress bar on stderr (default: only when stderr is a terminal and the output is a "
    "table; --progress forces it, --no-progress turns it off)"
)


# --------------------------------------------------------------------------- commands
@dataclass(frozen=True)
class Command:
    """A command as its parent lists it: `name`, `help` (its line in `benchpress --help`) and
    `arguments`, "module:function" of the function that adds its options (or its actions)
    to the command's parser and sets its handler (`parser.set_defaults(func=...)`)."""

    name: str
    help: str
    arguments: str


def load(spec: str) -> Callable[..., Any]:
    """The function a "module:function" string names, importing its module."""
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def handler(spec: str) -> Callable[[argparse.Namespace], int]:
    """A command's `func` that imports its "module:function" only when the command runs
    (so its `--help` works without what the handler's module needs)."""

    def run(args: argparse.Namespace) -> int:
        return load(spec)(args)

    run.__qualname__ = run.__name__ = spec.rpartition(":")[2]
    return run


class Commands(argparse._SubParsersAction):
    """Sub-commands whose options are added when one is chosen (or on `complete`): listing
    them (`benchpress --help`) imports none of their modules."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending: dict[str, str] = {}

    def defer(self, name: str, arguments: str) -> None:
        self._pending[name] = arguments

    def complete(self, name: str | None = None) -> None:
        """Add the options of command `name` (every command when None) to its parser."""
        for key in list(self._pending) if name is None else [name]:
            arguments = self._pending.pop(key, None)
            if arguments is None:
                continue
            try:
                add_options = load(arguments)
            except ImportError as exc:  # an extra is not installed: one line, exit 2
                from predictor.util.extras import missing_extra  # noqa: PLC0415  # deferred: rare

                missing = missing_extra(exc, f"`benchpress {key}`")
                if missing is None:
                    raise
                self.choices[key].exit(2, f"benchpress: error: {missing}\n")
            add_options(self.choices[key])

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        self.complete(values[0])
        super().__call__(parser, namespace, values, option_string)


def add_commands(subparsers: argparse._SubParsersAction, commands: Iterable[Command]) -> None:
    """Add `commands` to a parser's sub-commands: deferred under `Commands` (`benchpress`),
    with their options at once under any other sub-parsers action."""
    for command in commands:
        parser = subparsers.add_parser(command.name, help=command.help)
        if isinstance(subparsers, Commands):
            subparsers.defer(command.name, command.arguments)
        else:
            load(command.arguments)(parser)


# --------------------------------------------------------------------------- options
def add_output_options(
    parser: argparse.ArgumentParser,
    json_help: str = "machine-readable output (JSON)",
    csv_help: str = "the result table as CSV (the Python API's frame, header included)",
) -> None:
    """`--json` / `--csv`, mutually exclusive (argparse says so and exits 2)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", action="store_true", help=json_help)
    group.add_argument("--csv", action="store_true", help=csv_help)


def add_progress_option(parser: argparse.ArgumentParser, help: str = PROGRESS_HELP) -> None:
    """`--progress` / `--no-progress` (default: a bar only on a terminal, for table output)."""
    parser.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help=help
    )


def add_snapshot_options(parser: argparse.ArgumentParser) -> None:
    """`--version` (VERSION[@DIGEST]), `--store` and `--json` / `--csv`: the options of the
    commands that answer from one snapshot (`compare`, `probes`, `next`, `suspicious`,
    `predict-benchmark`)."""
    parser.add_argument("--version", type=snapshot_reference, default="latest", help=VERSION_HELP)
    parser.add_argument("--store", help=STORE_HELP)
    add_output_options(parser)


def add_from_options(
    parser: argparse.ArgumentParser, model_option: bool = True, from_help: str = FROM_HELP
) -> None:
    """`--from PATH` (repeatable), `--map TASK=BENCHMARK` (repeatable), `--allow-limited`
    and, unless the command uses `--model` for something else, `--model NAME`."""
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
    parser.add_argument(
        "--allow-limited",
        action="store_true",
        help="use scores of runs over part of the items (lm-eval's or Inspect's --limit, a "
        "smoke test), with a warning; refused by default (a full run's score is preferred)",
    )


def add_side_options(parser: argparse.ArgumentParser, name: bool = True) -> None:
    """`--name` (unless the command has the name already), `--family` and `--release-date`:
    what the fold-in of a new model uses besides its scores (`BenchPress.predict(model=,
    family=, release_date=)`)."""
    if name:
        parser.add_argument(
            "--name",
            type=nonempty_text,
            metavar="NAME",
            help="the model's name, its family read from it (default: the model of the "
            "--from files)",
        )
    parser.add_argument(
        "--family",
        type=nonempty_text,
        help="the model's family (default: a known model's own, else read from its name)",
    )
    parser.add_argument(
        "--release-date",
        dest="release_date",
        metavar="YYYY-MM-DD",
        help="the model's release date (default: a known model's own or its base's, else "
        "inferred from the scores)",
    )
    parser.add_argument(
        "--base",
        type=nonempty_text,
        metavar="MODEL",
        help="the public model this one was fine-tuned, merged or quantised from: its "
        "family and release date are used (default: read from the name, e.g. qwen3-32b-sft)",
    )


def side_arguments(args: argparse.Namespace, from_files: str | None = None) -> dict[str, Any]:
    """`model`, `family`, `release_date`, `base` for the API from `add_side_options`' flags;
    the model's name is `--name`, else the one the `--from` files name."""
    return {
        "model": getattr(args, "name", None) or from_files,
        "family": getattr(args, "family", None),
        "release_date": getattr(args, "release_date", None),
        "base": getattr(args, "base", None),
    }


def check_from_options(args: argparse.Namespace) -> None:
    """`--model` and `--map` only mean something with `--from`."""
    if args.from_paths:
        return
    if getattr(args, "from_model", None) is not None:
        raise CommandError("--model chooses a model of the --from files; give --from PATH")
    if getattr(args, "maps", None):
        raise CommandError("--map applies to the --from files; give --from PATH")
    if getattr(args, "allow_limited", False):
        raise CommandError("--allow-limited applies to the --from files; give --from PATH")


def from_args(args: argparse.Namespace) -> list[str]:
    """The `--from`/`--map`/`--model` arguments again, for a command line printed back."""
    argv: list[str] = []
    for path in args.from_paths or ():
        argv += ["--from", path]
    for item in getattr(args, "maps", None) or ():
        argv += ["--map", item]
    if getattr(args, "from_model", None):
        argv += ["--model", args.from_model]
    if getattr(args, "allow_limited", False):
        argv.append("--allow-limited")
    return argv


def reject_empty_store(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """An empty `--store` is a usage error for every command, also those (registered here or
    elsewhere) whose --store has no `store_uri` type."""
    store = getattr(args, "store", None)
    if isinstance(store, str) and not store.strip():
        parser.error(f"argument --store: {EMPTY_STORE}")


# --------------------------------------------------------------------------- argparse types
def store_uri(text: str) -> str:
    """argparse type of --store: an empty value (an unset shell variable) is a usage error, not
    the default stores (`snapshots list`) nor the current directory (`predict`)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(EMPTY_STORE)
    return text


def snapshot_reference(text: str) -> str:
    """argparse type of a snapshot version: a digest pin (`VERSION@sha256:...`) must be whole,
    and a version written another way than its one spelling (`٢٠٢٦.11.30.2`, `2026.11.30.02`)
    is refused naming that spelling (exit 2 for both); any other version is checked where it
    is resolved."""
    # deferred: predictor.snapshots.reader loads Polars; `benchpress --help` imports this module
    from predictor.snapshots.reader import SnapshotError, check_misspelled_version, parse_pin

    try:
        version, _ = parse_pin(text)
        check_misspelled_version(version)
    except SnapshotError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def nonempty_text(text: str) -> str:
    """argparse type: a name (`--name "$MODEL"` with the variable unset is a usage error,
    not a prediction for no model)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text.strip()


def whole_number(text: str, minimum: int = 1) -> int:
    """argparse type: an integer >= `minimum` (`--k 0` is a usage error, not an empty
    answer)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    return whole_number(text, 1)


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


TOKEN_SUFFIXES = {"k": 1e3, "m": 1e6, "g": 1e9}


def token_count(text: str) -> int:
    """argparse type: a number of tokens, `2000000`, `2M`, `500k` or `1.5M` (`--budget-tokens`)."""
    body = text.strip().replace("_", "").replace(",", "")
    scale = TOKEN_SUFFIXES.get(body[-1:].lower(), 1.0)
    number = body[:-1] if scale != 1.0 else body
    try:
        value = float(number) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of tokens (2000000, 2M, 500k), got {text!r}"
        ) from None
    if not math.isfinite(value) or value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 token, got {text!r}")
    return int(round(value))


def interval_level(text: str) -> float:
    """argparse type: an interval level (0.9 = 90%), within the bounds the API serves."""
    # deferred: predictor.methods loads numpy; `benchpress --help` imports this module
    from predictor.methods.common import check_level

    try:
        return check_level(float(text))
    except ValueError as exc:
        message = str(exc) if "level" in str(exc) else f"expected a number, got {text!r}"
        raise argparse.ArgumentTypeError(f"{message} (e.g. 0.9)") from None


# --------------------------------------------------------------------------- values
# how a score's standard error is written after it: `74+-1.5`, `74±1.5`, `74+/-1.5`
PLUS_MINUS = ("+/-", "+-", "\u00b1")


def _number(text: str, name: str, what: str) -> float:
    number = text.strip()
    number = number[:-1].rstrip() if number.endswith("%") else number
    try:
        return float(number)
    except ValueError:
        raise CommandError(f"--scores: {name!r} has a non-numeric {what} {text!r}") from None


def split_plus_minus(text: str) -> tuple[str, str | None]:
    """`74+-1.5` -> ("74", "1.5"); `74` -> ("74", None): a score and its standard error."""
    for sign in PLUS_MINUS:
        value, sep, error = text.partition(sign)
        if sep:
            return value, error
    return text, None


def parse_scores(text: str, stderr: bool = True) -> dict[str, float | tuple[float, float]]:
    """`gpqa_diamond=80,hle=20` -> {"gpqa_diamond": 80.0, "hle": 20.0}; `80%` is 80. A
    score may carry its standard error (`stderr`): `mmlu_pro=74+-1.5` (or `74±1.5`) ->
    {"mmlu_pro": (74.0, 1.5)}; a standard error that is not a number >= 0 is a usage error
    naming the benchmark."""
    scores: dict[str, float | tuple[float, float]] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise CommandError(f"--scores: expected name=value, got {part!r}")
        name = name.strip()
        if name in scores:
            raise CommandError(f"--scores: {name!r} is given twice")
        value, error = split_plus_minus(value)
        score = _number(value, name, "value")
        if error is None:
            scores[name] = score
            continue
        if not stderr:
            raise CommandError(
                f"--scores: {name!r} has a standard error ({part.strip()!r}); give the score "
                "alone here"
            )
        spread = _number(error, name, "standard error")
        if not math.isfinite(spread) or spread < 0:
            raise CommandError(
                f"--scores: the standard error of {name!r} must be a number >= 0, got "
                f"{error.strip()!r}"
            )
        scores[name] = (score, spread)
    if not scores:
        raise CommandError("--scores: give at least one name=value pair")
    return scores


def name_list(text: str, option: str) -> list[str]:
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
    names = name_list(text, "--targets")
    return names[0] if len(names) == 1 else names
