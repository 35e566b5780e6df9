"""Conformal factors of new-model intervals, by evidence stratum and level.

The value a fit carries (and a snapshot stores) once `predictor.fit.calibration` has measured
it; a method multiplies its model-based half-width by `factor(n_known, level, release)`.

Two tables: `factors` for a model folded in with its own side information (release date,
family), and `release_factors` for one whose release date is not known and is inferred
from its scores (`predictor.fit.calibration`): what a user who names no known model and gives
no date meets. (Snapshots written before December 2026 computed that table for a model
taken as released on the fit's newest date.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from predictor.methods.common import check_level

LEVELS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.975, 0.99)
KNOWN_STRATA = (3, 6, 10, 20)  # upper bounds: 1-3, 4-6, 7-10, 11-20, more than 20 known scores
MIN_RESIDUALS = 200
FACTOR_RANGE = (0.5, 2.0)

Table = tuple[tuple[float, ...], ...]


@dataclass(frozen=True)
class FoldInCalibration:
    """Half-width factors for fold-in intervals: `factors[stratum][level index]`;
    `release_factors` the same for a model folded in as a new release (None: `factors`)."""

    factors: Table
    residuals: tuple[int, ...]  # normalised residuals behind each stratum
    strata: tuple[int, ...] = KNOWN_STRATA
    levels: tuple[float, ...] = LEVELS
    release_factors: Table | None = None
    release_residuals: tuple[int, ...] | None = None
    # where it came from, not what it is (never stored, never compared): the key of the
    # `BENCHPRESS_CALIBRATION_CACHE` entry it was read from, None when computed
    cache_key: str | None = field(default=None, compare=False)

    def stratum(self, n_known: int) -> int:
        """Index of the evidence stratum of a model with `n_known` known scores."""
        return int(np.searchsorted(np.asarray(self.strata), n_known, side="left"))

    def stratum_labels(self) -> list[str]:
        """ "1-3", "4-6", ..., "21+": the known-score counts of each stratum."""
        lows = [1, *(upper + 1 for upper in self.strata)]
        spans = [f"{lo}-{hi}" for lo, hi in zip(lows, self.strata, strict=False)]
        return [*spans, f"{lows[-1]}+"]

    def factor(self, n_known: int, level: float, release: bool = False) -> float:
        """Multiplier on the model-based half-width at `level` for `n_known` known scores;
        `release`: the model was folded in with its release date unknown."""
        table = self.release_factors if release and self.release_factors else self.factors
        row = table[self.stratum(n_known)]
        return float(np.interp(check_level(level), self.levels, row))

    def as_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "strata": list(self.strata),
            "levels": list(self.levels),
            "factors": _rounded(self.factors),
            "residuals": list(self.residuals),
        }
        if self.release_factors is not None:
            doc["release_factors"] = _rounded(self.release_factors)
            doc["release_residuals"] = list(self.release_residuals or ())
        return doc

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> FoldInCalibration:
        strata = tuple(int(s) for s in doc["strata"])
        levels = tuple(float(lv) for lv in doc["levels"])
        factors = _checked(doc["factors"], strata, levels)
        release = doc.get("release_factors")  # absent in states written before it
        return cls(
            factors,
            tuple(int(n) for n in doc["residuals"]),
            strata,
            levels,
            None if release is None else _checked(release, strata, levels),
            None if release is None else tuple(int(n) for n in doc["release_residuals"]),
        )


def _rounded(table: Table) -> list[list[float]]:
    return [[round(f, 6) for f in row] for row in table]


def _checked(rows: Any, strata: tuple[int, ...], levels: tuple[float, ...]) -> Table:
    table = tuple(tuple(float(f) for f in row) for row in rows)
    if len(table) != len(strata) + 1 or any(len(r) != len(levels) for r in table):
        raise ValueError("fold-in calibration: factors do not match strata and levels")
    if not all(FACTOR_RANGE[0] <= f <= FACTOR_RANGE[1] for r in table for f in r):
        raise ValueError("fold-in calibration: a factor lies outside its allowed range")
    return table
