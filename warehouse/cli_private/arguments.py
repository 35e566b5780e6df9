"""The options of the private store's commands (`models add|list|show|remove`, `track`).

Kept apart from their handlers (`warehouse.cli_private.commands`, which load DuckDB) so that
`benchpress models --help` and `track --help` work where DuckDB is not installed; a handler is
imported only when its command runs.
"""

from __future__ import annotations

import argparse

from predictor.cli.options import (
    STORE_HELP,
    TARGETS_HELP,
    add_from_options,
    add_output_options,
    add_side_options,
    handler,
    interval_level,
)
from predictor.tracking.checkpoints import MEET_PROBABILITY

COMMANDS = "warehouse.cli_private.commands"
DEFAULT_TARGETS = "general_assistant"
TARGETS_HELP_DEFAULT = f"{TARGETS_HELP} (default {DEFAULT_TARGETS})"


def _snapshot_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", default="latest", help="snapshot version (default latest)")
    parser.add_argument("--store", help=STORE_HELP)


def models_arguments(models: argparse.ArgumentParser) -> None:
    actions = models.add_subparsers(dest="models_command", required=True, metavar="ACTION")

    add = actions.add_parser("add", help="store a model's results files as a private model")
    add.add_argument("name", help="the private model's name (not a snapshot model's)")
    add_from_options(add)
    add.add_argument("--replace", action="store_true", help="overwrite a private model of NAME")
    _snapshot_options(add)
    add_output_options(add, csv_help="the stored scores with their provenance, as CSV")
    add.set_defaults(func=handler(COMMANDS + ":cmd_models_add"))

    listing = actions.add_parser("list", help="list the private models")
    listing.add_argument("--run", help="only the checkpoints of this run")
    add_output_options(listing)
    listing.set_defaults(func=handler(COMMANDS + ":cmd_models_list"))

    show = actions.add_parser("show", help="a private model's cells with provenance")
    show.add_argument("name")
    show.add_argument("--targets", help="predicted targets shown: " + TARGETS_HELP_DEFAULT)
    show.add_argument("--level", type=interval_level, default=0.9, help="interval level")
    _snapshot_options(show)
    add_output_options(show, csv_help="the stored cells with their provenance, as CSV")
    show.set_defaults(func=handler(COMMANDS + ":cmd_models_show"))

    remove = actions.add_parser("remove", help="remove a private model, or a run's checkpoints")
    remove.add_argument("name", nargs="?")
    remove.add_argument("--run", help="remove every checkpoint of this run")
    remove.set_defaults(func=handler(COMMANDS + ":cmd_models_remove"))


def track_arguments(track: argparse.ArgumentParser) -> None:
    track.description = (
        "Store each checkpoint (the files of one step) as the private model "
        "RUN@step-N of run RUN and print its predicted target scores. Tracking RUN again "
        "replaces its checkpoints."
    )
    track.add_argument("run", help="the run's name")
    add_from_options(track)
    track.add_argument(
        "--step-from",
        metavar="REGEX",
        help="read the step from the path with this regex (one capturing group), RE2 syntax "
        "(linear time: no lookaround or backreferences); default: the number after "
        "step/steps/ckpt/checkpoint/global_step/iter",
    )
    track.add_argument(
        "--step",
        type=int,
        metavar="N",
        help="the files are all checkpoint N: store it (again) beside the run's other "
        "checkpoints instead of replacing the run, and show the whole run",
    )
    track.add_argument("--targets", help=TARGETS_HELP_DEFAULT)
    track.add_argument(
        "--require",
        metavar="CRITERIA",
        help="criteria such as 'mmlu_pro>=70,gpqa_diamond>=45': P(all hold) per checkpoint, "
        f"and the first checkpoint where it is at least {MEET_PROBABILITY:g}",
    )
    track.add_argument("--plot", metavar="FILE", help="write the trajectories to FILE.png/.svg")
    track.add_argument(
        "--mlflow",
        metavar="URI",
        help="log each checkpoint's predicted targets, P(all) and the plot to this MLflow "
        "tracking URI (http://... or sqlite:///FILE.db); the mlflow extra",
    )
    track.add_argument(
        "--wandb",
        metavar="PROJECT",
        help="log each checkpoint's predicted targets, P(all) and the plot to this Weights & "
        "Biases project (offline unless WANDB_API_KEY/WANDB_MODE say otherwise; files under "
        "BENCHPRESS_HOME/wandb); the wandb extra",
    )
    add_side_options(track, name=False)  # the run's name is the model's name
    track.add_argument(
        "--level", type=interval_level, default=0.9, help="interval level (default 0.9)"
    )
    _snapshot_options(track)
    add_output_options(track, csv_help="one row per checkpoint and target, as CSV")
    track.set_defaults(func=handler(COMMANDS + ":cmd_track"))
