"""Pipeline thresholds, in one place so checks and docs agree (overridable by environment)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from pipelines.stages.fit import FitParams

DRIFT_CHECKS = (
    "loading_subspace_stable",
    "holdout_error_stable",
    "cells_not_lost",
    "predictions_stable",
)


def _float(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


@dataclass(frozen=True)
class CheckThresholds:
    min_models: int = 50  # matrix sanity: fewer means a scraper or identity step broke
    min_benchmarks: int = 50
    min_top2_variance_share: float = 0.60  # rank-2 structure must still dominate
    max_loading_angle_deg: float = 30.0  # benchmark-loading subspace vs last published
    max_holdout_medae_increase: float = 1.0  # points of held-out MedAE
    max_cells_removed_share: float = 0.10  # of the last published snapshot's cells
    min_source_cell_ratio: float = 0.50  # each source keeps at least half its cells
    max_prediction_shift: float = 5.0  # median points, reference probe sets


def fit_params() -> FitParams:
    return FitParams(
        min_per_model=_int("BENCHPRESS_MIN_CELLS_PER_MODEL", FitParams.min_per_model),
        min_per_benchmark=_int("BENCHPRESS_MIN_CELLS_PER_BENCHMARK", FitParams.min_per_benchmark),
    )


def check_thresholds() -> CheckThresholds:
    """Defaults above; each can be set by an environment variable BENCHPRESS_CHECK_<NAME>."""
    values = {}
    for name, default in vars(CheckThresholds()).items():
        env = f"BENCHPRESS_CHECK_{name.upper()}"
        values[name] = (_int if isinstance(default, int) else _float)(env, default)
    return CheckThresholds(**values)


def parse_accepted(text: str) -> frozenset[str]:
    """`--accept-drift` / BENCHPRESS_ACCEPT_DRIFT: comma-separated check names, or `all`."""
    names = {part.strip() for part in text.split(",") if part.strip()}
    if "all" in names:
        return frozenset(DRIFT_CHECKS)
    unknown = names - set(DRIFT_CHECKS)
    if unknown:
        raise ValueError(
            f"unknown drift check(s) {sorted(unknown)}; choose from {', '.join(DRIFT_CHECKS)}"
        )
    return frozenset(names)
