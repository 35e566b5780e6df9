"""Map benchmark scores to a space where a low-rank model fits, and back.

Percent scores saturate near their floor (0, or the chance score of a multiple-choice
benchmark) and 100, so they are modelled in logit space; unbounded scores (Elo, ratings,
dollars) are left as they are. Each column is then z-scored so that one ridge penalty suits
every benchmark. Back-transformed values stay inside each column's valid range.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

ScaleKind = Literal["percent", "unbounded"]
SCALE_KINDS: tuple[str, ...] = ("percent", "unbounded")

# Bound on the logit before the sigmoid: keeps inverse percent values strictly inside (0, 100).
_MAX_LOGIT = 30.0


def validate_scales(scales: Sequence[str], n_columns: int) -> np.ndarray:
    """Return a boolean "is percent" mask; raise ValueError naming `scales` if it is malformed."""
    if isinstance(scales, str):
        raise ValueError("scales must be a sequence of scale kinds, not a single string")
    scales = list(scales)
    if len(scales) != n_columns:
        raise ValueError(f"scales has {len(scales)} entries but values has {n_columns} columns")
    for j, kind in enumerate(scales):
        if kind not in SCALE_KINDS:
            raise ValueError(f"scales[{j}] is {kind!r}; expected one of {SCALE_KINDS}")
    return np.array([kind == "percent" for kind in scales], dtype=bool)


def column_array(
    values: Sequence[float] | np.ndarray | None, n_columns: int, default: float, name: str
) -> np.ndarray:
    """One float per column (None = `default` everywhere; NaN entries take `default` too);
    a ValueError names `name` when the length is wrong."""
    if values is None:
        return np.full(n_columns, float(default))
    arr = np.array(values, dtype=float).reshape(-1)
    if arr.shape[0] != n_columns:
        raise ValueError(f"{name} has {arr.shape[0]} entries but values has {n_columns} columns")
    return np.where(np.isnan(arr), float(default), arr)


def column_ranges(
    is_percent: np.ndarray,
    floors: Sequence[float] | np.ndarray | None = None,
    lower: Sequence[float] | np.ndarray | None = None,
    upper: Sequence[float] | np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(floor, lower, upper) per column, checked: floors lie in 0-100 (0 on other columns),
    percent ranges are cut to 0-100, open ends are infinite; a ValueError names the argument
    and column of a bad entry."""
    percent = np.asarray(is_percent, dtype=bool)
    n = len(percent)
    floor = column_array(floors, n, 0.0, "floors")
    low = column_array(lower, n, -np.inf, "lower")
    high = column_array(upper, n, np.inf, "upper")
    low = np.where(percent, np.maximum(low, 0.0), low)
    high = np.where(percent, np.minimum(high, 100.0), high)
    bad_floor = percent & ((floor < 0.0) | (floor >= 100.0))
    if bad_floor.any():
        j = int(np.flatnonzero(bad_floor)[0])
        raise ValueError(f"floors[{j}] = {floor[j]:g}; a chance floor lies in 0-100")
    if (low > high).any():
        j = int(np.flatnonzero(low > high)[0])
        raise ValueError(f"lower[{j}] = {low[j]:g} is above upper[{j}] = {high[j]:g}")
    return np.where(percent, floor, 0.0), low, high


class ScaleTransform:
    """Percent -> logit of the share of the way from the floor to 100, unbounded -> identity,
    then column z-score; back-transformed values are clipped to each column's valid range.

    `floors` is each percent column's chance score (25 on a 4-way multiple-choice benchmark,
    default 0): a score x maps to logit(clip((x - floor) / (100 - floor), eps, 1 - eps)), so
    the model sees progress above guessing and never predicts below it (scores at or below the
    floor all map to the bottom of the range). `lower` / `upper` are the valid range of every
    column (default 0-100 on percent columns, open on the others): predictions and interval
    ends never leave it (no negative minutes on a time-horizon column).

    The z-score statistics come from the observed (non-NaN) cells passed to `fit`. A column
    with fewer than 2 observed cells or zero spread gets std 1 (and mean 0 when empty), so it
    is merely shifted rather than blown up.
    """

    def __init__(
        self,
        scales: Sequence[str],
        eps: float = 0.005,
        floors: Sequence[float] | np.ndarray | None = None,
        lower: Sequence[float] | np.ndarray | None = None,
        upper: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        if not 0.0 < eps < 0.5:
            raise ValueError(f"eps must lie in (0, 0.5), got {eps}")
        self.scales = list(scales)
        self.eps = eps
        self.floors = floors
        self.lower = lower
        self.upper = upper

    def fit(self, values: np.ndarray) -> ScaleTransform:
        """Learn per-column mean and std in the warped space from the observed cells."""
        values = np.asarray(values, dtype=float)
        if values.ndim != 2:
            raise ValueError(f"values must be 2-D, got shape {values.shape}")
        self.is_percent_ = validate_scales(self.scales, values.shape[1])
        self.set_ranges(self.floors, self.lower, self.upper)
        warped = self._warp(values)
        observed = ~np.isnan(warped)
        count = observed.sum(axis=0)
        filled = np.where(observed, warped, 0.0)
        mean = np.divide(filled.sum(axis=0), count, out=np.zeros(len(count)), where=count > 0)
        sq = np.where(observed, (warped - mean) ** 2, 0.0).sum(axis=0)
        std = np.sqrt(np.divide(sq, count, out=np.zeros(len(count)), where=count > 0))
        std[(count < 2) | (std < 1e-8)] = 1.0
        self.mean_ = mean
        self.std_ = std
        return self

    @classmethod
    def restored(
        cls, scales: Sequence[str], eps: float, mean: Sequence[float], std: Sequence[float]
    ) -> ScaleTransform:
        """A fitted transform rebuilt from a snapshot's state (ranges: `set_ranges`)."""
        transform = cls(scales, eps=eps)
        transform.is_percent_ = np.array([s == "percent" for s in scales], dtype=bool)
        transform.mean_ = np.asarray(mean, dtype=float)
        transform.std_ = np.asarray(std, dtype=float)
        return transform

    def set_ranges(
        self,
        floors: Sequence[float] | np.ndarray | None,
        lower: Sequence[float] | np.ndarray | None,
        upper: Sequence[float] | np.ndarray | None,
    ) -> ScaleTransform:
        """Check and store `floor_`, `lower_`, `upper_` (needs `is_percent_`); also used when a
        fitted transform is restored from a snapshot."""
        ranges = column_ranges(self.is_percent_, floors, lower, upper)
        self.floor_, self.lower_, self.upper_ = ranges
        return self

    def transform(self, values: np.ndarray) -> np.ndarray:
        """Original units -> z-space; works on 2-D matrices or 1-D rows over the columns."""
        return (self._warp(np.asarray(values, dtype=float)) - self.mean_) / self.std_

    def inverse(self, z: np.ndarray) -> np.ndarray:
        """z-space -> original units, inside each column's valid range; percent results land
        strictly between the floor and 100."""
        return self.inverse_at(z, np.arange(len(self.is_percent_)))

    def inverse_at(self, z: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """`inverse` for values of the given columns only (`z[..., t]` is column `columns[t]`)."""
        columns = np.asarray(columns, dtype=int)
        floor, low, high = self.ranges()
        warped = np.asarray(z, dtype=float) * self.std_[columns] + self.mean_[columns]
        logit = np.clip(warped, -_MAX_LOGIT, _MAX_LOGIT)
        base = floor[columns]
        percent = base + (100.0 - base) / (1.0 + np.exp(-logit))
        out = np.where(self.is_percent_[columns], percent, warped)
        return np.clip(out, low[columns], high[columns])

    def ranges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(floor, lower, upper) per column; transforms restored from states written before
        floors and ranges existed get floor 0 and 0-100 / open ranges."""
        if getattr(self, "floor_", None) is None:
            self.set_ranges(None, None, None)
        return self.floor_, self.lower_, self.upper_

    def _warp(self, values: np.ndarray) -> np.ndarray:
        if values.shape[-1] != len(self.is_percent_):
            raise ValueError(
                f"values has {values.shape[-1]} columns; the transform was fitted on "
                f"{len(self.is_percent_)}"
            )
        floor = self.ranges()[0]
        p = np.clip((values - floor) / (100.0 - floor), self.eps, 1.0 - self.eps)
        return np.where(self.is_percent_, np.log(p / (1.0 - p)), values)
