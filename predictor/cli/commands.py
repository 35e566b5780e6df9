"""The predictor's own `benchpress` commands, as `benchpress --help` lists them: name, help
line and the "module:function" that adds the command's options and handler, imported only
when the command is parsed (`predictor.cli.options.Commands`).

A new command: its module in `predictor.cli` (an `<name>_arguments(parser)` function that adds
the options and sets `func`, and the handler) and one line here. The pipeline's commands
(`pipelines.cli`) and the private store's (`warehouse.cli_private`) are declared the same way
and registered through the `benchpress.commands` entry points. `registered(command)` adds one
for a block (a test's toy command).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from predictor.cli.options import Command

PREDICT = (
    Command(
        "predict",
        "predict unseen benchmarks from probe scores or results files",
        "predictor.cli.predict:predict_arguments",
    ),
)
SNAPSHOTS = (
    Command(
        "snapshots", "published matrix snapshots", "predictor.cli.snapshots:snapshots_arguments"
    ),
)
APP = (Command("app", "serve the web page on this machine", "predictor.cli.app:app_arguments"),)
EVALUATE = (
    Command(
        "evaluate",
        "compare our method, the BenchPress recipe and a baseline on the paper matrix",
        "predictor.cli.evaluate:evaluate_arguments",
    ),
)
TRUST = (
    Command(
        "compare",
        "rank models predicted from probe scores, with P(A better than B)",
        "predictor.cli.trust:compare_arguments",
    ),
    Command("probes", "which benchmarks to run as probes", "predictor.cli.trust:probes_arguments"),
    Command(
        "next",
        "which benchmark to run next for a new model",
        "predictor.cli.trust:next_arguments",
    ),
    Command(
        "suspicious",
        "observed scores far from their prediction",
        "predictor.cli.trust:suspicious_arguments",
    ),
)
NEW_BENCHMARK = (
    Command(
        "predict-benchmark",
        "predict a new benchmark for every model from a few models' scores on it",
        "predictor.cli.new_benchmark:predict_benchmark_arguments",
    ),
)
RUN = (
    Command(
        "run",
        "run a model's probes with lm-eval or Inspect, then predict from them",
        "predictor.cli.run:run_arguments",
    ),
)
COMMANDS = (*PREDICT, *RUN, *SNAPSHOTS, *APP, *EVALUATE, *TRUST, *NEW_BENCHMARK)


@contextmanager
def registered(*commands: Command) -> Iterator[None]:
    """`commands` listed and dispatched by `benchpress` for the block, then removed again: how a
    test adds a toy command without editing `COMMANDS`. A name already taken is refused."""
    global COMMANDS
    names = [c.name for c in (*COMMANDS, *commands)]
    taken = sorted({name for name in names if names.count(name) > 1})
    if taken:
        raise ValueError(f"commands {taken} are already declared")
    before = COMMANDS
    COMMANDS = (*before, *commands)
    try:
        yield
    finally:
        COMMANDS = before
