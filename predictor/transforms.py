"""Map benchmark scores to a space where a low-rank model fits, and back.

Percent scores saturate near 0 and 100, so they are modelled in logit space; unbounded
scores (Elo, ratings, dollars) are left as they are. Each column is then z-scored so that
one ridge penalty suits every benchmark.
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


class ScaleTransform:
    """Percent -> logit(clip(p/100, eps, 1-eps)), unbounded -> identity, then column z-score.

    The z-score statistics come from the observed (non-NaN) cells passed to `fit`. A column
    with fewer than 2 observed cells or zero spread gets std 1 (and mean 0 when empty), so it
    is merely shifted rather than blown up.
    """

    def __init__(self, scales: Sequence[str], eps: float = 0.005) -> None:
        if not 0.0 < eps < 0.5:
            raise ValueError(f"eps must lie in (0, 0.5), got {eps}")
        self.scales = list(scales)
        self.eps = eps

    def fit(self, values: np.ndarray) -> ScaleTransform:
        """Learn per-column mean and std in the warped space from the observed cells."""
        values = np.asarray(values, dtype=float)
        if values.ndim != 2:
            raise ValueError(f"values must be 2-D, got shape {values.shape}")
        self.is_percent_ = validate_scales(self.scales, values.shape[1])
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

    def transform(self, values: np.ndarray) -> np.ndarray:
        """Original units -> z-space; works on 2-D matrices or 1-D rows over the columns."""
        return (self._warp(np.asarray(values, dtype=float)) - self.mean_) / self.std_

    def inverse(self, z: np.ndarray) -> np.ndarray:
        """z-space -> original units; percent results land strictly inside (0, 100)."""
        return self.inverse_at(z, np.arange(len(self.is_percent_)))

    def inverse_at(self, z: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """`inverse` for values of the given columns only (`z[..., t]` is column `columns[t]`)."""
        columns = np.asarray(columns, dtype=int)
        warped = np.asarray(z, dtype=float) * self.std_[columns] + self.mean_[columns]
        logit = np.clip(warped, -_MAX_LOGIT, _MAX_LOGIT)
        percent = 100.0 / (1.0 + np.exp(-logit))
        return np.where(self.is_percent_[columns], percent, warped)

    def _warp(self, values: np.ndarray) -> np.ndarray:
        if values.shape[-1] != len(self.is_percent_):
            raise ValueError(
                f"values has {values.shape[-1]} columns; the transform was fitted on "
                f"{len(self.is_percent_)}"
            )
        p = np.clip(values / 100.0, self.eps, 1.0 - self.eps)
        return np.where(self.is_percent_, np.log(p / (1.0 - p)), values)
