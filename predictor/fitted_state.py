"""Serialise a fitted completer to plain JSON-able data and back (no pickle).

Published snapshots carry this state so a consumer can fold a new model in against the fitted
benchmark parameters, and get intervals, without refitting. Floats are rounded to 10
significant digits so tiny BLAS-order differences between machines do not change a snapshot's
hash.

Layouts, told apart by `state_version`:
- 1: `LowRankCompleter` (the BenchPress reference recipe); unchanged since the first snapshot.
- 2: `BayesianCompleter` (the default method), with `"method": "bayes"`.
- 3: as 2, plus each column's chance floor and valid range (`transform_floor`,
  `transform_lower`, `transform_upper`; open ends as null) and the model families of the fit
  (`model_groups` with the `model_group_mean` / `model_group_precision` arrays, each fitted
  model's family `model_row_groups` and standardised features `model_features`, and the
  features a new model is assumed to have, `new_model_features`). Written by
  every new fit; an older reader refuses it (rather than predicting without the floors), and
  states 1 and 2 still load (floor 0, percent columns 0-100, no families).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from predictor.calibration import FoldInCalibration
from predictor.completion import LowRankCompleter
from predictor.methods.bayesian import BayesianCompleter
from predictor.transforms import ScaleTransform

STATE_VERSION = 1
BAYES_STATE_VERSION = 3
_BAYES_STATE_VERSIONS = (2, 3)
_PARAMS = (
    "rank",
    "alpha",
    "n_iter",
    "n_seeds",
    "random_state",
    "cv_folds",
    "interval_prior",
    "eps",
)
_BAYES_ARRAYS = (
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


def _round(array: np.ndarray) -> list[Any]:
    return (
        np.vectorize(lambda x: float(f"{x:.10g}"), otypes=[float])(array).tolist()
        if array.size
        else []
    )


def export_state(model: LowRankCompleter | BayesianCompleter) -> dict[str, Any]:
    if isinstance(model, BayesianCompleter):
        return _export_bayes(model)
    return {
        "state_version": STATE_VERSION,
        "params": {name: getattr(model, name) for name in _PARAMS},
        "scales": list(model.transform_.scales),
        "transform_mean": _round(model.transform_.mean_),
        "transform_std": _round(model.transform_.std_),
        "mu": _round(model.mu_),
        "model_bias": _round(model.model_bias_),
        "benchmark_bias": _round(model.benchmark_bias_),
        "model_factors": _round(model.model_factors_),
        "benchmark_factors": _round(model.benchmark_factors_),
        "cv_abs_residuals": _round(model.cv_abs_residuals_),
        "cv_columns": [int(c) for c in model.cv_columns_],
    }


def _finite_or_none(array: np.ndarray) -> list[float | None]:
    """JSON has no infinity: open ends of a range are written as null."""
    return [float(f"{x:.10g}") if np.isfinite(x) else None for x in np.asarray(array, float)]


def _export_bayes(model: BayesianCompleter) -> dict[str, Any]:
    arrays = {}
    for name in _BAYES_ARRAYS + _GROUP_ARRAYS:
        value = np.asarray(getattr(model, name), dtype=float)
        arrays[name.rstrip("_")] = {"shape": list(value.shape), "data": _round(value.ravel())}
    floor, lower, upper = model.transform_.ranges()
    return {
        "state_version": BAYES_STATE_VERSION,
        "method": "bayes",
        "params": model.get_params(),
        "scales": list(model.transform_.scales),
        "transform_mean": _round(model.transform_.mean_),
        "transform_std": _round(model.transform_.std_),
        "transform_floor": _round(floor),
        "transform_lower": _finite_or_none(lower),
        "transform_upper": _finite_or_none(upper),
        "model_groups": list(getattr(model, "model_groups_", [])),
        "model_row_groups": list(getattr(model, "model_row_groups_", [])),
        "new_model_noise": float(f"{model.new_model_noise_:.10g}"),
        "arrays": arrays,
        **(
            {"fold_in_calibration": calibration.as_dict()}
            if (calibration := getattr(model, "fold_in_calibration_", None)) is not None
            else {}
        ),
    }


def _transform(scales: list[str], eps: float, mean: Any, std: Any) -> ScaleTransform:
    transform = ScaleTransform(scales, eps=eps)
    transform.is_percent_ = np.array([s == "percent" for s in scales], dtype=bool)
    transform.mean_ = np.asarray(mean, dtype=float)
    transform.std_ = np.asarray(std, dtype=float)
    return transform


def _open_ends(values: list[float | None] | None, fill: float) -> list[float] | None:
    return None if values is None else [fill if v is None else float(v) for v in values]


def restore_state(
    state: dict[str, Any], values: np.ndarray
) -> LowRankCompleter | BayesianCompleter:
    """A completer equivalent to the exported one; `values` are the fitted observed cells."""
    version = state.get("state_version")
    if version in _BAYES_STATE_VERSIONS and state.get("method") == "bayes":
        return _restore_bayes(state, values)
    if version != STATE_VERSION:
        raise ValueError(f"unsupported fit state version {version!r}")
    model = LowRankCompleter(**state["params"])
    model.transform_ = _transform(
        state["scales"], model.eps, state["transform_mean"], state["transform_std"]
    )
    model.mu_ = np.asarray(state["mu"], dtype=float)
    model.model_bias_ = np.asarray(state["model_bias"], dtype=float)
    model.benchmark_bias_ = np.asarray(state["benchmark_bias"], dtype=float)
    rank = int(state["params"]["rank"])
    n_seeds = len(model.mu_)
    model.model_factors_ = np.asarray(state["model_factors"], dtype=float).reshape(
        n_seeds, -1, rank
    )
    model.benchmark_factors_ = np.asarray(state["benchmark_factors"], dtype=float).reshape(
        n_seeds, -1, rank
    )
    model.cv_abs_residuals_ = np.asarray(state["cv_abs_residuals"], dtype=float)
    model.cv_columns_ = np.asarray(state["cv_columns"], dtype=int)
    model.z_pred_ = (
        model.mu_[:, None, None]
        + model.model_bias_[:, :, None]
        + model.benchmark_bias_[:, None, :]
        + model.model_factors_ @ model.benchmark_factors_.transpose(0, 2, 1)
    ).mean(axis=0)
    model.values_ = np.asarray(values, dtype=float)
    model.observed_ = ~np.isnan(model.values_)
    return model


def _restore_bayes(state: dict[str, Any], values: np.ndarray) -> BayesianCompleter:
    model = BayesianCompleter(**state["params"])
    model.transform_ = _transform(
        state["scales"], model.eps, state["transform_mean"], state["transform_std"]
    )
    model.transform_.set_ranges(
        state.get("transform_floor"),
        _open_ends(state.get("transform_lower"), -np.inf),
        _open_ends(state.get("transform_upper"), np.inf),
    )
    for name in _BAYES_ARRAYS:
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
