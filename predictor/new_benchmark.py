"""Predict a new benchmark for every model from a few models' scores: the transposed fold-in.

`BenchPress.predict` folds a new *model* (a row) in against the fitted benchmark parameters.
Here a new *benchmark* (a column) is folded in against the fitted model parameters. The
default method models z_ij = mu + a_i + b_j + u_i . v_j + noise in a z-scored logit space;
for a new column the unknowns are its bias b and loadings v (w = [b, v]), and each model with
a known score gives one weighted least-squares equation z_i - mu - a_i = [1, u_i] . w.

- Model parameters. A snapshot exports the kept posterior draws of the benchmark side only
  (`benchmark_params_`, ...). Given draw s of those, each fitted model's [a_i, u_i] has the
  Gaussian conditional the Gibbs sampler draws it from (its observed cells, that draw's
  population prior, Student-t reweighting), so `placement` rebuilds the model side of the
  posterior by sampling it, `n_model_samples` times per kept draw. The new column's
  posterior then carries the uncertainty of the model factors, not only of its own loading.
- Prior and noise of the new column, per draw: the distribution of the fitted benchmarks'
  [b_j, v_j] (their mean and covariance across benchmarks; the bias variance widened by
  `BIAS_PRIOR_SCALE`, since a new benchmark's level is unknown) and the median of their noise
  variances; one Student-t reweighting step (`COLUMN_REWEIGHTS`).
- The new column's z-scale: logit for percent scores (as every percent column), centred on
  the known scores' mean, with their spread pooled with `SPREAD_PRIOR_SCORES` pseudo-scores at
  a typical fitted column's (`spread_of`): a few known scores say little about a spread.
- Predictions average over the samples; the variance adds the spread of the samples' means,
  the loading's posterior variance and the noise; the central `level` interval is the
  Student-t(nu) one of the default method, with the half-width scaled by the calibration
  factor for the number of known scores (`interval_factor`, chosen on our own splits; see
  `benchmarks/new_benchmark.py`).

Why at least `MIN_SCORES` (3) scores: the column has a level and a direction in the factor
space to estimate, and its noise is only known from the fitted benchmarks' noise; with two
scores any level-and-slope fits them exactly, so nothing tells signal from noise.

Also here, all from the same samples: P(A > B) for the top models (a mixture over samples of
each one's difference, so models that share the loading's uncertainty are compared jointly,
in `predictor.trust.rankings`' `BenchmarkRanking` form), the public benchmarks whose mean
scores correlate most with the new one's across the models, and which models to run next:
the expected share of the other models' average predictive variance (of the mean function) a
model's score would remove, exact for the Gaussian posterior of each sample (Sherman-Morrison)
and averaged over the samples; it needs no guess of the score itself.
"""

from __future__ import annotations

import math
import warnings
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl

from predictor.fitted_matrix import FittedMatrix
from predictor.methods.base import Completer, Placement
from predictor.methods.common import check_level, student_t_cdf, student_t_quantile
from predictor.names.resolve import AmbiguousNameError, UnknownNameError
from predictor.reference_names import ReferenceModel, resolve_reference
from predictor.trust.rankings import BenchmarkRanking, Comparison, Entry, tie_groups
from predictor.util.fraction_scores import beside_percent_messages, split_fractions
from predictor.values import FractionScoresWarning, ProbeScoreError, split_measured

MIN_SCORES = 3
SCALES = ("percent", "unbounded")
# Samples of the model parameters per kept draw of the benchmark parameters.
N_MODEL_SAMPLES = 5
# Student-t reweighting steps fitting the new column (one: a few known scores are too few to
# tell an outlier from the rest).
COLUMN_REWEIGHTS = 1
# The bias prior's variance is the fitted benchmarks' spread of biases times this: a new
# benchmark may sit anywhere (the known models' mean already centres it).
BIAS_PRIOR_SCALE = 100.0
# Interval half-width factor by number of known scores (3, 5, 10, 20+; interpolated in
# log k): the 90% quantile of the standardised errors on our own draws 1000-1009 of the
# protocol of benchmarks/new_benchmark.py (never the draws it reports).
INTERVAL_FACTORS = ((3, 1.13), (5, 1.04), (10, 0.94), (20, 0.90))
# Pseudo-scores at a typical fitted column's spread pooled with the known scores' spread.
SPREAD_PRIOR_SCORES = 4.0
_EPS = 0.005  # percent -> logit clip, as the fitted columns'
_MAX_LOGIT = 30.0
_NORMAL = NormalDist()


# ----------------------------------------------------------------------------- placement
def placement(
    completer: Completer,
    values: np.ndarray,
    model_noise: np.ndarray | None = None,
    n_model_samples: int = N_MODEL_SAMPLES,
    random_state: int = 0,
    new_models: bool = False,
    groups: Sequence[str | None] | None = None,
) -> Placement:
    """The models of `values` (rows x the completer's fitted benchmarks, NaN = unknown) placed
    against a fitted completer (`Completer.placement`): the default method's draws (sampled
    model side), the recipe ALS's seeds (no factor uncertainty).

    `model_noise`: each row's noise multiplier (default: the completer's own for its fitted
    rows when `values` has as many rows, else a typical new model's; `new_models`: always a
    typical new model's); `groups`: each row's family (its prior, when the fit knows it)."""
    return completer.placement(
        values, model_noise, n_model_samples, random_state, new_models, groups
    )


# ---------------------------------------------------------------------------- the column
@dataclass(frozen=True)
class ColumnScale:
    """The new column's z-scale: z = (warp(score) - center) / spread, warp = logit(p / 100)
    (clipped as the fitted columns are) for percent scores, the identity otherwise."""

    percent: bool
    center: float
    spread: float

    def warp(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        if not self.percent:
            return values
        p = np.clip(values / 100.0, _EPS, 1.0 - _EPS)
        return np.log(p / (1.0 - p))

    def to_z(self, values: np.ndarray) -> np.ndarray:
        return (self.warp(values) - self.center) / self.spread

    def slope(self, values: np.ndarray) -> np.ndarray:
        """dz / dscore at `values`: what turns a score's standard error into z (the delta
        rule; flat past the logit clip, where the fitted columns' scores stop moving)."""
        values = np.asarray(values, dtype=float)
        if not self.percent:
            return np.full(values.shape, 1.0 / self.spread)
        p = values / 100.0
        inside = (p > _EPS) & (p < 1.0 - _EPS)
        q = np.clip(p, _EPS, 1.0 - _EPS)
        return np.where(inside, 1.0 / (100.0 * q * (1.0 - q) * self.spread), 0.0)

    def to_units(self, z: np.ndarray) -> np.ndarray:
        warped = np.asarray(z, dtype=float) * self.spread + self.center
        if not self.percent:
            return warped
        return 100.0 / (1.0 + np.exp(-np.clip(warped, -_MAX_LOGIT, _MAX_LOGIT)))


def spread_of(place: Placement, percent: bool, warped_known: np.ndarray) -> float:
    """The new column's spread (its z-scale in logit units for percent scores).

    Percent: the known scores' variance pooled with SPREAD_PRIOR_SCORES pseudo-scores at the
    median variance of the fitted percent columns (logit units are comparable across percent
    benchmarks, and three scores alone say little about a spread). Open scales (Elo, dollars:
    units differ per benchmark): the known scores' own spread."""
    k = len(warped_known)
    sample_var = float(np.var(warped_known, ddof=1)) if k > 1 else 0.0
    kind = place.percent == percent
    if percent and kind.any():
        typical = float(np.median(place.spread[kind])) ** 2
        pooled = (SPREAD_PRIOR_SCORES * typical + (k - 1) * sample_var) / (
            SPREAD_PRIOR_SCORES + k - 1
        )
        return math.sqrt(pooled)
    spread = math.sqrt(sample_var)
    return spread if spread > 1e-9 else max(1.0, abs(float(np.mean(warped_known))) * 1e-3)


def column_scale(place: Placement, known: np.ndarray, percent: bool) -> ColumnScale:
    """The z-scale of a new column with these known scores (see `spread_of`)."""
    scale = ColumnScale(percent, 0.0, 1.0)
    warped = scale.warp(known)
    return ColumnScale(percent, float(np.mean(warped)), spread_of(place, percent, warped))


@dataclass(frozen=True)
class ColumnPosterior:
    """Per sample r: the new column's w = [b, v] posterior mean (R, d) and covariance
    (R, d, d), and its noise variance (R,) in z units."""

    mean: np.ndarray
    cov: np.ndarray
    noise: np.ndarray


def _column_prior(place: Placement) -> tuple[np.ndarray, np.ndarray]:
    """Per benchmark draw: mean (S, d) and precision (S, d, d) of a benchmark's [b, v], from
    the fitted benchmarks' spread (bias variance widened by BIAS_PRIOR_SCALE)."""
    params = place.benchmark_params  # (S, m, d)
    mean = params.mean(axis=1)
    centred = params - mean[:, None]
    cov = np.swapaxes(centred, 1, 2) @ centred / max(params.shape[1] - 1, 1)
    cov[:, 0, 0] *= BIAS_PRIOR_SCALE
    cov += 1e-6 * np.eye(params.shape[2])
    return mean, np.linalg.inv(cov)


def fold_in_column(
    place: Placement, z_known: np.ndarray, z_noise_var: np.ndarray | None = None
) -> ColumnPosterior:
    """The new column's posterior given z-scores of some models (`z_known` (n,), NaN =
    unknown), per sample: Gaussian in w, Student-t reweighted. `z_noise_var` (n,): each
    score's own measurement variance in z (a standard error given with it), added to the
    column's noise so a noisy score pulls the column less."""
    known = np.isfinite(z_known)
    extra = 0.0 if z_noise_var is None else np.nan_to_num(z_noise_var[known])[None]
    draw = place.draw
    prior_mean, prior_prec = _column_prior(place)
    prior_mean, prior_prec = prior_mean[draw], prior_prec[draw]
    prior_shift = (prior_prec @ prior_mean[..., None])[..., 0]
    noise = np.median(place.benchmark_noise, axis=1)[draw]  # (R,)
    x = place.design[:, known]  # (R, k, d)
    target = z_known[known][None] - place.offset[:, known]  # (R, k)
    base = 1.0 / (noise[:, None] * place.model_noise[known][None] + extra)
    weight = base
    for step in range(COLUMN_REWEIGHTS + 1):
        wx = x * weight[..., None]
        precision = prior_prec + np.swapaxes(wx, 1, 2) @ x
        shift = prior_shift + (np.swapaxes(wx, 1, 2) @ target[..., None])[..., 0]
        mean = np.linalg.solve(precision, shift[..., None])[..., 0]
        if step < COLUMN_REWEIGHTS:
            resid = target - (x @ mean[..., None])[..., 0]
            weight = base * (place.nu + 1.0) / (place.nu + base * resid**2)
    return ColumnPosterior(mean, np.linalg.inv(precision), noise)


@dataclass(frozen=True)
class ColumnPredictive:
    """Per model: predictive mean (z), variance of the mean function, and noise variance."""

    mean: np.ndarray
    param_var: np.ndarray
    noise_var: np.ndarray
    sample_mean: np.ndarray  # (R, n): each sample's mean function

    @property
    def var(self) -> np.ndarray:
        return self.param_var + self.noise_var


def column_predictive(place: Placement, post: ColumnPosterior) -> ColumnPredictive:
    """Every model's predictive for the new column, averaged over the samples."""
    sample_mean = place.offset + (place.design @ post.mean[..., None])[..., 0]  # (R, n)
    within = np.einsum("rnd,rde,rne->rn", place.design, post.cov, place.design)
    param_var = sample_mean.var(axis=0) + within.mean(axis=0)
    noise_var = float(post.noise.mean()) * place.model_noise
    return ColumnPredictive(sample_mean.mean(axis=0), param_var, noise_var, sample_mean)


def interval_factor(n_known: int) -> float:
    """Calibration factor of the half-width for `n_known` scores (INTERVAL_FACTORS)."""
    ks = np.log([k for k, _ in INTERVAL_FACTORS])
    factors = [f for _, f in INTERVAL_FACTORS]
    return float(np.interp(math.log(max(n_known, 1)), ks, factors))


def half_width(place: Placement, var: np.ndarray, level: float, n_known: int) -> np.ndarray:
    """Half-width in z of the central `level` interval (Student-t(nu), calibrated)."""
    q = student_t_quantile(0.5 + check_level(level) / 2.0, place.nu)
    return place.interval_scale * interval_factor(n_known) * q * np.sqrt(var)


# ------------------------------------------------------------------------------ answers
@dataclass(frozen=True)
class ColumnFit:
    """A new column folded in: its scale, posterior, predictive and what was known."""

    scale: ColumnScale
    posterior: ColumnPosterior
    predictive: ColumnPredictive
    known: np.ndarray  # (n,) bool
    values: np.ndarray  # (n,) the known scores (NaN elsewhere)


def fit_column(
    place: Placement, values: np.ndarray, percent: bool, stderr: np.ndarray | None = None
) -> ColumnFit:
    """Fold a new column with these known scores (`values` (n,), NaN = unknown) in;
    `stderr` (n,, NaN = exact): each score's standard error in its units."""
    values = np.asarray(values, dtype=float)
    known = np.isfinite(values)
    if known.sum() < MIN_SCORES:
        raise ValueError(f"a new benchmark needs at least {MIN_SCORES} known scores")
    scale = column_scale(place, values[known], percent)
    filled = np.where(known, values, 50.0)
    z_known = np.where(known, scale.to_z(filled), np.nan)
    z_noise_var = None if stderr is None else (np.asarray(stderr) * scale.slope(filled)) ** 2
    post = fold_in_column(place, z_known, z_noise_var)
    return ColumnFit(scale, post, column_predictive(place, post), known, values)


def column_intervals(
    place: Placement, fit: ColumnFit, level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(predicted, lower, upper) in the benchmark's units; known scores as given."""
    pred = fit.predictive
    half = half_width(place, pred.var, level, int(fit.known.sum()))
    mean = fit.scale.to_units(pred.mean)
    low, high = fit.scale.to_units(pred.mean - half), fit.scale.to_units(pred.mean + half)
    k = fit.known
    return (
        np.where(k, fit.values, mean),
        np.where(k, fit.values, np.minimum(low, mean)),
        np.where(k, fit.values, np.maximum(high, mean)),
    )


PREDICTION_SCHEMA = {
    "model_id": pl.String,
    "name": pl.String,
    "predicted": pl.Float64,
    "lower": pl.Float64,
    "upper": pl.Float64,
    "level": pl.Float64,
    "observed": pl.Boolean,
    "rank": pl.Int64,
}


def predictions_table(
    model_ids: Sequence[str],
    names: Sequence[str],
    predicted: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    observed: np.ndarray,
    level: float,
) -> pl.DataFrame:
    """Tidy rows, best predicted first (ties by model id); rank 1 = highest score."""
    frame = pl.DataFrame(
        {
            "model_id": list(model_ids),
            "name": list(names),
            "predicted": np.asarray(predicted, dtype=float),
            "lower": np.asarray(lower, dtype=float),
            "upper": np.asarray(upper, dtype=float),
            "level": np.full(len(model_ids), float(level)),
            "observed": np.asarray(observed, dtype=bool),
        }
    ).sort(["predicted", "model_id"], descending=[True, False])
    return frame.with_columns(pl.int_range(1, frame.height + 1, dtype=pl.Int64).alias("rank"))


def p_better_pairs(
    place: Placement, fit: ColumnFit, rows: Sequence[int]
) -> dict[tuple[int, int], float]:
    """P(model a scores above model b) for every ordered pair of `rows`, jointly over the
    samples: a mixture over the samples of each one's difference (the shared loading moves
    every model together), noise included, read with the intervals' Student-t tails and
    calibration factor; a known score is fixed."""
    rows = list(rows)
    post, pred = fit.posterior, fit.predictive
    known = fit.known
    z_known = np.where(known, fit.scale.to_z(np.where(known, fit.values, 50.0)), 0.0)
    x = place.design[:, rows]  # (R, t, d)
    mean = pred.sample_mean[:, rows]  # (R, t)
    noise = pred.noise_var[rows]
    fixed = known[rows]
    x = np.where(fixed[None, :, None], 0.0, x)
    mean = np.where(fixed[None], z_known[rows][None], mean)
    noise = np.where(fixed, 0.0, noise)
    diff = mean[:, :, None] - mean[:, None, :]  # (R, t, t)
    dx = x[:, :, None, :] - x[:, None, :, :]  # (R, t, t, d)
    var = np.einsum("rabd,rde,rabe->rab", dx, post.cov, dx) + noise[:, None] + noise[None, :]
    sd = np.sqrt(np.maximum(var, 1e-18))
    scale = place.interval_scale * interval_factor(int(known.sum()))
    p = student_t_cdf(diff / (scale * sd), place.nu).mean(axis=0)  # the intervals' tails
    return {
        (a, b): float(p[s, t]) for s, a in enumerate(rows) for t, b in enumerate(rows) if a != b
    }


def ranking(
    name: str,
    frame: pl.DataFrame,
    pairs: dict[tuple[int, int], float],
    index: dict[str, int],
    level: float,
) -> Comparison:
    """The top rows of `frame` (predictions) as a `Comparison` of one benchmark: predicted
    order with P(A > B) and tie groups (`predictor.trust.rankings`)."""
    z = _NORMAL.inv_cdf(0.5 + level / 2.0)  # sd as `rankings.sd_of` reads an interval
    order = [
        Entry(
            r["model_id"],
            r["predicted"],
            (r["upper"] - r["lower"]) / 2.0 / z,
            r["lower"],
            r["upper"],
            r["observed"],
        )
        for r in frame.iter_rows(named=True)
    ]
    pm = {
        (a.name, b.name): pairs[(index[a.name], index[b.name])]
        for a in order
        for b in order
        if a.name != b.name
    }
    return Comparison([BenchmarkRanking(name, True, order, tie_groups(order, pm), pm)], level)


SIMILAR_SCHEMA = {
    "rank": pl.Int64,
    "benchmark_id": pl.String,
    "name": pl.String,
    "correlation": pl.Float64,
    "n_models": pl.Int64,
}


def similar_benchmarks(
    place: Placement,
    fit: ColumnFit,
    rows: np.ndarray,
    benchmark_ids: Sequence[str],
    names: Sequence[str],
    n_models: Sequence[int],
    top: int | None = 10,
    random_state: int = 0,
) -> pl.DataFrame:
    """Public benchmarks that behave most like the new one: the posterior mean, over the
    samples, of the correlation across the models `rows` of the two benchmarks' mean
    scores (z-space, noise left out). With sample r's model parameters [a_i, u_i] of
    covariance C over the models, a benchmark's mean score is [a_i, u_i] . [1, v] plus a
    constant, so r = g' C g_new / sqrt(g' C g . g_new' C g_new), g = [1, v]; the new
    benchmark's v is drawn from its posterior (seeded), so an uncertain loading correlates
    less with everything, as it should, and so does a sparse public benchmark's.
    `n_models`: how many models report each public benchmark (shown, to judge a match by)."""
    rows = np.asarray(rows, dtype=int)
    post = fit.posterior
    theta = np.concatenate([place.offset[:, rows, None], place.design[:, rows, 1:]], axis=2)
    centred = theta - theta.mean(axis=1, keepdims=True)
    cov = np.swapaxes(centred, 1, 2) @ centred / max(len(rows) - 1, 1)  # (R, d, d)
    rng = np.random.default_rng(np.random.SeedSequence(int(random_state)))
    chol = np.linalg.cholesky((post.cov + np.swapaxes(post.cov, 1, 2)) / 2.0)
    w_new = post.mean + (chol @ rng.standard_normal(post.mean.shape + (1,)))[..., 0]
    g_new = np.concatenate([np.ones((len(w_new), 1)), w_new[:, 1:]], axis=1)  # (R, d)
    params = place.benchmark_params[place.draw]  # (R, m, d)
    g = np.concatenate([np.ones(params.shape[:2] + (1,)), params[..., 1:]], axis=2)
    gc = g @ cov  # (R, m, d)
    cross = (gc @ g_new[..., None])[..., 0]  # (R, m)
    own = np.einsum("rmd,rmd->rm", gc, g)
    new = np.einsum("rd,rde,re->r", g_new, cov, g_new)
    r = (cross / np.sqrt(np.maximum(own * new[:, None], 1e-300))).mean(axis=0)
    frame = pl.DataFrame(
        {
            "benchmark_id": list(benchmark_ids),
            "name": list(names),
            "correlation": r,
            "n_models": np.asarray(n_models, dtype=np.int64),
        }
    ).sort(["correlation", "benchmark_id"], descending=[True, False])
    frame = frame if top is None else frame.head(top)
    return frame.with_columns(
        pl.int_range(1, frame.height + 1, dtype=pl.Int64).alias("rank")
    ).select(list(SIMILAR_SCHEMA))


NEXT_SCHEMA = {
    "rank": pl.Int64,
    "model_id": pl.String,
    "name": pl.String,
    "predicted": pl.Float64,
    "variance_reduction": pl.Float64,
    "width_before": pl.Float64,
    "width_after": pl.Float64,
}


def next_models(
    place: Placement,
    fit: ColumnFit,
    model_ids: Sequence[str],
    names: Sequence[str],
    predicted: np.ndarray,
    level: float,
    top: int | None = 5,
) -> pl.DataFrame:
    """Unknown models ranked by the expected share of the other unknown models' average
    mean-function variance their score would remove (see the module docstring); widths are
    the mean `level` interval width of those others before and after, in the unit.

    Per sample, with posterior covariance P of w and a candidate c of design x_c and noise
    weight h_c, the variance of model i drops by h_c (x_c' P x_i)^2 / (1 + h_c x_c' P x_c);
    summed over every i this is h_c x_c' P X'X P x_c / (1 + ...), so ranking every candidate
    costs one d x d product per sample, and only the top rows get per-model widths."""
    post, pred = fit.posterior, fit.predictive
    unknown = np.flatnonzero(~fit.known)
    others = len(unknown) - 1
    if others < 1:
        return pl.DataFrame(schema=NEXT_SCHEMA)
    x = place.design[:, unknown]  # (R, u, d)
    px = x @ post.cov  # (R, u, d): P x_c
    own = np.einsum("rcd,rcd->rc", px, x)  # x_c' P x_c
    gram = np.swapaxes(x, 1, 2) @ x  # (R, d, d): X'X over the unknown models
    spread = np.einsum("rcd,rde,rce->rc", px, gram, px)  # sum_i (x_c' P x_i)^2
    weight = 1.0 / (post.noise[:, None] * place.model_noise[unknown][None])  # (R, c)
    gain = weight / (1.0 + weight * own)  # (R, c)
    removed = (gain * (spread - own**2)).mean(axis=0)  # over the others (i != c)
    var_before = pred.param_var[unknown]
    before_others = (var_before.sum() - var_before) / others
    share = removed / others / np.maximum(before_others, 1e-18)
    order = sorted(range(len(unknown)), key=lambda c: (-share[c], model_ids[unknown[c]]))
    chosen = np.array(order if top is None else order[:top], dtype=int)
    n_known = int(fit.known.sum())
    mean = pred.mean[unknown]
    noise = pred.noise_var[unknown]
    width = _widths(place, fit, mean, var_before + noise, level, n_known)
    cross = px[:, chosen] @ np.swapaxes(x, 1, 2)  # (R, t, i): x_c' P x_i
    drop = (gain[:, chosen, None] * cross**2).mean(axis=0)  # (t, i)
    var_after = np.maximum(var_before[None, :] - drop, 0.0) + noise[None, :]
    after = _widths(place, fit, mean[None, :], var_after, level, n_known + 1)
    after[np.arange(len(chosen)), chosen] = 0.0
    frame = pl.DataFrame(
        {
            "rank": np.arange(1, len(chosen) + 1),
            "model_id": [model_ids[unknown[c]] for c in chosen],
            "name": [names[unknown[c]] for c in chosen],
            "predicted": np.asarray(predicted, dtype=float)[unknown[chosen]],
            "variance_reduction": share[chosen],
            "width_before": (width.sum() - width[chosen]) / others,
            "width_after": after.sum(axis=1) / others,
        },
        schema=NEXT_SCHEMA,
    )
    return frame


def _widths(place, fit, mean, var, level, n_known) -> np.ndarray:
    half = half_width(place, var, level, n_known)
    return fit.scale.to_units(mean + half) - fit.scale.to_units(mean - half)


# ------------------------------------------------------------------- on a snapshot (API)
DEFAULT_NAME = "new benchmark"
_PLAUSIBLE_LIMIT = 1e7  # as `BenchPress.predict`: a larger score is a typo
_PLACEMENTS: weakref.WeakKeyDictionary[FittedMatrix, Placement] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class NewBenchmarkPrediction:
    """A new benchmark predicted for every model (`BenchPress.predict_benchmark`).

    predictions: one row per model (model_id, name, predicted, lower, upper, level,
    observed, rank), best first; ranking: the top models' predicted order with P(A > B)
    (`Comparison`: `.summary()`, `.to_frame()`, `.pairwise()`); similar: the public
    benchmarks it behaves most like (rank, benchmark_id, name, correlation, n_models);
    next_models:
    the models whose score would pin it down best (rank, model_id, name, predicted,
    variance_reduction, width_before, width_after)."""

    name: str
    scale: str
    level: float
    version: str
    known: dict[str, float]  # model id -> the score given
    predictions: pl.DataFrame
    ranking: Comparison
    similar: pl.DataFrame
    next_models: pl.DataFrame
    notes: tuple[str, ...] = ()  # which id a model name stood for

    @property
    def unit(self) -> str:
        return "%" if self.scale == "percent" else ""

    def summary(self, top: int = 5) -> str:
        """A few lines: the top predicted models, what it behaves like, what to run next."""
        unit = " points" if self.scale == "percent" else ""
        lines = [
            f"{self.name} ({self.scale}) from {len(self.known)} known scores: "
            f"{self.predictions.height} models of snapshot {self.version}, "
            f"{round(self.level * 100, 1):g}% intervals"
        ]
        lines += [f"  {note}" for note in self.notes]
        lines.append("  top predicted:")
        for r in self.predictions.filter(~pl.col("observed")).head(top).iter_rows(named=True):
            lines.append(
                f"    {r['rank']:>3}. {r['model_id']}: {r['predicted']:.1f} "
                f"[{r['lower']:.1f}, {r['upper']:.1f}]"
            )
        similar = ", ".join(
            f"{r['benchmark_id']} (r = {r['correlation']:.2f})"
            for r in self.similar.head(top).iter_rows(named=True)
        )
        lines.append(f"  behaves most like: {similar or 'nothing to compare'}")
        for r in self.next_models.head(3).iter_rows(named=True):
            lines.append(
                f"  run next: {r['model_id']} (removes {100 * r['variance_reduction']:.0f}% "
                f"of the other models' variance; mean interval width "
                f"{r['width_before']:.1f} -> {r['width_after']:.1f}{unit})"
            )
        lines.append(self.ranking.summary())
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """JSON-able: every table as a list of rows (CLI --json, the web page)."""
        ranking = self.ranking
        return {
            "name": self.name,
            "scale": self.scale,
            "unit": self.unit,
            "level": self.level,
            "version": self.version,
            "known": dict(self.known),
            "notes": list(self.notes),
            "predictions": self.predictions.to_dicts(),
            "ranking": ranking.to_frame().to_dicts(),
            "pairwise": ranking.pairwise().to_dicts(),
            "similar": self.similar.to_dicts(),
            "next_models": self.next_models.to_dicts(),
        }


def _fitted_placement(bp: FittedMatrix) -> Placement:
    """The snapshot's fitted models placed against its fit, once per `BenchPress`."""
    found = _PLACEMENTS.get(bp)
    if found is None:
        values = bp.observed_values(bp.fit_models_, bp.fit_benchmarks_)
        found = placement(bp.completer_, values)
        _PLACEMENTS[bp] = found
    return found


def _score(name: str, raw: object, scale: str) -> float:
    """One known score, checked: a finite number, 0-100 on the percent scale."""
    if isinstance(raw, bool) or not isinstance(raw, int | float | np.number):
        raise TypeError(f"score for {name!r} must be a number, got {raw!r}")
    try:
        value = float(raw)
    except OverflowError:
        raise ProbeScoreError(f"score for {name!r} is implausibly large (no float)") from None
    if not math.isfinite(value):
        raise ProbeScoreError(f"score for {name!r} must be finite, got {raw!r}")
    if scale == "percent" and not 0.0 <= value <= 100.0:
        raise ProbeScoreError(
            f"score for {name!r} must lie in 0-100 (percent), got {value:g}; "
            "an open scale (Elo, dollars) is scale 'unbounded'"
        )
    if abs(value) > _PLAUSIBLE_LIMIT:
        raise ProbeScoreError(f"score for {name!r} is implausibly large: {value:g}")
    return value


def known_scores(
    bp: FittedMatrix, scores: Mapping[str, object], scale: str
) -> tuple[dict, tuple, dict]:
    """({model id: score}, resolution notes, {model id: standard error}) of the caller's
    {model name: score}; a score may carry its standard error (`(61.0, 2.5)`, `Measured`).

    Names resolve as reference models do (`predictor.reference_names`: ids, aliases,
    `gpt-5-5` for `gpt-5.5`, a model named without its setting at its headline setting);
    an unknown name raises `UnknownNameError` with close matches."""
    if not isinstance(scores, Mapping):
        kind = type(scores).__name__
        raise TypeError(f"scores must be a mapping of model -> score, got {kind}")
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    if len(scores) < MIN_SCORES:
        raise ProbeScoreError(
            f"a new benchmark needs the scores of at least {MIN_SCORES} models, got "
            f"{len(scores)}: with fewer, any level and slope fit them exactly and nothing "
            "tells the benchmark from noise"
        )
    known: dict[str, float] = {}
    stderr: dict[str, float] = {}
    given: dict[str, str] = {}
    notes: list[str] = []
    for name, raw in scores.items():
        ref = _model(bp, name)
        if ref.model_id in known:
            raise ProbeScoreError(
                f"model {ref.model_id!r} is given twice (as {given[ref.model_id]!r} and "
                f"{name!r}); give each model once"
            )
        raw, error = split_measured(repr(name), raw)
        known[ref.model_id] = _score(name, raw, scale)
        if error:
            stderr[ref.model_id] = error
        given[ref.model_id] = name
        if ref.note:
            notes.append(ref.note)
    return known, tuple(notes), stderr


def _model(bp: FittedMatrix, name: str) -> ReferenceModel:
    """`name` as a model of `bp` (`resolve_reference`); a benchmark's name given where a
    model goes (the `predict` habit, `gpqa_diamond=80`) is said to be one."""
    try:
        return resolve_reference(bp, name, catalogue=None)
    except AmbiguousNameError:
        raise
    except UnknownNameError as unknown:
        try:
            benchmark = bp.resolve_benchmark(name)
        except (UnknownNameError, TypeError):
            raise unknown from None
        raise ProbeScoreError(
            f"{name!r} is a benchmark ({benchmark}), not a model: give the scores of models "
            "on the new benchmark, {model: score} (predict takes {benchmark: score})"
        ) from None


def _warn_if_fractions(known: dict[str, float], scale: str) -> None:
    """Percent scores that look like fractions (0.61 for 61%) warn
    (`predictor.util.fraction_scores`): all of them at once, or each one beside percent ones."""
    if scale != "percent":
        return
    small, percent = split_fractions(list(known.items()))
    if small and not percent:
        shown = ", ".join(f"{m}={v:g}" for m, v in list(known.items())[:3])
        warnings.warn(
            f"every score given is at most 1 ({shown}): percent scores are percentages "
            "(0-100), not fractions; multiply by 100 if these are fractions",
            FractionScoresWarning,
            stacklevel=4,
        )
    for message in beside_percent_messages(small, percent):
        warnings.warn(message, FractionScoresWarning, stacklevel=4)


def _population(
    bp: FittedMatrix, known: dict[str, float]
) -> tuple[list[str], Placement, tuple[str, ...]]:
    """The fitted models, then any known model outside the fit, placed from its scores on
    the fitted benchmarks (as `predict` folds a new model in: with its family, read from its
    id, when the fit knows it), and the notes saying which family each such model got."""
    place = _fitted_placement(bp)
    fitted = set(bp.fit_models_)
    extra = [m for m in known if m not in fitted]
    if not extra:
        return list(bp.fit_models_), place, ()
    values = bp.observed_values(extra, bp.fit_benchmarks_)
    empty = [m for m, row in zip(extra, values, strict=True) if not np.isfinite(row).any()]
    if empty:
        raise ProbeScoreError(
            f"model {empty[0]!r} has no score on a benchmark fitted in snapshot {bp.version}, "
            "so it cannot be placed among the others: give scores of other models"
        )
    families = [bp.side_for(model=m)[0] for m in extra]
    groups = [s.family if s.family_known else None for s in families]
    notes = tuple(
        f"{m} (not in the fit) placed with its family {s.family}"
        for m, s in zip(extra, families, strict=True)
        if s.family_known
    )
    placed = placement(bp.completer_, values, new_models=True, groups=groups)
    return [*bp.fit_models_, *extra], place.extended(placed), notes


def predict_benchmark(
    bp: FittedMatrix,
    scores: Mapping[str, object],
    scale: str = "percent",
    level: float = 0.9,
    name: str | None = None,
    top: int = 10,
) -> NewBenchmarkPrediction:
    """A new benchmark's scores for every model of `bp`'s fit (and any given model outside
    it) from some models' scores; see `BenchPress.predict_benchmark`."""
    level = check_level(level)
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top must be a positive integer, got {top!r}")
    label = DEFAULT_NAME if name is None else str(name).strip() or DEFAULT_NAME
    known, notes, stderr = known_scores(bp, scores, scale)
    _warn_if_fractions(known, scale)
    model_ids, place, family_notes = _population(bp, known)
    notes = (*notes, *family_notes)
    index = {m: i for i, m in enumerate(model_ids)}
    values, errors = np.full(len(model_ids), np.nan), np.full(len(model_ids), np.nan)
    for model_id, value in known.items():
        values[index[model_id]] = value
    for model_id, error in stderr.items():
        errors[index[model_id]] = error
    fit = fit_column(place, values, scale == "percent", errors if stderr else None)
    predicted, lower, upper = column_intervals(place, fit, level)
    if scale == "percent":  # every percent score lies in 0-100 (the interval too)
        predicted, lower, upper = (np.clip(a, 0.0, 100.0) for a in (predicted, lower, upper))
    display = dict(bp.snapshot.models.select("model_id", "name").iter_rows())
    names = [display.get(m) or m for m in model_ids]
    frame = predictions_table(model_ids, names, predicted, lower, upper, fit.known, level)
    head = frame.head(top)
    pairs = p_better_pairs(place, fit, [index[m] for m in head["model_id"]])
    bench_names = dict(bp.snapshot.benchmarks.select("benchmark_id", "name").iter_rows())
    similar = similar_benchmarks(
        place,
        fit,
        np.arange(len(model_ids)),
        bp.fit_benchmarks_,
        [bench_names.get(b) or b for b in bp.fit_benchmarks_],
        np.asarray(bp.completer_.observed_, dtype=bool).sum(axis=0),
        top=top,
    )
    following = next_models(place, fit, model_ids, names, predicted, level, top=top)
    return NewBenchmarkPrediction(
        name=label,
        scale=scale,
        level=level,
        version=bp.version,
        known=known,
        predictions=frame,
        ranking=ranking(label, head, pairs, index, level),
        similar=similar,
        next_models=following,
        notes=notes,
    )
