"""Trustworthy answers on top of the predictor: probe selection, rankings with P(A > B),
use-case profiles, what to run next, and suspicious observed scores.

Pure matrix functions (`select_probes`, `flag_suspicious`) take values and scales; the
`*_for` / bp-first functions take a loaded `BenchPress` (the thin `BenchPress` methods
delegate to them).

The names below are re-exported lazily (PEP 562): importing one submodule, such as
`predictor.trust.costs`, does not import the others, so modules below the API can use the
cost table without pulling in rankings (which use the API's answers).
"""

from __future__ import annotations

from predictor.util.lazy import lazy_exports

_EXPORTS = {
    "DEFAULT_COSTS": "predictor.trust.costs",
    "default_cost": "predictor.trust.costs",
    "resolve_costs": "predictor.trust.costs",
    "default_references": "predictor.trust.reference_choice",
    "what_to_run_next": "predictor.trust.next_benchmark",
    "ProbeSelection": "predictor.trust.probes",
    "probe_set_error": "predictor.trust.probes",
    "select_probes": "predictor.trust.probes",
    "select_probes_detailed": "predictor.trust.probes",
    "select_probes_for": "predictor.trust.probes",
    "PROFILES": "predictor.trust.profiles",
    "profile": "predictor.trust.profiles",
    "resolve_targets": "predictor.trust.profiles",
    "Comparison": "predictor.trust.rankings",
    "KnownComparison": "predictor.trust.rankings",
    "compare_models": "predictor.trust.rankings",
    "compare_with_known_models": "predictor.trust.rankings",
    "p_better": "predictor.trust.rankings",
    "flag_suspicious": "predictor.trust.suspicious",
    "loo_residuals": "predictor.trust.suspicious",
    "suspicious_scores": "predictor.trust.suspicious",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
