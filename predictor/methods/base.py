"""The completer contract: what every completion method offers the rest of `predictor`.

Calibration, probe selection, suspicious scores, trust figures, the new-benchmark fold-in,
snapshot state and `BenchPress` talk to a fitted completer only through `Completer`. A method
that cannot do something raises `NotSupportedError` from that call (the recipe ALS has no
predictive distribution, so no draws, no trust figure and no batched fold-in); the caller
turns it into a message for the user. Adding a method is its module plus one line in
`predictor.methods.registry`.

Fitted state every completer has (scikit-learn style, names ending in `_`): `values_` (the
fitted matrix, NaN = missing), `observed_`, `transform_` (the `ScaleTransform` between
scores and the z-scored logit space), `z_pred_` (the completed matrix in that space) and
`fold_in_calibration_` (conformal factors of new-model intervals, or None).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from predictor.transforms import ScaleTransform

# Keyword arguments of `fit` that carry side information (see `predictor.side_information`).
SIDE_KEYWORDS = (
    "row_features",
    "row_feature_sd",
    "floors",
    "lower",
    "upper",
    "row_groups",
    "col_groups",
    "new_model_features",
)


class NotSupportedError(TypeError):
    """The completion method cannot do what was asked (e.g. the recipe ALS has no
    predictive draws); the message says what and why."""


@dataclass(frozen=True)
class Placement:
    """Per-sample parameters of the models and the fitted benchmarks, enough to fold a new
    column in: sample r pairs model parameters with benchmark draw `draw[r]`.

    offset (R, n): mu + a_i; design (R, n, d): [1, u_i]; benchmark_params (S, m, d): the
    fitted benchmarks' [b_j, v_j]; benchmark_noise (S, m): their noise variances; model_noise
    (n,): each model's noise multiplier; spread (m,) and percent (m,): the fitted columns'
    z-scale (std of the warped scores, and whether the column is percent); nu and
    interval_scale: the completer's Student-t degrees of freedom and interval multiplier.
    """

    offset: np.ndarray
    design: np.ndarray
    draw: np.ndarray
    benchmark_params: np.ndarray
    benchmark_noise: np.ndarray
    model_noise: np.ndarray
    spread: np.ndarray
    percent: np.ndarray
    nu: float
    interval_scale: float

    @property
    def n_models(self) -> int:
        return self.offset.shape[1]

    def extended(self, other: Placement) -> Placement:
        """This placement with `other`'s models appended (same benchmark draws)."""
        return Placement(
            np.concatenate([self.offset, other.offset], axis=1),
            np.concatenate([self.design, other.design], axis=1),
            self.draw,
            self.benchmark_params,
            self.benchmark_noise,
            np.concatenate([self.model_noise, other.model_noise]),
            self.spread,
            self.percent,
            self.nu,
            self.interval_scale,
        )


@runtime_checkable
class Completer(Protocol):
    """A completion method: fit a matrix, predict it, fold new rows and columns in.

    `row` arguments are one new model's scores over the fitted benchmarks (NaN = unknown);
    `features` its side features in original units (a release year) and `group` its family
    name; None means what the fit assumes for a new model (`new_model_side`). `noise_sd`
    (per benchmark, original units; NaN or 0 = exact; None = every score exact) is the
    measurement noise of the row's known scores beyond what the fit's own noise holds: a
    method adds it to those cells' noise (converted into its space through the transform's
    local slope, `predictor.methods.common.measurement_variance_z`), so a noisy score moves
    the answer less and widens the intervals; one without a noise model may weight by it.
    Callers pass it only when some score is noisy, so a method without the keyword still
    serves exact probes."""

    method: ClassVar[str]  # registry name, written into snapshot state
    label: ClassVar[str]  # what the page and `benchpress evaluate` call it
    # The layout its `to_state` writes: the pipeline names a fit `method@state_version` before
    # fitting, to reuse a published snapshot with the same inputs (`pipelines.stages.fit`)
    state_version: ClassVar[int]
    side_information: ClassVar[frozenset[str]]  # the `SIDE_KEYWORDS` its `fit` uses

    transform_: ScaleTransform
    values_: np.ndarray
    observed_: np.ndarray
    fold_in_calibration_: Any

    def fit(self, values: np.ndarray, scales: Sequence[str], **side: Any) -> Completer: ...

    def get_params(self) -> dict[str, Any]: ...

    @property
    def z_pred_(self) -> np.ndarray: ...

    # fitted matrix
    def predict(self, keep_observed: bool = True) -> np.ndarray: ...

    def predict_interval(
        self, level: float = 0.9, keep_observed: bool = True
    ) -> tuple[np.ndarray, np.ndarray]: ...

    def predict_within(self, width: float = 5.0) -> np.ndarray: ...

    def noise_scale_z(self) -> np.ndarray: ...

    # a new model (row)
    def new_model_side(self) -> tuple[np.ndarray | None, Sequence[str]]: ...

    def fold_in(
        self,
        row: np.ndarray,
        return_z: bool = False,
        keep_observed: bool = True,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]: ...

    def fold_in_interval(
        self,
        row: np.ndarray,
        level: float = 0.9,
        keep_observed: bool = True,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]: ...

    def fold_in_summary(
        self,
        row: np.ndarray,
        level: float = 0.9,
        width: float = 5.0,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]: ...

    def fold_in_predictive(
        self,
        row: np.ndarray,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]: ...

    def interval_multiplier(self, level: float) -> float: ...

    def fold_in_draws(
        self,
        row: np.ndarray,
        n_draws: int = 4000,
        random_state: int = 0,
        level: float = 0.9,
        features: np.ndarray | None = None,
        group: str | None = None,
        noise_sd: np.ndarray | None = None,
    ) -> np.ndarray: ...

    def batch_fold_in(self, values: np.ndarray, n_draws: int | None = None) -> Any: ...

    # a new benchmark (column)
    def placement(
        self,
        values: np.ndarray,
        model_noise: np.ndarray | None = None,
        n_model_samples: int = 5,
        random_state: int = 0,
        new_models: bool = False,
        groups: Sequence[str | None] | None = None,
    ) -> Placement: ...

    # snapshots
    def to_state(self) -> dict[str, Any]: ...

    @classmethod
    def from_state(cls, state: dict[str, Any], values: np.ndarray) -> Completer: ...


def check_side(method: str, supported: frozenset[str], side: dict[str, Any]) -> None:
    """Side information a method does not use is an error, never silently dropped."""
    given = [name for name in SIDE_KEYWORDS if side.get(name) is not None]
    unknown = sorted(set(side) - set(SIDE_KEYWORDS))
    if unknown:
        raise TypeError(f"fit() got unexpected keyword arguments {unknown}")
    unused = [name for name in given if name not in supported]
    if unused:
        raise ValueError(f"{', '.join(unused)} needs method='bayes'")
