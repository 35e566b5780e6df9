"""Pinned probe sets of the bundled snapshots: see `predictor.trust.probe_sets` (this module
keeps the public import path)."""

from predictor.trust.probe_sets import (
    LOW_COST_MAX,
    PINNED,
    K,
    ProbeBenchmarks,
    ProbeSet,
    low_cost_allowlist,
    select_probe_sets,
)

__all__ = [
    "K",
    "LOW_COST_MAX",
    "PINNED",
    "ProbeBenchmarks",
    "ProbeSet",
    "low_cost_allowlist",
    "select_probe_sets",
]
