"""Fit a completion method the way a snapshot is fitted: side information, then calibration.

One function for the pipeline's fit (`pipelines.stages.fit`) and `BenchPress.fit`, so a
team's own matrix gets exactly the method, side information rules and new-model interval
calibration the published snapshot gets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from predictor.fit.calibration import calibrate_fold_in
from predictor.methods.base import Completer, NotSupportedError
from predictor.side_information import DEFAULT_USE, SideInformation
from predictor.util.progress import FitProgress, Progress


def side_kwargs_for(
    make_completer: Callable[[], Completer],
    side: SideInformation | None,
    use: Sequence[str] = DEFAULT_USE,
) -> dict[str, Any]:
    """The `fit` keywords of `side` that the method uses (the recipe uses none)."""
    if side is None:
        return {}
    supported = make_completer().side_information
    return {k: v for k, v in side.fit_kwargs(use).items() if k in supported}


def fit_calibrated(
    values: np.ndarray,
    scales: Sequence[str],
    make_completer: Callable[[], Completer],
    side: SideInformation | None = None,
    random_state: int = 0,
    use: Sequence[str] = DEFAULT_USE,
    progress: Progress | None = None,
) -> tuple[Completer, dict[str, Any]]:
    """(fitted completer, the side keywords it was given). New-model intervals are
    calibrated on held-out models of `values` with the same side information
    (`predictor.fit.calibration`) when the method has a predictive distribution. `progress`
    hears of the fit and of each held-out group (`predictor.util.progress`; without one the
    steps are still logged at INFO)."""
    report = FitProgress() if progress is None else progress
    kwargs = side_kwargs_for(make_completer, side, use)
    completer = make_completer().fit(values, scales, **kwargs)
    report("fit", 1, 1)
    try:
        completer.interval_multiplier(0.9)
    except NotSupportedError:
        return completer, kwargs  # no predictive distribution: nothing to calibrate
    completer.fold_in_calibration_ = calibrate_fold_in(
        values,
        scales,
        make_completer,
        random_state=random_state,
        fit_kwargs=kwargs,
        progress=report,
    )
    return completer, kwargs
