"""Fit the low-rank factorization on the score matrix and measure its structure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from pipelines.identity.registry import Registry, load_registry
from pipelines.stages.side_information import fit_side_information
from pipelines.transforms.matrix import select_for_fit
from predictor.fit.dense import dense_matrix
from predictor.fit.fitting import fit_calibrated
from predictor.methods.base import Completer
from predictor.methods.registry import DEFAULT_METHOD, METHODS, make_completer
from predictor.side_information import SideInformation


@dataclass(frozen=True)
class FitParams:
    """The default method's settings (its defaults) and the fit's matrix selection."""

    rank: int = 4
    n_chains: int = 8
    n_burn: int = 20
    n_samples: int = 20
    random_state: int = 0
    min_per_model: int = 15  # BenchPress's selection: models and benchmarks with enough
    min_per_benchmark: int = 8  # observations to pin their factors down

    def completer(self) -> Completer:
        return make_completer(
            DEFAULT_METHOD,
            rank=self.rank,
            n_chains=self.n_chains,
            n_burn=self.n_burn,
            n_samples=self.n_samples,
            random_state=self.random_state,
        )


def method_label(method: str = DEFAULT_METHOD) -> str | None:
    """`method@state_version` that a fit of `method` records (`predictor.snapshots.reader.
    fitted_method`), known before fitting from the class's `state_version` (what its
    `to_state` writes), for `planned_identity`. None for a method not registered."""
    cls = METHODS.get(method)
    return None if cls is None else f"{method}@{cls.state_version}"


@dataclass
class FitResult:
    model_ids: list[str]
    benchmark_ids: list[str]
    scales: list[str]
    values: np.ndarray
    completer: Completer
    figures: dict[str, Any]
    side: SideInformation | None = None  # what the fit knew besides the scores


def to_dense(
    cells: pl.DataFrame, scale_of: dict[str, str]
) -> tuple[list[str], list[str], list[str], np.ndarray]:
    """Long cells -> (model ids, benchmark ids, scales, values with NaN), sorted for stability."""
    values, model_ids, benchmark_ids = dense_matrix(cells)
    return model_ids, benchmark_ids, [scale_of[b] for b in benchmark_ids], values


def variance_shares(z_filled: np.ndarray, k: int = 3) -> tuple[list[float], list[float]]:
    """Singular values of the column-centred matrix and the share of variance of the top k."""
    centred = z_filled - z_filled.mean(axis=0, keepdims=True)
    singular = np.linalg.svd(centred, compute_uv=False)
    energy = singular**2
    total = float(energy.sum()) or 1.0
    shares = [float(energy[:i].sum() / total) for i in range(1, k + 1)]
    return [float(s) for s in singular], shares


def fit_matrix(
    cells: pl.DataFrame,
    scale_of: dict[str, str],
    params: FitParams,
    registry: Registry | None = None,
    stated: pl.DataFrame | None = None,
) -> FitResult:
    """Fit the default method on the selected matrix with its side information (release
    dates, families, categories and valid ranges from `registry`, default the
    shipped one; `stated`: the release dates the sources state, `stated_dates` of the
    normalized rows) and calibrate its new-model intervals with the same side information."""
    kept = select_for_fit(cells, params.min_per_model, params.min_per_benchmark)
    if kept.height == 0:
        raise ValueError(
            "no model/benchmark meets the minimum observation counts "
            f"({params.min_per_model} per model, {params.min_per_benchmark} per benchmark)"
        )
    model_ids, benchmark_ids, scales, values = to_dense(kept, scale_of)
    side = fit_side_information(
        model_ids, benchmark_ids, cells, registry or load_registry(), stated
    )
    # new-model intervals calibrated on held-out models of this matrix (predictor.fit.calibration)
    completer, _ = fit_calibrated(
        values, scales, params.completer, side, random_state=params.random_state
    )
    calibration = completer.fold_in_calibration_
    observed = ~np.isnan(values)
    z_obs = completer.transform_.transform(values)
    z_filled = np.where(observed, z_obs, completer.z_pred_)
    singular, shares = variance_shares(z_filled)
    fitted = completer.predict(keep_observed=False)
    in_sample = np.abs(fitted[observed] - values[observed])
    figures = {
        "n_models": len(model_ids),
        "n_benchmarks": len(benchmark_ids),
        "n_cells": int(observed.sum()),
        "fill_rate": round(float(observed.mean()), 6),
        "singular_values": [round(s, 6) for s in singular[:10]],
        "variance_share_top1": round(shares[0], 6),
        "variance_share_top2": round(shares[1], 6),
        "variance_share_top3": round(shares[2], 6),
        "in_sample_medae": round(float(np.median(in_sample)), 6),
        "median_benchmark_noise_sd_z": round(float(np.median(completer.noise_scale_z())), 6),
        "fold_in_factor90_by_known": {
            label: round(row[calibration.levels.index(0.9)], 6)
            for label, row in zip(calibration.stratum_labels(), calibration.factors, strict=True)
        },
        "fold_in_calibration_residuals": list(calibration.residuals),
    }
    return FitResult(model_ids, benchmark_ids, scales, values, completer, figures, side)
