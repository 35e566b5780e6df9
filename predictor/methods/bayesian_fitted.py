"""What the default method's helper modules see of a fitted `BayesianCompleter`.

`bayesian_batch`, `bayesian_many`, `bayesian_placement` and `bayesian_state` do parts of the
completer's work and are called by it, so they cannot import the class without an import
circle (`lint-imports` counts `TYPE_CHECKING` imports too). They are typed against this
protocol instead: the parameters, fitted arrays and methods they read or set. It imports
nothing from the `bayesian*` modules.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

import numpy as np

from predictor.methods.fold_in_calibration import FoldInCalibration
from predictor.transforms import ScaleTransform


class FittedBayesian(Protocol):
    """A fitted robust Bayesian completer (`predictor.methods.bayesian.BayesianCompleter`).

    Arrays over the kept posterior draws have S first; d = 1 + rank (a bias and the latent
    factors), f side features, m benchmarks, n fitted models.
    """

    method: ClassVar[str]
    state_version: ClassVar[int]

    # parameters (`get_params`)
    rank: int
    nu: float
    interval_scale: float
    eps: float
    link_prior: float

    # the fitted matrix and its scale
    values_: np.ndarray  # (n, m), NaN = missing
    observed_: np.ndarray  # (n, m)
    transform_: ScaleTransform
    z_pred_: np.ndarray  # (n, m) posterior mean in z-space
    z_var_: np.ndarray  # (n, m) variance of the mean function

    # noise
    model_noise_: np.ndarray  # (n,) E[1 / rho_i]
    benchmark_noise_: np.ndarray  # (m,) E[1 / tau_j]
    new_model_noise_: float  # a typical new model's noise multiplier

    # the benchmark side and the model priors, per kept draw
    mu_: np.ndarray  # (S,)
    benchmark_params_: np.ndarray  # (S, m, d + f)
    benchmark_precision_: np.ndarray  # (S, m)
    model_prior_mean_: np.ndarray  # (S, d)
    model_prior_precision_: np.ndarray  # (S, d, d)

    # side information: features and families
    feature_mean_: np.ndarray  # (f,)
    feature_std_: np.ndarray  # (f,)
    model_features_: np.ndarray  # (n, f) standardised
    new_model_features_: np.ndarray  # (f,) standardised
    feature_regression_: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    model_groups_: list[str]
    model_row_groups_: list[str | None]
    model_group_mean_: np.ndarray  # (S, groups, d)
    model_group_precision_: np.ndarray  # (S, d, d)

    fold_in_calibration_: FoldInCalibration | None

    def get_params(self) -> dict[str, Any]: ...

    def model_prior(self, group: str | None) -> tuple[np.ndarray, np.ndarray]: ...

    def _new_features(self, features: np.ndarray | None) -> np.ndarray: ...

    def _with_latent_prior(
        self, mean: np.ndarray, precision: np.ndarray, latent: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]: ...
