"""The default method's snapshot state: plain JSON-able data and back (no pickle).

Layouts, told apart by `state_version` (with `"method": "bayes"`):
- 2: the posterior draws of the benchmark side, the transform and the noise scales.
- 3: as 2, plus each column's chance floor and valid range (`transform_floor`,
  `transform_lower`, `transform_upper`; open ends as null) and the model families of the fit
  (`model_groups` with the `model_group_mean` / `model_group_precision` arrays, each fitted
  model's family `model_row_groups` and standardised features `model_features`, and the
  features a new model is assumed to have, `new_model_features`). Written by every new fit;
  state 2 still loads (floor 0, percent columns 0-100, no families).
- 4: as 3, plus the asymptotes of the percent links where they bend (`link_prior` > 0, the
  default: `transform_link_low` / `transform_link_high`) and the fold-in calibration's table
  for new releases (`release_factors`). States 2 and 3 load with the plain logit between
  floor and 100 (their fits had no other link) and one calibration table.
- 5: as 4, plus how the fitted models' standardised features follow their vectors
  (`feature_regression`: `alpha`, `beta`, `sigma` per kept draw), the prior of a release date
  a fold-in infers from the scores. States 2-4 load without it (an independent N(0, 1) prior).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from predictor.methods.bayesian_fitted import FittedBayesian
from predictor.methods.common import finite_or_none, round_state
from predictor.methods.fold_in_calibration import FoldInCalibration
from predictor.transforms import ScaleTransform

# `restore_state` gives back an instance of the class it is handed
Fitted = TypeVar("Fitted", bound=FittedBayesian)

STATE_VERSION = 5
STATE_VERSIONS = (2, 3, 4, 5)
_ARRAYS = (
    "z_pred_",
    "z_var_",
    "model_noise_",
    "benchmark_noise_",
    "mu_",
    "benchmark_params_",
    "benchmark_precision_",
    "model_prior_mean_",
    "model_prior_precision_",
    "feature_mean_",
    "feature_std_",
)
# Arrays of state version 3 (families, fitted models' features); absent from version 2.
_GROUP_ARRAYS = (
    "model_group_mean_",
    "model_group_precision_",
    "model_features_",
    "new_model_features_",
)

# `feature_regression_`: intercept, slopes on the model vector, residual covariance
_REGRESSION = ("alpha", "beta", "sigma")


def export_state(model: FittedBayesian) -> dict[str, Any]:
    arrays = {}
    for name in _ARRAYS + _GROUP_ARRAYS:
        value = np.asarray(getattr(model, name), dtype=float)
        arrays[name.rstrip("_")] = {"shape": list(value.shape), "data": round_state(value.ravel())}
    floor, lower, upper = model.transform_.ranges()
    calibration = model.fold_in_calibration_
    link = {}
    if float(getattr(model, "link_prior", 0.0)) > 0:
        low, high = model.transform_.link()
        link = {"transform_link_low": round_state(low), "transform_link_high": round_state(high)}
    regression = {}
    if getattr(model, "feature_regression_", None) is not None:
        regression = {
            "feature_regression": {
                name: {"shape": list(value.shape), "data": round_state(value.ravel())}
                for name, value in zip(_REGRESSION, model.feature_regression_, strict=True)
            }
        }
    return {
        "state_version": model.state_version,
        "method": model.method,
        "params": model.get_params(),
        "scales": list(model.transform_.scales),
        "transform_mean": round_state(model.transform_.mean_),
        "transform_std": round_state(model.transform_.std_),
        "transform_floor": round_state(floor),
        "transform_lower": finite_or_none(lower),
        "transform_upper": finite_or_none(upper),
        **link,
        "model_groups": list(model.model_groups_),
        "model_row_groups": list(model.model_row_groups_),
        "new_model_noise": float(f"{model.new_model_noise_:.10g}"),
        "arrays": arrays,
        **regression,
        **({"fold_in_calibration": calibration.as_dict()} if calibration is not None else {}),
    }


def _open_ends(values: list[float | None] | None, fill: float) -> list[float] | None:
    return None if values is None else [fill if v is None else float(v) for v in values]


def restore_state(cls: Callable[..., Fitted], state: dict[str, Any], values: np.ndarray) -> Fitted:
    """A completer equivalent to the exported one; `values` are the fitted observed cells.
    `cls` is the completer class, called with the fit's parameters."""
    if state.get("state_version") not in STATE_VERSIONS:
        raise ValueError(f"unsupported fit state version {state.get('state_version')!r}")
    model = cls(**{"link_prior": 0.0, **state["params"]})  # before state 4: plain links
    model.transform_ = ScaleTransform.restored(
        state["scales"], model.eps, state["transform_mean"], state["transform_std"]
    )
    model.transform_.set_ranges(
        state.get("transform_floor"),
        _open_ends(state.get("transform_lower"), -np.inf),
        _open_ends(state.get("transform_upper"), np.inf),
    )
    model.transform_.set_link(state.get("transform_link_low"), state.get("transform_link_high"))
    for name in _ARRAYS:
        stored = state["arrays"][name.rstrip("_")]
        array = np.asarray(stored["data"], dtype=float).reshape(stored["shape"])
        setattr(model, name, array)
    groups = [str(g) for g in state.get("model_groups", [])]
    model.model_groups_ = groups
    n_rows = model.z_pred_.shape[0]
    rows = state.get("model_row_groups") or [None] * n_rows
    model.model_row_groups_ = [None if g is None else str(g) for g in rows]
    d = model.model_prior_mean_.shape[-1]
    absent = {  # version 2: no families, features not kept
        "model_group_mean_": np.zeros((len(model.mu_), 0, d)),
        "model_group_precision_": model.model_prior_precision_,
        "model_features_": np.zeros((n_rows, len(model.feature_mean_))),
        "new_model_features_": np.zeros(len(model.feature_mean_)),  # the mean model's
    }
    for name in _GROUP_ARRAYS:
        stored = state["arrays"].get(name.rstrip("_"))
        if stored is None:
            array = absent[name]
        else:
            array = np.asarray(stored["data"], dtype=float).reshape(stored["shape"])
        setattr(model, name, array)
    if model.model_group_mean_.shape[1] != len(groups):
        raise ValueError(
            f"fit state: {len(groups)} model families but group means for "
            f"{model.model_group_mean_.shape[1]}"
        )
    model.new_model_noise_ = float(state["new_model_noise"])
    regression = state.get("feature_regression")  # absent before state 5
    model.feature_regression_ = (
        None
        if regression is None
        else tuple(
            np.asarray(regression[name]["data"], dtype=float).reshape(regression[name]["shape"])
            for name in _REGRESSION
        )
    )
    calibration = state.get("fold_in_calibration")  # absent in states written before it
    model.fold_in_calibration_ = (
        None if calibration is None else FoldInCalibration.from_dict(calibration)
    )
    model.values_ = np.asarray(values, dtype=float)
    model.observed_ = ~np.isnan(model.values_)
    if model.values_.shape != model.z_pred_.shape:
        raise ValueError(
            f"values has shape {model.values_.shape}, the fit state {model.z_pred_.shape}"
        )
    return model
