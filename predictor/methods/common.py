"""Input checks and small numeric helpers shared by the completion methods."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np


def check_values(values: Any) -> np.ndarray:
    """A float (models x benchmarks) copy; NaN = missing; every column needs one observation."""
    arr = np.array(values, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"values must be a 2-D array (models x benchmarks), got shape {arr.shape}")
    if np.isinf(arr).any():
        raise ValueError("values contains infinite entries; use NaN for missing cells")
    empty = np.flatnonzero(np.isnan(arr).all(axis=0))
    if len(empty):
        raise ValueError(f"values has columns with no observed cells: {empty.tolist()}")
    return arr


# Interval levels served: closer to 1 the t quantile of (1 + level) / 2 rounds to 1.0 (no
# interval), and nobody needs a 99.99% or a 0.5% interval.
MIN_LEVEL, MAX_LEVEL = 0.01, 0.999


def check_level(level: float) -> float:
    """`level` as a float in MIN_LEVEL-MAX_LEVEL; one wording for the API, CLI and web page."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    if not MIN_LEVEL <= level <= MAX_LEVEL:
        raise ValueError(f"level must lie in {MIN_LEVEL:g}-{MAX_LEVEL:g}, got {level!r}")
    return float(level)


def check_row(row: Any, n_columns: int) -> np.ndarray:
    row = np.asarray(row, dtype=float)
    if row.ndim != 1 or row.shape[0] != n_columns:
        raise ValueError(f"row must be a 1-D array of length {n_columns}, got shape {row.shape}")
    if np.isinf(row).any():
        raise ValueError("row contains infinite entries; use NaN for unknown scores")
    return row


def measurement_variance_z(transform: Any, rows: np.ndarray, noise_sd: Any) -> np.ndarray | None:
    """The measurement noise of known scores as a variance in z-space, to add to those
    cells' noise in a fold-in (the completer contract's `noise_sd`): `noise_sd` is a standard
    error per cell of `rows` (same shape; 1-D rows take one per benchmark) in original units,
    NaN or 0 where the score is exact; converted through the transform's local slope
    (`ScaleTransform.stderr_z`). None when nothing is noisy (the fold-in is then exactly
    the one without), else 0 wherever a cell is unknown or exact. A negative or infinite
    entry is a ValueError."""
    if noise_sd is None:
        return None
    rows = np.asarray(rows, dtype=float)
    sd = np.asarray(noise_sd, dtype=float)
    if sd.shape != rows.shape:
        raise ValueError(
            f"noise_sd must have the shape of the row(s), {rows.shape}, got {sd.shape}"
        )
    sd = np.where(np.isnan(sd), 0.0, sd)
    if np.isinf(sd).any() or (sd < 0).any():
        raise ValueError("noise_sd must be >= 0 and finite (NaN or 0: an exact score)")
    noisy = (sd > 0) & ~np.isnan(rows)
    if not noisy.any():
        return None
    with np.errstate(invalid="ignore"):
        step = transform.stderr_z(rows, sd)
    return np.where(noisy, step, 0.0) ** 2


@lru_cache(maxsize=16)
def _t_table(dof: float) -> tuple[np.ndarray, np.ndarray]:
    """(theta grid, P(0 < T < sqrt(dof) tan(theta)) / P(T > 0)) for Student's t.

    With t = sqrt(dof) tan(theta), P(0 < T < t) is proportional to the integral of
    cos(theta)^(dof - 1) from 0 to theta; tabulated on a fine grid (~1e-9 accurate).
    """
    if dof <= 0:
        raise ValueError(f"dof must be > 0, got {dof}")
    n = 100_000
    theta = np.linspace(0.0, math.pi / 2, n + 1)
    mid = (theta[:-1] + theta[1:]) / 2
    mass = np.concatenate([[0.0], np.cumsum(np.cos(mid) ** (dof - 1.0))])
    return theta, mass / mass[-1]


def student_t_cdf(t: np.ndarray, dof: float) -> np.ndarray:
    """CDF of Student's t with `dof` > 0 degrees of freedom at `t` (+-inf allowed)."""
    theta, mass = _t_table(float(dof))
    t = np.asarray(t, dtype=float)
    half = np.interp(np.arctan(np.abs(t) / math.sqrt(dof)), theta, mass)
    return 0.5 + np.sign(t) * half / 2.0


@lru_cache(maxsize=64)
def student_t_quantile(prob: float, dof: float) -> float:
    """Quantile of Student's t with `dof` > 0 degrees of freedom (numpy only, ~1e-9 accurate)."""
    if not 0.0 < prob < 1.0:
        raise ValueError(f"prob must lie in (0, 1), got {prob}")
    theta, mass = _t_table(float(dof))
    if prob == 0.5:
        return 0.0
    target = abs(2.0 * prob - 1.0)
    angle = float(np.interp(target, mass, theta))
    t = math.sqrt(dof) * math.tan(min(angle, math.pi / 2 - 1e-12))
    return t if prob > 0.5 else -t


def round_state(array: np.ndarray) -> list[Any]:
    """Floats at 10 significant digits for snapshot state, so tiny BLAS-order differences
    between machines do not change a snapshot's hash."""
    array = np.asarray(array)
    return (
        np.vectorize(lambda x: float(f"{x:.10g}"), otypes=[float])(array).tolist()
        if array.size
        else []
    )


def finite_or_none(array: np.ndarray) -> list[float | None]:
    """JSON has no infinity: open ends of a range are written as null."""
    return [float(f"{x:.10g}") if np.isfinite(x) else None for x in np.asarray(array, float)]
