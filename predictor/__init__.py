"""Predict LLM benchmark scores from a few probes by low-rank matrix completion.

Depends on numpy, Polars and pyarrow only (never Dagster or DuckDB), so it installs and
imports on its own.

Each name below is imported when first used (`from predictor import BenchPress` loads
`predictor.api` then), so `import predictor.cli`, every `benchpress` start, loads no numpy or
Polars before a command needs them.
"""

from __future__ import annotations

from predictor.util.lazy import lazy_exports

_EXPORTS = {  # name -> the module it is imported from, on first use
    "AmbiguousNameError": "predictor.names.resolve",
    "BayesianCompleter": "predictor.methods.bayesian",
    "BenchPress": "predictor.api",
    "Completer": "predictor.methods.base",
    "Completion": "predictor.fit.completion",
    "FractionScoresWarning": "predictor.values",
    "LowRankCompleter": "predictor.methods.als",
    "MatrixView": "predictor.values",
    "Measured": "predictor.values",
    "NewBenchmarkPrediction": "predictor.new_benchmark",
    "NotSupportedError": "predictor.methods.base",
    "ProbeScores": "predictor.runs.runner",
    "Prediction": "predictor.values",
    "Predictions": "predictor.values",
    "ProbeScoreError": "predictor.values",
    "SideUsed": "predictor.values",
    "SnapshotError": "predictor.snapshots.reader",
    "UnknownNameError": "predictor.names.resolve",
    "complete_matrix": "predictor.fit.completion",
    "predictions_frame": "predictor.values",
    "run_probe_benchmarks": "predictor.runs.runner",
    "select_probes": "predictor.trust.probes",
}
__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
