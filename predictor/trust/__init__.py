"""Trustworthy answers on top of the predictor: probe selection, rankings with P(A > B),
use-case profiles, what to run next, and suspicious observed scores.

Pure matrix functions (`select_probes`, `flag_suspicious`) take values and scales; the
`*_for` / bp-first functions take a loaded `BenchPress` (the thin `BenchPress` methods
delegate to them).
"""

from predictor.trust.costs import DEFAULT_COSTS, default_cost, resolve_costs
from predictor.trust.next_benchmark import what_to_run_next
from predictor.trust.probes import (
    ProbeSelection,
    probe_set_error,
    select_probes,
    select_probes_detailed,
    select_probes_for,
)
from predictor.trust.profiles import PROFILES, profile, resolve_targets
from predictor.trust.rankings import (
    Comparison,
    KnownComparison,
    compare_models,
    compare_with_known_models,
    p_better,
)
from predictor.trust.suspicious import flag_suspicious, loo_residuals, suspicious_scores

__all__ = [
    "DEFAULT_COSTS",
    "PROFILES",
    "Comparison",
    "KnownComparison",
    "ProbeSelection",
    "compare_models",
    "compare_with_known_models",
    "default_cost",
    "flag_suspicious",
    "loo_residuals",
    "p_better",
    "probe_set_error",
    "profile",
    "resolve_costs",
    "resolve_targets",
    "select_probes",
    "select_probes_detailed",
    "select_probes_for",
    "suspicious_scores",
    "what_to_run_next",
]
