"""Value types every layer shares: a prediction, what a fold-in assumed, and input errors.

They sit below everything else in `predictor` (no imports from the package), so the API,
the trust figures, the CLI and the web page hand the same objects around without importing
one another.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np
import polars as pl


class ProbeScoreError(ValueError):
    """A probe score the caller gave cannot be used (out of range, not finite, given twice, a
    benchmark outside the fit): the caller's input, so the CLI exits 2 as for any usage error."""


class ReleaseDateError(ProbeScoreError):
    """A release date outside the range a fit can use (`BenchPress.release_date_range`): its
    models' dates widened by `predictor.side_information.DATE_MARGIN_MONTHS` either side.
    Further out the date trend would be extrapolated. `earliest` and `newest` are the
    allowed range as ISO days."""

    def __init__(self, message: str, earliest: str, newest: str):
        super().__init__(message)
        self.earliest, self.newest = earliest, newest

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:  # whole across processes
        return type(self), (str(self), self.earliest, self.newest)


class FractionScoresWarning(UserWarning):
    """Probe scores that look like fractions (0-1) given where percentages are expected."""


class Measured(NamedTuple):
    """A score with its standard error (measurement noise, in the score's unit): what a
    probe score may be wherever one is taken (`{"mmlu_pro": Measured(74.0, 1.5)}`, or any
    `(score, standard_error)` pair). A results file's `stderr` column (or the binomial rule
    on its item count `n`) gives one; a plain number is taken as exact."""

    score: float
    stderr: float


def split_measured(shown: str, raw: object) -> tuple[object, float | None]:
    """(score as given, its standard error or None) of one probe value: a number, or a
    `(score, standard_error)` pair (a tuple or list of two). The score is checked by the
    caller (anything else comes back as the score, for the caller to refuse); a
    standard error that is not a finite number >= 0 is a `ProbeScoreError` naming the
    benchmark (`shown`: its name as the message shows it, already quoted)."""
    if not isinstance(raw, tuple | list) or len(raw) != 2:
        return raw, None  # the caller refuses anything but a number
    score, stderr = raw
    if isinstance(stderr, bool) or not isinstance(stderr, int | float | np.number):
        kind = "text" if isinstance(stderr, str) else type(stderr).__name__
        raise ProbeScoreError(f"standard error for {shown} must be a number, got {kind}")
    try:
        value = float(stderr)
    except OverflowError:  # an int beyond the float range
        value = math.inf
    if not math.isfinite(value) or value < 0:
        raise ProbeScoreError(
            f"standard error for {shown} must be a finite number >= 0, got {value:g}"
        )
    return score, value


@dataclass(frozen=True)
class Noise:
    """The measurement noise an observed score is taken with in a comparison: `sd` in the
    score's unit (0: taken as exact) and `source`, where it comes from ("given": the caller's
    or a results file's standard error; else the per-benchmark default,
    `predictor.results.noise`)."""

    sd: float
    source: str

    def as_dict(self) -> dict[str, object]:
        return {"sd": self.sd, "source": self.source}


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


# How the model's side information was decided (`SideUsed.basis`), in order of precedence.
BASIS_KNOWN = "known model"  # the name is a model of the snapshot: its own date and family
BASIS_BASE = "base model"  # a fine-tune, merge, quantisation or adapter of a known model
BASIS_NAME = "name"  # a name the snapshot does not know: family read from it, date inferred
BASIS_NONE = "no name"  # no name given: population prior, date inferred
DATE_GIVEN = "given"
DATE_INFERRED = "inferred from the probes"


@dataclass(frozen=True)
class SideUsed:
    """The side information a new model was folded in with, so every answer can say it.

    Decided in this order (`BenchPress.side_for`): what the caller gave (`family`,
    `release_date`); a model the snapshot knows (`known_model`: its own date and family);
    a fine-tune, merge, quantisation or adapter of a known model (`base_model`, from the
    name or a `base` argument: the base's); otherwise the family read from the name and a
    date inferred from the probe scores jointly with the rest, never a fixed default.

    `family`: the family used, None without a name; `family_known`: the fit has it (else the
    model starts from the whole population). `release_date`: the date used, an ISO day (for
    an inferred date its posterior mean, `release_date_sd_months` its spread);
    `release_date_source`: "given", where a known model's date comes from (`catalogue`, a
    source id, ...) or "inferred from the probes"; both None when the fit used no dates.
    `note`: why, when a known date was not used (only first seen: not a release date)."""

    model: str | None = None
    family: str | None = None
    family_known: bool = False
    release_date: str | None = None
    release_date_source: str | None = None
    basis: str = BASIS_NONE
    known_model: str | None = None
    base_model: str | None = None
    derivation: str | None = None
    release_date_sd_months: float | None = None
    note: str | None = None

    @property
    def date_inferred(self) -> bool:
        return self.release_date_source == DATE_INFERRED

    def as_dict(self) -> dict[str, object]:
        return {**{name: getattr(self, name) for name in _SIDE_FIELDS}, "reason": self.describe()}

    def describe(self) -> str:
        """One line for people: what was used and why, e.g. `known model gpt-4o-2024-05-13:
        family gpt-4o, release date 2024-05-13 (catalogue)` or `family my-model (not in the
        fit: population prior), release date inferred from the probes: 2025-03 +- 5 months`."""
        if self.basis == BASIS_KNOWN:
            who = f"known model {self.known_model}: "
        elif self.basis == BASIS_BASE:
            who = f"base {self.base_model} ({self.derivation}): "
        else:
            who = ""
        if self.family is None:
            family = "no family (no model name given)"
        elif self.family_known:
            family = f"family {self.family}"
        else:
            family = f"family {self.family} (not in the fit: population prior)"
        text = who + family
        if self.date_inferred and self.release_date is None:
            text += ", release date inferred from the scores"
        elif self.release_date is not None:
            if self.date_inferred:
                spread = self.release_date_sd_months
                plus = "" if spread is None else f" \u00b1 {spread:.0f} months"
                text += f", release date inferred from the probes: {self.release_date[:7]}{plus}"
            else:
                text += f", release date {self.release_date} ({self.release_date_source})"
        return text if self.note is None else f"{text}; {self.note}"


_SIDE_FIELDS = tuple(f.name for f in fields(SideUsed))


class Predictions(dict[str, Prediction]):
    """`{benchmark_id: Prediction}` as `BenchPress.predict` returns it, plus `.side`: the
    family and release date the fold-in used (`SideUsed`), and `.stderr`: the standard error
    each probe came with (benchmark id -> SE in its unit; probes given as plain numbers are
    not in it). Compares as the plain dict."""

    side: SideUsed
    stderr: dict[str, float]

    def __init__(
        self,
        items: Mapping[str, Prediction] | None = None,
        side: SideUsed | None = None,
        stderr: Mapping[str, float] | None = None,
    ):
        super().__init__(items or {})
        self.side = side or SideUsed()
        self.stderr = dict(stderr or {})

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
