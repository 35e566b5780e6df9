"""Predict LLM benchmark scores from a few probes by low-rank matrix completion.

Depends on numpy, Polars and pyarrow only (never Dagster or DuckDB), so it installs and
imports on its own.
"""

from predictor.api import (
    BenchPress,
    FractionScoresWarning,
    MatrixView,
    Prediction,
    ProbeScoreError,
    predictions_frame,
)
from predictor.completion import Completion, LowRankCompleter, complete_matrix
from predictor.methods.bayesian import BayesianCompleter
from predictor.new_benchmark import NewBenchmarkPrediction
from predictor.resolve import AmbiguousNameError, UnknownNameError
from predictor.snapshots import SnapshotError
from predictor.trust.probes import select_probes

__all__ = [
    "AmbiguousNameError",
    "BayesianCompleter",
    "BenchPress",
    "Completion",
    "FractionScoresWarning",
    "LowRankCompleter",
    "MatrixView",
    "NewBenchmarkPrediction",
    "Prediction",
    "ProbeScoreError",
    "SnapshotError",
    "UnknownNameError",
    "complete_matrix",
    "predictions_frame",
    "select_probes",
]
