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

from importlib import import_module
from typing import Any

_EXPORTS = {
    "DEFAULT_COSTS": "costs",
    "default_cost": "costs",
    "resolve_costs": "costs",
    "what_to_run_next": "next_benchmark",
    "ProbeSelection": "probes",
    "probe_set_error": "probes",
    "select_probes": "probes",
    "select_probes_detailed": "probes",
    "select_probes_for": "probes",
    "PROFILES": "profiles",
    "profile": "profiles",
    "resolve_targets": "profiles",
    "Comparison": "rankings",
    "KnownComparison": "rankings",
    "compare_models": "rankings",
    "compare_with_known_models": "rankings",
    "p_better": "rankings",
    "flag_suspicious": "suspicious",
    "loo_residuals": "suspicious",
    "suspicious_scores": "suspicious",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)
