"""The exceptions `benchpress` prints as one `benchpress: error: ...` line, and which of them
are the caller's input (exit 2) rather than a failure (exit 1).

Imported by `predictor.cli.main` only once a command has raised: these types live in modules
that load numpy and Polars, which `benchpress --help` does not."""

from __future__ import annotations

from predictor.cli.output import CommandError
from predictor.harnesses.endpoint import SettingsError
from predictor.names.resolve import UnknownNameError
from predictor.results.errors import ResultsError
from predictor.runs.preflight import EndpointError
from predictor.snapshots.reader import SnapshotError
from predictor.trust.costs import BudgetError
from predictor.util.extras import MissingExtraError
from predictor.values import ProbeScoreError

__all__ = ["REPORTED", "USAGE", "ResultsError"]

# printed as one line (anything else is a bug: its traceback is shown)
REPORTED = (CommandError, UnknownNameError, SnapshotError, EndpointError, ValueError, TypeError)
# of those, the caller's input: exit 2 like argparse's own errors
USAGE = (
    CommandError,
    MissingExtraError,  # what to install, said in one line
    UnknownNameError,
    ProbeScoreError,
    ResultsError,
    BudgetError,
    SettingsError,
)
