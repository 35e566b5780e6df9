"""Pipeline thresholds, in one place so checks and docs agree (overridable by environment).

The settings read the environment into the types of the modules they configure (the fit's
`FitParams`, the guards' `GuardThresholds`, the fetch budget's `FetchDeadlines`); those modules
never import this one, so every step can read its settings without an import circle."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, TypeVar

from pipelines.fetch.budget import RUN_DEADLINE_ENV, SOURCE_DEADLINE_ENV, FetchDeadlines
from pipelines.fetch.transports import seconds_setting
from pipelines.stages.fit import FitParams
from pipelines.stages.quality import DRIFT_CHECKS, GuardThresholds

T = TypeVar("T", int, float)
D = TypeVar("D", bound=Any)

PUBLISH_URI_ENV = "BENCHPRESS_PUBLISH_URI"  # a shared store to push to, e.g. s3://bucket/prefix


def _number(name: str, default: T) -> T:
    """The environment variable `name` read as the type of `default` (unset or empty: default).

    A bad value names the variable: the message is all an operator sees in a failed run."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = type(default)(raw)
    except ValueError:
        kind = "an integer" if isinstance(default, int) else "a number"
        raise ValueError(f"{name}={raw!r} is not {kind} (default {default})") from None
    if value != value:  # NaN compares false with everything: the check could never fail
        raise ValueError(f"{name}={raw!r} is not a number (default {default})")
    return value


def threshold_env(field: str) -> str:
    """The variable that sets check threshold `field` (a failed check names it)."""
    return f"BENCHPRESS_CHECK_{field.upper()}"


def _from_env(defaults: D) -> D:
    """`defaults` with each field overridden by BENCHPRESS_CHECK_<FIELD> where set."""
    values = {
        name: _number(threshold_env(name), default) for name, default in vars(defaults).items()
    }
    return type(defaults)(**values)


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


def fetch_deadlines() -> FetchDeadlines:
    """BENCHPRESS_SOURCE_DEADLINE and BENCHPRESS_RUN_DEADLINE (seconds; defaults in
    `pipelines.fetch.budget.FetchDeadlines`)."""
    return FetchDeadlines(
        source=seconds_setting(SOURCE_DEADLINE_ENV, FetchDeadlines.source),
        run=seconds_setting(RUN_DEADLINE_ENV, FetchDeadlines.run),
    )


def fit_params() -> FitParams:
    return FitParams(
        min_per_model=_number("BENCHPRESS_MIN_CELLS_PER_MODEL", FitParams.min_per_model),
        min_per_benchmark=_number(
            "BENCHPRESS_MIN_CELLS_PER_BENCHMARK", FitParams.min_per_benchmark
        ),
    )


def check_thresholds() -> CheckThresholds:
    """Defaults above; each can be set by an environment variable BENCHPRESS_CHECK_<NAME>."""
    return _from_env(CheckThresholds())


def guard_thresholds() -> GuardThresholds:
    """The corrupt-payload guards of `cells_not_lost` (defaults in `GuardThresholds`), each
    overridable the same way: BENCHPRESS_CHECK_<NAME>."""
    return _from_env(GuardThresholds())


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


WORKERS_ENV = "BENCHPRESS_REFRESH_WORKERS"
MAX_WORKERS = 32


def refresh_workers(value: int | str | None = None) -> int:
    """How parallel a refresh is (`benchpress refresh --workers`, else
    BENCHPRESS_REFRESH_WORKERS, else 1): with N > 1 the sources' fetch and parse steps run in
    up to N processes and each source fetches up to N URLs at once, while warehouse writes
    stay one at a time. 1 is the serial, in-process refresh."""
    raw = str(value).strip() if value is not None else os.environ.get(WORKERS_ENV, "").strip()
    where = "--workers" if value is not None else WORKERS_ENV
    if not raw:
        return 1
    try:
        workers = int(raw)
    except ValueError:
        raise ValueError(f"{where}={raw!r} is not a whole number of workers") from None
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"{where}={raw!r} must be between 1 and {MAX_WORKERS}")
    return workers
