"""The `benchpress` command line (`main`; the parser: `build_parser`).

- `main`: the parser, dispatch and exit codes;
- `commands`: the predictor's commands, by name, help line and "module:function";
- `options`: how a command is declared, the options and value parsers commands share;
- `output`: tables, JSON, CSV, error lines, exit codes and progress bars;
- `errors`: which exceptions are printed as one line, and which are usage errors;
- `inputs`: probe scores from `--scores` and `--from` files;
- one module per command group: `predict`, `snapshots`, `trust` (`compare`, `probes`, `next`,
  `suspicious`), `new_benchmark` (`predict-benchmark`), `evaluate`, `app`.

The pipeline's commands (`pipelines.cli`) and the private store's (`warehouse.cli_private`)
join through the `benchpress.commands` entry points and use `options` and `output` only.
"""

from predictor.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
