"""Value types every layer shares: a prediction, what a fold-in assumed, and input errors.

They sit below everything else in `predictor` (no imports from the package), so the API,
the trust figures, the CLI and the web page hand the same objects around without importing
one another.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np
import polars as pl


class ProbeScoreError(ValueError):
    """A probe score the caller gave cannot be used (out of range, not finite, given twice, a
    benchmark outside the fit): the caller's input, so the CLI exits 2 as for any usage error."""


class FractionScoresWarning(UserWarning):
    """Probe scores that look like fractions (0-1) given where percentages are expected."""


@dataclass(frozen=True)
class Prediction:
    """A predicted score with its central `level` interval; `confidence` is the half-width.

    `p_within_5` is the trust figure: the predictive probability that the true score lies
    within 5 percentage points of `score`, calibrated on held-out cells like the interval
    (1.0 for the probes themselves). None on benchmarks not scored in percent (Elo, dollars,
    1-10 ratings: 5 units mean something else on each) and for a snapshot fitted by the
    recipe ALS, which has no predictive distribution."""

    benchmark: str
    score: float
    low: float
    high: float
    level: float
    observed: bool = False  # True for the probes themselves (returned unchanged)
    p_within_5: float | None = None

    @property
    def confidence(self) -> float:
        return (self.high - self.low) / 2.0

    def as_dict(self) -> dict[str, object]:
        # the fields are scalars: a plain copy, not asdict's recursive deep copy (which took
        # most of the time of a /api/predict answer, one call per benchmark)
        own = {name: getattr(self, name) for name in _PREDICTION_FIELDS}
        return {**own, "confidence": self.confidence}


_PREDICTION_FIELDS = tuple(f.name for f in fields(Prediction))


@dataclass(frozen=True)
class SideUsed:
    """The side information a new model was folded in with, so every answer can say it.

    `family`: the family given, else read from the model's name (`predictor.families`);
    None without a name. `family_known`: the fit has that family (else the model starts
    from the whole population, as a model of a family of its own). `release_date`: the date
    used (ISO day), `release_date_source` "given" or "newest in the fit" (a new model is
    usually a new release); both None when the fit used no dates."""

    model: str | None = None
    family: str | None = None
    family_known: bool = False
    release_date: str | None = None
    release_date_source: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in _SIDE_FIELDS}

    def describe(self) -> str:
        """One line for people, e.g. `family gpt, release date 2026-04-22 (newest in the fit)`."""
        if self.family is None:
            family = "no family (no model name given)"
        elif self.family_known:
            family = f"family {self.family}"
        else:
            family = f"family {self.family} (not in the fit: population prior)"
        if self.release_date is None:
            return family
        return f"{family}, release date {self.release_date} ({self.release_date_source})"


_SIDE_FIELDS = tuple(f.name for f in fields(SideUsed))


class Predictions(dict[str, Prediction]):
    """`{benchmark_id: Prediction}` as `BenchPress.predict` returns it, plus `.side`: the
    family and release date the fold-in used (`SideUsed`). Compares as the plain dict."""

    side: SideUsed

    def __init__(self, items: Mapping[str, Prediction] | None = None, side: SideUsed | None = None):
        super().__init__(items or {})
        self.side = side or SideUsed()

    @property
    def family(self) -> str | None:
        return self.side.family

    @property
    def release_date(self) -> str | None:
        return self.side.release_date


@dataclass(frozen=True)
class MatrixView:
    values: np.ndarray
    models: list[str]
    benchmarks: list[str]
    scales: list[str]


def predictions_frame(predictions: Mapping[str, Prediction]) -> pl.DataFrame:
    """Tidy table of predictions: one row per benchmark."""
    return pl.DataFrame(
        [p.as_dict() for p in predictions.values()],
        schema={
            "benchmark": pl.String,
            "score": pl.Float64,
            "low": pl.Float64,
            "high": pl.Float64,
            "level": pl.Float64,
            "observed": pl.Boolean,
            "p_within_5": pl.Float64,
            "confidence": pl.Float64,
        },
    )
