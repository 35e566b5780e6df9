"""Conformal calibration of new-model intervals, by how many scores the new model has.

A new model is folded in from a handful of known scores (`Completer.fold_in`); its
Student-t predictive is slightly conservative there (90% intervals cover about 0.92 with five
known scores, measured in `benchmarks/calibration.py`). Calibration on held-out residuals fixes
that per evidence stratum, so "90%" means 90% for the model in front of the user:

- the fitted models are split into seeded groups; each group is hidden, a completer is fitted
  on the rest, and each hidden model is folded in from k of its scores chosen at random (k in
  `CALIBRATION_KNOWN`); its other cells give normalised residuals |z_true - z_pred| / sd, sd
  the predictive scale the interval uses;
- per stratum of k (`KNOWN_STRATA`) and level of `LEVELS`, the split-conformal quantile of
  those residuals divided by the Student-t quantile is the factor applied to the interval's
  half-width (interpolated between levels, clamped to [0.5, 2]; a stratum with fewer than
  `MIN_RESIDUALS` residuals keeps factor 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from predictor.fit.calibration_cache import cached_calibration, method_identity
from predictor.methods.base import Completer
from predictor.methods.fold_in_calibration import (
    FACTOR_RANGE,
    KNOWN_STRATA,
    LEVELS,
    MIN_RESIDUALS,
    FoldInCalibration,
)
from predictor.methods.registry import default_completer
from predictor.util.progress import Progress, no_progress

__all__ = [
    "CALIBRATION_KNOWN",
    "CALIBRATION_REPEATS",
    "FACTOR_RANGE",
    "KNOWN_STRATA",
    "LEVELS",
    "MIN_RESIDUALS",
    "FoldInCalibration",
    "calibrate_fold_in",
    "conformal_quantile",
    "fold_in_residuals",
    "held_out_models",
    "hide_models",
    "reveal_scores",
]

# known scores drawn for the calibration fold-ins: several per stratum of `KNOWN_STRATA`
CALIBRATION_KNOWN = (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 30)
# seeded partitions of the models into held-out groups (each model held out once per one)
CALIBRATION_REPEATS = 1
CALIBRATION_SPLITS = 8


def conformal_quantile(scores: np.ndarray, level: float) -> float:
    """Split-conformal quantile: the ceil((n + 1) * level)-th smallest score."""
    ordered = np.sort(np.asarray(scores, dtype=float))
    rank = min(len(ordered), math.ceil((len(ordered) + 1) * level))
    return float(ordered[rank - 1])


def reveal_scores(
    values: np.ndarray, i: int, cells: np.ndarray, k: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray] | None:
    """Model i as a new model known by k of its `cells` (its observed columns in increasing
    order, as `np.flatnonzero` gives them) drawn at random: (its row with only those, the
    cells left to score, in order); None when fewer than 3 would be left (no draw made)."""
    if len(cells) < k + 3:
        return None
    revealed = rng.choice(cells, k, replace=False)
    row = np.full(values.shape[1], np.nan)
    row[revealed] = values[i, revealed]
    left = np.ones(values.shape[1], dtype=bool)
    left[revealed] = False
    return row, cells[left[cells]]


def hide_models(values: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """`values` with the models in `inside` hidden, for a fit that must not see them.

    A column observed only by hidden models keeps those cells: it could not be fitted at all
    otherwise (those rare columns are then scored slightly in-sample)."""
    observed = np.isfinite(values)
    train = values.copy()
    train[np.ix_(inside, observed[~inside].sum(axis=0) > 0)] = np.nan
    return train


def held_out_models(
    values: np.ndarray,
    scales: Sequence[str],
    make_completer: Callable[[], Completer],
    n_splits: int,
    rng: np.random.Generator,
    fit_kwargs: dict[str, Any] | None = None,
) -> Iterator[tuple[np.ndarray, Completer]]:
    """(models of the group, completer fitted without them) for each of `n_splits` groups.

    The groups are a permutation drawn from `rng` (seeded by the caller), so calibration,
    probe selection and the benchmarks hold models out the same way. `fit_kwargs` (side
    information: floors, families, ...) go to every fit, as to the fit being calibrated."""
    group = rng.permutation(values.shape[0]) % n_splits
    for g in range(n_splits):
        inside = group == g
        train = hide_models(values, inside)
        yield inside, make_completer().fit(train, scales, **(fit_kwargs or {}))


def fold_in_residuals(
    values: np.ndarray,
    scales: Sequence[str],
    make_completer: Callable[[], Completer],
    n_splits: int = 4,
    known: Sequence[int] = CALIBRATION_KNOWN,
    random_state: int = 0,
    fit_kwargs: dict[str, Any] | None = None,
    n_repeats: int = 1,
    progress: Progress | None = None,
) -> dict[str, dict[int, np.ndarray]]:
    """Normalised fold-in residuals of held-out models, keyed by the number of known scores:
    under "side" folded in with their release date (the `row_features` row of `fit_kwargs`)
    and family (`row_groups`), as a described new model of the snapshot is, `n_repeats`
    seeded partitions of the models (each model held out once per partition); under
    "release" (only when the fit has release dates) the same models and revealed scores
    folded in with their family but an unknown date, inferred from the probes, as a model
    nobody dated is (`BenchPress.predict` without a known name or a date). `progress` is
    called with ("calibration fits", g, groups) after each held-out fit and
    ("calibration fold-ins", g, groups) after its fold-ins."""
    values = np.asarray(values, dtype=float)
    rng = np.random.default_rng(random_state)
    observed = np.isfinite(values)
    kwargs = fit_kwargs or {}
    features = kwargs.get("row_features")
    if features is not None:
        features = np.asarray(features, dtype=float).reshape(values.shape[0], -1)
    families = kwargs.get("row_groups")
    modes = ["side"] + (["release"] if features is not None and features.shape[1] == 1 else [])
    out: dict[str, dict[int, list[np.ndarray]]] = {mode: {k: [] for k in known} for mode in modes}
    report = progress or no_progress
    for repeat in range(n_repeats):
        fits = held_out_models(values, scales, make_completer, n_splits, rng, kwargs)
        for g, (inside, completer) in enumerate(fits, start=repeat * n_splits + 1):
            report("calibration fits", g, n_repeats * n_splits)
            z_all = completer.transform_.transform(np.where(observed, values, 50.0))
            # the draws first, in the order of the models and of k (the seeded stream), then
            # every fold-in of one k at once (`fold_in_predictive_many` where the method has it)
            drawn: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {k: [] for k in known}
            for i in np.flatnonzero(inside):
                cells = np.flatnonzero(observed[i])
                for k in known:
                    if (revealed := reveal_scores(values, i, cells, k, rng)) is not None:
                        drawn[k].append((i, *revealed))
            for k, models in drawn.items():
                if not models:
                    continue
                which = np.array([i for i, _, _ in models])
                rows = np.array([row for _, row, _ in models])
                groups = None if families is None else [families[i] for i in which]
                for mode in modes:
                    about = None
                    if features is not None:
                        about = (
                            features[which]
                            if mode == "side"
                            else np.full_like(features[which], np.nan)
                        )
                    z_mean, sd = _fold_in_many(completer, rows, about, groups)
                    for (i, _, hidden), z_row, sd_row in zip(models, z_mean, sd, strict=True):
                        residual = np.abs(z_all[i, hidden] - z_row[hidden]) / sd_row[hidden]
                        out[mode][k].append(residual)
            report("calibration fold-ins", g, n_repeats * n_splits)
    return {
        mode: {k: np.concatenate(v) for k, v in by_k.items() if v} for mode, by_k in out.items()
    }


def _fold_in_many(
    completer: Completer,
    rows: np.ndarray,
    features: np.ndarray | None,
    groups: Sequence[str | None] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """`fold_in_predictive` of each row: (mean, scale) (rows, m), in one batch where the
    method can (`BayesianCompleter.fold_in_predictive_many`)."""
    many = getattr(completer, "fold_in_predictive_many", None)
    if many is not None:
        return many(rows, features=features, groups=groups)
    pairs = [
        completer.fold_in_predictive(
            row,
            features=None if features is None else features[t],
            group=None if groups is None else groups[t],
        )
        for t, row in enumerate(rows)
    ]
    return np.array([z for z, _ in pairs]), np.array([sd for _, sd in pairs])


def _factor_table(
    residuals: dict[int, np.ndarray], template: Completer
) -> tuple[tuple[tuple[float, ...], ...], tuple[int, ...]]:
    """Per stratum of known scores, the conformal factor at every level (1 where too few)."""
    by_stratum: list[list[np.ndarray]] = [[] for _ in range(len(KNOWN_STRATA) + 1)]
    for k, r in residuals.items():
        by_stratum[int(np.searchsorted(np.asarray(KNOWN_STRATA), k, side="left"))].append(r)
    factors, counts = [], []
    for parts in by_stratum:
        scores = np.concatenate(parts) if parts else np.empty(0)
        counts.append(len(scores))
        if len(scores) < MIN_RESIDUALS:
            factors.append(tuple(1.0 for _ in LEVELS))
            continue
        factors.append(
            tuple(
                float(
                    np.clip(
                        conformal_quantile(scores, lv) / template.interval_multiplier(lv),
                        *FACTOR_RANGE,
                    )
                )
                for lv in LEVELS
            )
        )
    return tuple(factors), tuple(counts)


def calibrate_fold_in(
    values: np.ndarray,
    scales: Sequence[str],
    make_completer: Callable[[], Completer] = default_completer,
    n_splits: int = CALIBRATION_SPLITS,
    random_state: int = 0,
    fit_kwargs: dict[str, Any] | None = None,
    n_repeats: int = CALIBRATION_REPEATS,
    progress: Progress | None = None,
) -> FoldInCalibration:
    """Factors for `Completer.fold_in_interval` from held-out models of `values`;
    `fit_kwargs`: the side information the calibrated fit was given. Computed once per
    distinct input when `BENCHPRESS_CALIBRATION_CACHE` names a folder
    (`predictor.fit.calibration_cache`). `progress` (`predictor.util.progress`) hears of each
    held-out group (not part of the cache key; nothing is reported on a cache hit)."""
    values = np.asarray(values, dtype=float)
    template = make_completer()
    inputs = {
        "values": values,
        "scales": list(scales),
        "method": method_identity(template),
        "n_splits": n_splits,
        "random_state": random_state,
        "fit_kwargs": fit_kwargs or {},
        "n_repeats": n_repeats,
        "known": CALIBRATION_KNOWN,
        "unknown_date": "inferred",  # the "release" table: dates inferred from the probes
    }

    def compute() -> FoldInCalibration:
        return _calibration(
            values,
            scales,
            make_completer,
            template,
            n_splits,
            random_state,
            fit_kwargs,
            n_repeats,
            progress,
        )

    return cached_calibration(inputs, compute)


def _calibration(
    values: np.ndarray,
    scales: Sequence[str],
    make_completer: Callable[[], Completer],
    template: Completer,
    n_splits: int,
    random_state: int,
    fit_kwargs: dict[str, Any] | None,
    n_repeats: int,
    progress: Progress | None = None,
) -> FoldInCalibration:
    residuals = fold_in_residuals(
        values,
        scales,
        make_completer,
        n_splits,
        random_state=random_state,
        fit_kwargs=fit_kwargs,
        n_repeats=n_repeats,
        progress=progress,
    )
    factors, counts = _factor_table(residuals["side"], template)
    if "release" not in residuals:
        return FoldInCalibration(factors, counts)
    release, release_counts = _factor_table(residuals["release"], template)
    return FoldInCalibration(
        factors, counts, release_factors=release, release_residuals=release_counts
    )
