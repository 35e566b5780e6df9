"""Pipeline thresholds, in one place so checks and docs agree (overridable by environment)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from pipelines.stages.fit import FitParams


def _float(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


@dataclass(frozen=True)
class CheckThresholds:
    min_models: int = 50  # matrix sanity: fewer means a scraper or identity step broke
    min_benchmarks: int = 50
    min_top2_variance_share: float = 0.60  # rank-2 structure must still dominate


def fit_params() -> FitParams:
    return FitParams(
        min_per_model=_int("BENCHPRESS_MIN_CELLS_PER_MODEL", FitParams.min_per_model),
        min_per_benchmark=_int("BENCHPRESS_MIN_CELLS_PER_BENCHMARK", FitParams.min_per_benchmark),
    )


def check_thresholds() -> CheckThresholds:
    return CheckThresholds(
        min_models=_int("BENCHPRESS_CHECK_MIN_MODELS", CheckThresholds.min_models),
        min_benchmarks=_int("BENCHPRESS_CHECK_MIN_BENCHMARKS", CheckThresholds.min_benchmarks),
        min_top2_variance_share=_float(
            "BENCHPRESS_CHECK_MIN_TOP2_SHARE", CheckThresholds.min_top2_variance_share
        ),
    )
