"""Serialise a fitted LowRankCompleter to plain JSON-able data and back (no pickle).

Published snapshots carry this state so a consumer can fold a new model in against the fitted
benchmark factors, and get intervals, without refitting. Floats are rounded to 10 significant
digits so tiny BLAS-order differences between machines do not change a snapshot's hash.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from predictor.completion import LowRankCompleter
from predictor.transforms import ScaleTransform

STATE_VERSION = 1
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


def _round(array: np.ndarray) -> list[Any]:
    return (
        np.vectorize(lambda x: float(f"{x:.10g}"), otypes=[float])(array).tolist()
        if array.size
        else []
    )


def export_state(model: LowRankCompleter) -> dict[str, Any]:
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


def restore_state(state: dict[str, Any], values: np.ndarray) -> LowRankCompleter:
    """A completer equivalent to the exported one; `values` are the fitted observed cells."""
    if state.get("state_version") != STATE_VERSION:
        raise ValueError(f"unsupported fit state version {state.get('state_version')!r}")
    model = LowRankCompleter(**state["params"])
    transform = ScaleTransform(state["scales"], eps=model.eps)
    transform.is_percent_ = np.array([s == "percent" for s in state["scales"]], dtype=bool)
    transform.mean_ = np.asarray(state["transform_mean"], dtype=float)
    transform.std_ = np.asarray(state["transform_std"], dtype=float)
    model.transform_ = transform
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
