"""`FittedMatrix`: what a fitted snapshot offers the modules built on it.

`trust/`, `new_benchmark`, `reference_names` and `drift` work on a loaded snapshot and its
fitted completer. They take this interface, not `predictor.api.BenchPress`: the API imports
them, so naming the class (even for type hints) would close an import circle, and reaching
into its private members would tie them to its internals. `BenchPress` implements it.

Read-only: nothing here changes the snapshot or the fit. Columns follow `fit_benchmarks_`,
rows `fit_models_`; benchmark arguments are ids (resolve names with `resolve_benchmark`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # type hints only: every one of these lies in a layer below this module
    import numpy as np

    from predictor.methods.base import Completer
    from predictor.names.resolve import NameResolver
    from predictor.snapshots.reader import Snapshot
    from predictor.values import Noise, Predictions, SideUsed


@runtime_checkable
class FittedMatrix(Protocol):
    """A snapshot, its fitted completer and the questions its consumers ask of them."""

    # ------------------------------------------------------------ the snapshot
    @property
    def snapshot(self) -> Snapshot:
        """The loaded snapshot: its tables (`models`, `benchmarks`, `cells`) and its fit."""

    @property
    def version(self) -> str:
        """The snapshot's version, for messages."""

    @property
    def manifest(self) -> dict[str, object]:
        """The snapshot's manifest (its `content_hash` identifies its content)."""

    @property
    def models(self) -> list[str]:
        """Every model id of the snapshot, fitted or not."""

    @property
    def resolve_model(self) -> NameResolver:
        """A model name (id, alias, display name) -> its id; unknown names raise."""

    @property
    def resolve_benchmark(self) -> NameResolver:
        """A benchmark name (id, alias, display name) -> its id; unknown names raise."""

    # ------------------------------------------------------------- the fit
    @property
    def fit_models_(self) -> list[str]:
        """The fitted models: the rows of the fitted matrix, in order."""

    @property
    def fit_benchmarks_(self) -> list[str]:
        """The fitted benchmarks: the columns of the fitted matrix, in order."""

    @property
    def fit_columns(self) -> Mapping[str, int]:
        """Fitted benchmark id -> its column; `b in fit_columns` asks whether `b` is fitted."""

    @property
    def completer_(self) -> Completer:
        """The fitted completer (`predictor.methods.base.Completer`): fold-ins, intervals."""

    def observed_values(self, models: Sequence[str], benchmarks: Sequence[str]) -> np.ndarray:
        """The snapshot's observed scores of `models` x `benchmarks` (ids), NaN where none."""

    def scale_of(self, benchmark: str) -> str:
        """A snapshot benchmark's scale: `"percent"` (0-100) or `"unbounded"` (Elo, ...)."""

    def in_range(self, values: np.ndarray) -> np.ndarray:
        """`values` (last axis: the fitted benchmarks) clipped to each one's valid range."""

    def fitted_values(
        self, keep_observed: bool = True, level: float | None = None
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """(mean, low, high) of the fitted models on the fitted benchmarks, in range."""

    # ------------------------------------------------------------ a new model
    def probe_row(
        self, probe_scores: Mapping[str, float], warn_fractions: bool = True
    ) -> np.ndarray:
        """A new model's {benchmark name: score}, checked, as one row over the fitted
        benchmarks (NaN: not given); bad scores raise `ProbeScoreError` saying why."""

    def probe_rows(
        self, probe_scores: Mapping[str, Any], warn_fractions: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """(`probe_row`, each score's standard error over the same benchmarks, NaN where
        none was given): a score may be a `(score, standard_error)` pair."""

    def fold_in_noise(self, row: np.ndarray, stderr: np.ndarray) -> np.ndarray | None:
        """The completer's `noise_sd` for scores given with standard errors (what each
        exceeds a published score's noise by), None when none is noisier."""

    def measurement_noise(self, benchmark: str, score: float, stderr: float | None = None) -> Noise:
        """The noise an observed score is compared with: its standard error, else the
        benchmark's default (`predictor.results.noise`)."""

    def side_for(
        self,
        model: str | None = None,
        family: str | None = None,
        release_date: str | date | datetime | None = None,
        base: str | None = None,
    ) -> tuple[SideUsed, np.ndarray | None, str | None]:
        """The side information a new model is folded in with (`BenchPress.side_for`)."""

    def predict(self, probe_scores: Any, level: float | None = None, **kwargs: Any) -> Predictions:
        """Every fitted benchmark predicted for a new model (`BenchPress.predict`)."""

    @classmethod
    def catalogue(cls) -> FittedMatrix:
        """The catalogue snapshot, where reference models this snapshot lacks are found."""
