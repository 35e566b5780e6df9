"""BenchPress: predict an LLM's benchmark scores from a few probe scores.

The import name the BenchPress article uses; a thin re-export of the `predictor` package
(the `benchpress-llm` distribution), so both spellings are one API:

    from benchpress import BenchPress, ProbeBenchmarks
    bp = BenchPress.from_pretrained("microsoft/benchpress-v1")
    bp.predict({"gsm8k": 85.1, "humaneval": 72.4})["math"].score

`python -m benchpress.app` serves the web page (as `benchpress app`); `python -m benchpress`
is the `benchpress` command.

Each name is imported when first used, as in `predictor`: `python -m benchpress --help`
loads no numpy or Polars.
"""

from __future__ import annotations

from predictor.util.lazy import lazy_exports

_EXPORTS = {  # name -> the module it is imported from, on first use
    "AmbiguousNameError": "predictor",
    "BayesianCompleter": "predictor",
    "BenchPress": "predictor.api",
    "Completion": "predictor",
    "FractionScoresWarning": "predictor",
    "LowRankCompleter": "predictor",
    "MatrixView": "predictor",
    "Measured": "predictor",
    "MissingBenchmarksWarning": "predictor.missing_probes",
    "MissingProbesError": "predictor.missing_probes",
    "MissingProbesWarning": "predictor.missing_probes",
    "NewBenchmarkPrediction": "predictor",
    "ProbeScores": "predictor.runs.runner",
    "Prediction": "predictor",
    "Predictions": "predictor",
    "ProbeBenchmarks": "predictor.probe_sets",
    "ProbeScoreError": "predictor",
    "ProbeSet": "predictor.probe_sets",
    "ResultsError": "predictor.results",
    "SideUsed": "predictor",
    "SnapshotError": "predictor",
    "UnknownNameError": "predictor",
    "complete_matrix": "predictor",
    "predictions_frame": "predictor",
    "pretrained_names": "predictor.snapshots.pretrained",
    "run_probe_benchmarks": "predictor.runs.runner",
    "select_probes": "predictor",
}
__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
