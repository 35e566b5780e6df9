"""Pipeline commands for `benchpress`: `refresh`, `sources`, `warehouse` (entry point
`benchpress.commands`). Declared here by name and help line; each command's module
(`refresh`, `sources`, `warehouse`) is imported only when the command is parsed, so
`benchpress --help` loads neither Dagster nor DuckDB. Without the `pipeline` extra they are
listed all the same, and choosing one says in one line to install it. Options and output:
`predictor.cli.options` and `predictor.cli.output`.
"""

from __future__ import annotations

import argparse

from predictor.cli.options import Command, add_commands

COMMANDS = (
    Command(
        "refresh",
        "run the whole pipeline once and publish",
        "pipelines.cli.refresh:refresh_arguments",
    ),
    Command(
        "sources",
        "list leaderboard sources and their URLs",
        "pipelines.cli.sources:sources_arguments",
    ),
    Command(
        "warehouse",
        "inspect the DuckDB warehouse",
        "pipelines.cli.warehouse:warehouse_arguments",
    ),
)


def register(sub: argparse._SubParsersAction) -> None:
    """Add `refresh`, `sources` and `warehouse` to the `benchpress` sub-commands."""
    add_commands(sub, COMMANDS)
