"""Probes on benchmarks a snapshot lacks: see `predictor.trust.missing_probes` (this module
keeps the public import path)."""

from predictor.trust.missing_probes import (
    HANDLE_MISSING,
    MissingBenchmarksWarning,
    MissingProbesError,
    MissingProbesWarning,
    check_handle_missing,
    known_benchmarks,
    split_probes,
    split_targets,
)

__all__ = [
    "HANDLE_MISSING",
    "MissingBenchmarksWarning",
    "MissingProbesError",
    "MissingProbesWarning",
    "check_handle_missing",
    "known_benchmarks",
    "split_probes",
    "split_targets",
]
