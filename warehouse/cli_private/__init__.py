"""The private store's commands for `benchpress`: `models add|list|show|remove` and `track`
(entry point `benchpress.commands`). Declared here by name and help line; their options
(`warehouse.cli_private.arguments`) are imported only when one of them is parsed and their
handlers (`warehouse.cli_private.commands`, DuckDB) only when one runs, so `benchpress --help`,
`models --help` and the web page load no DuckDB. Options and output:
`predictor.cli.options` and `predictor.cli.output`.
"""

from __future__ import annotations

import argparse

from predictor.cli.options import Command, add_commands

COMMANDS = (
    Command(
        "models",
        "your private models: kept in BENCHPRESS_HOME, never published",
        "warehouse.cli_private.arguments:models_arguments",
    ),
    Command(
        "track",
        "a fine-tuning run's checkpoints: predicted targets per step, P(criteria met)",
        "warehouse.cli_private.arguments:track_arguments",
    ),
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `models` and `track` to the `benchpress` sub-commands."""
    add_commands(subparsers, COMMANDS)
