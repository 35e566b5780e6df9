"""Completion of a models x benchmarks score matrix, with intervals.

`complete_matrix` is the entry point. Its default method is the robust Bayesian factorisation
in `predictor.methods.bayesian` (`BayesianCompleter`); `method="als"` is BenchPress's
reference recipe, "logit bias ALS" (`predictor.methods.als.LowRankCompleter`). Methods are
looked up in `predictor.methods.registry` and used through the `Completer` contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from predictor.methods.als import LowRankCompleter
from predictor.methods.base import Completer
from predictor.methods.common import check_level, check_values
from predictor.methods.registry import METHODS, completer_class
from predictor.transforms import column_ranges, validate_scales

__all__ = ["METHODS", "Completion", "LowRankCompleter", "complete_matrix"]


@dataclass(frozen=True)
class Completion:
    """A completed matrix: point estimate and interval, all in original units."""

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    model: Completer | None = None
    level: float = 0.9


_PLAUSIBLE_LIMIT = 1e7  # as BenchPress.predict: a larger score is a typo, not a measurement


def _check_inputs(values: Any, scales: Sequence[str]) -> None:
    """Booleans, an empty matrix and percent cells outside 0-100 are errors, never data."""
    raw = np.asarray(values) if values is not None else np.asarray(np.nan)
    if raw.dtype == bool:
        raise TypeError("values must be scores (numbers with NaN for missing), got booleans")
    if raw.ndim == 2 and 0 in raw.shape:
        raise ValueError(f"values is empty (shape {raw.shape}): give models x benchmarks")
    arr = check_values(raw)
    percent = validate_scales(scales, arr.shape[1])
    with np.errstate(invalid="ignore"):
        outside = percent[None, :] & ((arr < 0.0) | (arr > 100.0))
        huge = np.abs(arr) > _PLAUSIBLE_LIMIT
    if outside.any():
        i, j = (int(k[0]) for k in np.nonzero(outside))
        raise ValueError(f"values[{i}, {j}] = {arr[i, j]:g} lies outside 0-100 (percent column)")
    if huge.any():
        i, j = (int(k[0]) for k in np.nonzero(huge))
        raise ValueError(f"values[{i}, {j}] = {arr[i, j]:g} is implausibly large")


def _check_in_range(values: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
    """An observed score outside the column's stated valid range contradicts it: an error."""
    with np.errstate(invalid="ignore"):
        outside = (values < lower[None, :]) | (values > upper[None, :])
    if outside.any():
        i, j = (int(k[0]) for k in np.nonzero(outside))
        raise ValueError(
            f"values[{i}, {j}] = {values[i, j]:g} lies outside its valid range "
            f"{lower[j]:g} to {upper[j]:g} (lower / upper)"
        )


def complete_matrix(
    values: np.ndarray,
    scales: Sequence[str],
    level: float = 0.9,
    *,
    method: str = "bayes",
    row_features: np.ndarray | None = None,
    floors: Sequence[float] | np.ndarray | None = None,
    lower: Sequence[float] | np.ndarray | None = None,
    upper: Sequence[float] | np.ndarray | None = None,
    row_groups: Sequence[str | None] | None = None,
    col_groups: Sequence[str | None] | None = None,
    new_model_features: Sequence[float] | np.ndarray | None = None,
    **params: Any,
) -> Completion:
    """Complete `values` (models x benchmarks, NaN = missing) and give `level` intervals.

    method "bayes" (default) fits `BayesianCompleter(**params)`, optionally with per-model side
    information `row_features` (models x f, e.g. release dates), each percent column's chance
    `floors` (25 on 4-way multiple choice), model families `row_groups` (e.g.
    `predictor.names.families.model_families(ids)`) and benchmark categories `col_groups` (and
    `new_model_features`, the features a model folded in later is assumed to have); "als"
    fits the BenchPress reference recipe `LowRankCompleter(**params)` (none of those). `lower`
    / `upper` give each column's valid range (default 0-100 on percent columns, open on the
    others): every method's predictions and interval ends are kept inside it. Observed cells
    come back unchanged, with low == high == mean.
    """
    level = check_level(level)
    _check_inputs(values, scales)
    percent = validate_scales(scales, np.shape(values)[1])
    _, bottom, top = column_ranges(percent, floors, lower, upper)  # checked before any fit
    _check_in_range(np.asarray(values, dtype=float), bottom, top)
    cls = completer_class(method)
    side = dict(
        row_features=row_features,
        floors=floors,
        lower=lower,
        upper=upper,
        row_groups=row_groups,
        col_groups=col_groups,
        new_model_features=new_model_features,
    )
    if "lower" not in cls.side_information:  # the valid range is applied below in any case
        side.pop("lower"), side.pop("upper")
    model: Completer = cls(**params).fit(values, scales, **side)
    low, high = model.predict_interval(level)
    return Completion(
        mean=np.clip(model.predict(), bottom, top),
        low=np.clip(low, bottom, top),
        high=np.clip(high, bottom, top),
        model=model,
        level=level,
    )
