"""BenchPress: predict an LLM's benchmark scores from a few probe scores.

The import name the BenchPress article uses; a thin re-export of the `predictor` package
(the `benchpress-llm` distribution), so both spellings are one API:

    from benchpress import BenchPress, ProbeBenchmarks
    bp = BenchPress.from_pretrained("microsoft/benchpress-v1")
    bp.predict({"gsm8k": 85.1, "humaneval": 72.4})["math"].score

`python -m benchpress.app` serves the web page (as `benchpress app`); `python -m benchpress`
is the `benchpress` command.
"""

from predictor import (
    AmbiguousNameError,
    BayesianCompleter,
    Completion,
    FractionScoresWarning,
    LowRankCompleter,
    MatrixView,
    NewBenchmarkPrediction,
    Prediction,
    ProbeScoreError,
    SnapshotError,
    UnknownNameError,
    complete_matrix,
    predictions_frame,
    select_probes,
)
from predictor.api import BenchPress
from predictor.missing_probes import (
    MissingBenchmarksWarning,
    MissingProbesError,
    MissingProbesWarning,
)
from predictor.pretrained import pretrained_names
from predictor.probe_sets import ProbeBenchmarks, ProbeSet
from predictor.results import ResultsError

__all__ = [
    "AmbiguousNameError",
    "BayesianCompleter",
    "BenchPress",
    "Completion",
    "FractionScoresWarning",
    "LowRankCompleter",
    "MatrixView",
    "MissingBenchmarksWarning",
    "MissingProbesError",
    "MissingProbesWarning",
    "NewBenchmarkPrediction",
    "Prediction",
    "ProbeBenchmarks",
    "ProbeScoreError",
    "ProbeSet",
    "ResultsError",
    "SnapshotError",
    "UnknownNameError",
    "complete_matrix",
    "predictions_frame",
    "pretrained_names",
    "select_probes",
]
