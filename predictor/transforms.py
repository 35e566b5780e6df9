"""Map benchmark scores to a space where a low-rank model fits, and back.

Percent scores saturate near their floor (0, or the chance score of a multiple-choice
benchmark) and 100, so they are modelled in logit space; unbounded scores (Elo, ratings,
dollars) are left as they are. Each column is then z-scored so that one ridge penalty suits
every benchmark. Back-transformed values stay inside each column's valid range.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

ScaleKind = Literal["percent", "unbounded"]
SCALE_KINDS: tuple[str, ...] = ("percent", "unbounded")
LINK_MODES: tuple[str, ...] = ("learned", "range")

# Bound on the logit before the sigmoid: keeps inverse percent values strictly inside (0, 100).
_MAX_LOGIT = 30.0
# Past this logit a percent link is flat: within 0.1% of its span (a tenth of a point on
# 0-100) of an asymptote, where an interval's ends no longer differ in what is shown.
_SATURATED_SHARE = 1e-3
_SATURATED_LOGIT = float(np.log((1.0 - _SATURATED_SHARE) / _SATURATED_SHARE))


def validate_scales(scales: Sequence[str], n_columns: int) -> np.ndarray:
    """Return a boolean "is percent" mask; raise ValueError naming `scales` if it is malformed."""
    if isinstance(scales, str):
        raise ValueError("scales must be a sequence of scale kinds, not a single string")
    scales = list(scales)
    if len(scales) != n_columns:
        raise ValueError(f"scales has {len(scales)} entries but values has {n_columns} columns")
    for j, kind in enumerate(scales):
        if kind not in SCALE_KINDS:
            raise ValueError(f"scales[{j}] is {kind!r}; expected one of {SCALE_KINDS}")
    return np.array([kind == "percent" for kind in scales], dtype=bool)


def column_array(
    values: Sequence[float] | np.ndarray | None, n_columns: int, default: float, name: str
) -> np.ndarray:
    """One float per column (None = `default` everywhere; NaN entries take `default` too);
    a ValueError names `name` when the length is wrong."""
    if values is None:
        return np.full(n_columns, float(default))
    arr = np.array(values, dtype=float).reshape(-1)
    if arr.shape[0] != n_columns:
        raise ValueError(f"{name} has {arr.shape[0]} entries but values has {n_columns} columns")
    return np.where(np.isnan(arr), float(default), arr)


def column_ranges(
    is_percent: np.ndarray,
    floors: Sequence[float] | np.ndarray | None = None,
    lower: Sequence[float] | np.ndarray | None = None,
    upper: Sequence[float] | np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(floor, lower, upper) per column, checked: floors lie in 0-100 (0 on other columns),
    percent ranges are cut to 0-100, open ends are infinite; a ValueError names the argument
    and column of a bad entry."""
    percent = np.asarray(is_percent, dtype=bool)
    n = len(percent)
    floor = column_array(floors, n, 0.0, "floors")
    low = column_array(lower, n, -np.inf, "lower")
    high = column_array(upper, n, np.inf, "upper")
    low = np.where(percent, np.maximum(low, 0.0), low)
    high = np.where(percent, np.minimum(high, 100.0), high)
    bad_floor = percent & ((floor < 0.0) | (floor >= 100.0))
    if bad_floor.any():
        j = int(np.flatnonzero(bad_floor)[0])
        raise ValueError(f"floors[{j}] = {floor[j]:g}; a chance floor lies in 0-100")
    if (low > high).any():
        j = int(np.flatnonzero(low > high)[0])
        raise ValueError(f"lower[{j}] = {low[j]:g} is above upper[{j}] = {high[j]:g}")
    return np.where(percent, floor, 0.0), low, high


class ScaleTransform:
    """Percent -> logit of the share of the way from the floor to 100, unbounded -> identity,
    then column z-score; back-transformed values are clipped to each column's valid range.

    `floors` is each percent column's chance score (25 on a 4-way multiple-choice benchmark,
    default 0): a score x maps to logit(clip((x - floor) / (100 - floor), eps, 1 - eps)), so
    the model sees progress above guessing and never predicts below it (scores at or below the
    floor all map to the bottom of the range). `lower` / `upper` are the valid range of every
    column (default 0-100 on percent columns, open on the others): predictions and interval
    ends never leave it (no negative minutes on a time-horizon column).

    The z-score statistics come from the observed (non-NaN) cells passed to `fit`. A column
    with fewer than 2 observed cells or zero spread gets std 1 (and mean 0 when empty), so it
    is merely shifted rather than blown up.

    `link_prior` > 0 lets each percent column's link bend: the logit runs between
    per-column asymptotes `link_low_` and `link_high_` instead of the floor and 100, x ->
    logit((x - lo) / (hi - lo)), each blended with the plain end (floor, 100) by weight
    n / (n + link_prior) over the column's n observed cells, so a sparse column keeps the
    plain logit. `link_mode` "learned": the pair from a small grid (`_LINK_STEPS`) whose link
    best fits the column as a line in the matrix's rank-2 row scores, by leave-one-out error
    in points (`_learned_link`); "range": the column's observed extremes pushed out by
    `link_margin` x its observed range. The asymptotes may lie outside 0-100 (a straighter
    link where the scores stop short of an end); outputs are still clipped to the valid
    range. 0 (this class's default) = the plain logit; the default method fits "learned" at
    30, which earned its place on our dev splits ("range" did not; figures in
    `predictor.methods.bayesian.BayesianCompleter`).
    """

    def __init__(
        self,
        scales: Sequence[str],
        eps: float = 0.005,
        floors: Sequence[float] | np.ndarray | None = None,
        lower: Sequence[float] | np.ndarray | None = None,
        upper: Sequence[float] | np.ndarray | None = None,
        link_prior: float = 0.0,
        link_margin: float = 0.25,
        link_mode: str = "learned",
    ) -> None:
        if not 0.0 < eps < 0.5:
            raise ValueError(f"eps must lie in (0, 0.5), got {eps}")
        self.scales = list(scales)
        self.eps = eps
        self.floors = floors
        self.lower = lower
        self.upper = upper
        self.link_prior = link_prior
        self.link_margin = link_margin
        if link_mode not in LINK_MODES:
            raise ValueError(f"link_mode must be one of {LINK_MODES}, got {link_mode!r}")
        self.link_mode = link_mode

    def fit(self, values: np.ndarray) -> ScaleTransform:
        """Learn per-column mean and std in the warped space from the observed cells."""
        values = np.asarray(values, dtype=float)
        if values.ndim != 2:
            raise ValueError(f"values must be 2-D, got shape {values.shape}")
        self.is_percent_ = validate_scales(self.scales, values.shape[1])
        self.set_ranges(self.floors, self.lower, self.upper)
        self._fit_link(values)
        warped = self._warp(values)
        observed = ~np.isnan(warped)
        count = observed.sum(axis=0)
        filled = np.where(observed, warped, 0.0)
        mean = np.divide(filled.sum(axis=0), count, out=np.zeros(len(count)), where=count > 0)
        sq = np.where(observed, (warped - mean) ** 2, 0.0).sum(axis=0)
        std = np.sqrt(np.divide(sq, count, out=np.zeros(len(count)), where=count > 0))
        std[(count < 2) | (std < 1e-8)] = 1.0
        self.mean_ = mean
        self.std_ = std
        return self

    @classmethod
    def restored(
        cls, scales: Sequence[str], eps: float, mean: Sequence[float], std: Sequence[float]
    ) -> ScaleTransform:
        """A fitted transform rebuilt from a snapshot's state (ranges: `set_ranges`)."""
        transform = cls(scales, eps=eps)
        transform.is_percent_ = np.array([s == "percent" for s in scales], dtype=bool)
        transform.mean_ = np.asarray(mean, dtype=float)
        transform.std_ = np.asarray(std, dtype=float)
        return transform

    def set_ranges(
        self,
        floors: Sequence[float] | np.ndarray | None,
        lower: Sequence[float] | np.ndarray | None,
        upper: Sequence[float] | np.ndarray | None,
    ) -> ScaleTransform:
        """Check and store `floor_`, `lower_`, `upper_` (needs `is_percent_`); also used when a
        fitted transform is restored from a snapshot."""
        ranges = column_ranges(self.is_percent_, floors, lower, upper)
        self.floor_, self.lower_, self.upper_ = ranges
        return self

    def _fit_link(self, values: np.ndarray) -> None:
        """Per-column asymptotes of the percent link (see the class doc); plain when off."""
        if self.link_prior > 0:
            self._bend_link(values, self.floor_)
        else:
            self.set_link(None, None)

    def _bend_link(self, values: np.ndarray, floor: np.ndarray) -> None:
        plain_lo, plain_hi = floor, np.full(len(floor), 100.0)
        with np.errstate(invalid="ignore"):  # empty columns: inf extremes, not used
            observed = np.isfinite(values)
            n = observed.sum(axis=0)
            ok = self.is_percent_ & (n >= 2)
            vmin = np.where(observed, values, np.inf).min(axis=0)
            vmax = np.where(observed, values, -np.inf).max(axis=0)
            margin = float(self.link_margin) * np.where(ok, vmax - vmin, 0.0)
            w = n / (n + float(self.link_prior))
            lo = np.where(ok, w * (vmin - margin) + (1 - w) * floor, plain_lo)
            hi = np.where(ok, w * (vmax + margin) + (1 - w) * 100.0, plain_hi)
            if self.link_mode == "learned":
                lo, hi = _learned_link(values, self.is_percent_, floor, self.eps)
                lo = np.where(ok, w * lo + (1 - w) * floor, floor)
                hi = np.where(ok, w * hi + (1 - w) * 100.0, 100.0)
        self.set_link(lo, hi)

    def set_link(self, low, high) -> ScaleTransform:
        """Store the percent link's asymptotes (None = the floor and 100: the plain logit)."""
        floor = self.ranges()[0]
        self.link_low_ = floor.copy() if low is None else np.asarray(low, dtype=float)
        self.link_high_ = np.full(len(floor), 100.0) if high is None else np.asarray(high, float)
        return self

    def link(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) asymptote of each percent column's link (floor and 100 when plain,
        and on transforms restored from states written before the link could bend)."""
        if getattr(self, "link_low_", None) is None:
            self.set_link(None, None)
        return self.link_low_, self.link_high_

    def transform(self, values: np.ndarray) -> np.ndarray:
        """Original units -> z-space; works on 2-D matrices or 1-D rows over the columns."""
        return (self._warp(np.asarray(values, dtype=float)) - self.mean_) / self.std_

    def inverse(self, z: np.ndarray) -> np.ndarray:
        """z-space -> original units, inside each column's valid range; percent results land
        strictly between the floor and 100."""
        return self.inverse_at(z, np.arange(len(self.is_percent_)))

    def inverse_at(self, z: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """`inverse` for values of the given columns only (`z[..., t]` is column `columns[t]`)."""
        columns = np.asarray(columns, dtype=int)
        _, low, high = self.ranges()
        lo, hi = (end[columns] for end in self.link())
        warped = np.asarray(z, dtype=float) * self.std_[columns] + self.mean_[columns]
        logit = np.clip(warped, -_MAX_LOGIT, _MAX_LOGIT)
        percent = lo + (hi - lo) / (1.0 + np.exp(-logit))
        out = np.where(self.is_percent_[columns], percent, warped)
        return np.clip(out, low[columns], high[columns])

    def stderr_z(self, values: np.ndarray, stderr: np.ndarray) -> np.ndarray:
        """A standard error in original units (`stderr`, per column of `values`) in z-space:
        the larger of the transform's steps from the score to score +- stderr (ends kept in
        the valid range). For a small error that is the local slope dz/dx times it (the
        delta method); near a percent column's end, where the logit's slope runs off, the
        step to the end bounds it. NaN where `values` is."""
        values = np.asarray(values, dtype=float)
        stderr = np.asarray(stderr, dtype=float)
        _, low, high = self.ranges()
        centre = self.transform(values)
        up = self.transform(np.clip(values + stderr, low, high)) - centre
        down = centre - self.transform(np.clip(values - stderr, low, high))
        return np.maximum(up, down)

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """(bottom, top) per column in z-space: beyond them `inverse` no longer moves, as it
        reaches the valid range (and is clipped there) or, on a percent column whose link
        has an asymptote inside the range, comes within `_SATURATED_SHARE` of its span of
        that asymptote. An open end is infinite."""
        _, lower, upper = self.ranges()
        lo, hi = self.link()
        span = np.where(hi > lo, hi - lo, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            at_lower = np.clip((lower - lo) / span, 0.0, 1.0)
            at_upper = np.clip((upper - lo) / span, 0.0, 1.0)
            logit_lower = np.log(at_lower / (1.0 - at_lower))  # -inf below the asymptote
            logit_upper = np.log(at_upper / (1.0 - at_upper))  # +inf above it
        bottom = np.where(self.is_percent_, np.maximum(logit_lower, -_SATURATED_LOGIT), lower)
        top = np.where(self.is_percent_, np.minimum(logit_upper, _SATURATED_LOGIT), upper)
        return (bottom - self.mean_) / self.std_, (top - self.mean_) / self.std_

    def onto_edges(self, z: np.ndarray) -> np.ndarray:
        """`z` (last axis: the columns) with a centre beyond a column's `edges` moved onto
        that edge: past it the link is flat or clipped, so the distance beyond it says nothing
        of the score, and an interval or draws around the far centre would all land on one
        value (a weak model's dollars clipped at $0, a percent link flat at its asymptote)."""
        bottom, top = self.edges()
        return np.clip(np.asarray(z, dtype=float), bottom, top)

    def interval(self, z: np.ndarray, half: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) in original units of the z-space interval `z` +- `half` (last axis:
        the columns), never of zero width where `half` > 0.

        Where the centre `z` lies inside the column's `edges` this is `inverse` of each end.
        Where it lies beyond one, the interval is stated as far as it is known: around the
        centre moved onto that edge (`onto_edges`), from the valid range's end on that side
        (`[lower, inverse(bottom + half)]` below the bottom). `fold_in_draws` moves its draws
        the same way, so their central range stays this interval."""
        z, half = np.asarray(z, dtype=float), np.asarray(half, dtype=float)
        centre = self.onto_edges(z)
        low, high = self.inverse(centre - half), self.inverse(centre + half)
        below, above = z < centre, z > centre
        if not (below.any() or above.any()):
            return low, high
        _, lower, upper = self.ranges()
        low = np.where(below, lower, low)
        high = np.where(above, upper, high)
        return low, high

    def ranges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(floor, lower, upper) per column; transforms restored from states written before
        floors and ranges existed get floor 0 and 0-100 / open ranges."""
        if getattr(self, "floor_", None) is None:
            self.set_ranges(None, None, None)
        return self.floor_, self.lower_, self.upper_

    def _warp(self, values: np.ndarray) -> np.ndarray:
        if values.shape[-1] != len(self.is_percent_):
            raise ValueError(
                f"values has {values.shape[-1]} columns; the transform was fitted on "
                f"{len(self.is_percent_)}"
            )
        lo, hi = self.link()
        p = np.clip((values - lo) / (hi - lo), self.eps, 1.0 - self.eps)
        return np.where(self.is_percent_, np.log(p / (1.0 - p)), values)


# Candidate asymptotes of the learned link: each end moved this share of the way from the
# plain end (floor, 100) to the column's observed extreme (negative: further out).
_LINK_STEPS = (-2.0, -1.0, -0.5, 0.0, 0.5, 0.8)


def plain_warp(values: np.ndarray, is_percent: np.ndarray, floor: np.ndarray, eps: float):
    """Percent columns through the plain logit of the share from the floor to 100 (clipped to
    [eps, 1 - eps]), other columns as they are: the space every fit shares, bent link or not."""
    p = np.clip((values - floor) / (100.0 - floor), eps, 1.0 - eps)
    return np.where(is_percent, np.log(p / (1.0 - p)), values)


def _row_factors(
    values: np.ndarray,
    is_percent: np.ndarray,
    floor: np.ndarray,
    eps: float,
    rank: int = 2,
    n_iter: int = 15,
) -> np.ndarray:
    """Rank-`rank` row scores of the plain-logit z-matrix, missing cells filled iteratively."""
    warped = plain_warp(values, is_percent, floor, eps)
    observed = np.isfinite(warped)
    count = np.maximum(observed.sum(axis=0), 1)
    mean = np.where(observed, warped, 0.0).sum(axis=0) / count
    std = np.sqrt(np.where(observed, (warped - mean) ** 2, 0.0).sum(axis=0) / count)
    std = np.where(std > 1e-8, std, 1.0)
    z = np.where(observed, (warped - mean) / std, 0.0)
    filled = z.copy()
    for _ in range(n_iter):
        u, sv, vt = np.linalg.svd(filled, full_matrices=False)
        low = (u[:, :rank] * sv[:rank]) @ vt[:rank]
        filled = np.where(observed, z, low)
    return u[:, :rank] * sv[:rank] / np.sqrt(len(z))


def _learned_link(values, is_percent, floor, eps, ridge: float = 1e-3, min_cells: int = 6):
    """Per percent column, the asymptotes (from a small grid around the plain floor and 100)
    whose link best fits the column as a line in the matrix's rank-2 row scores, by
    leave-one-out absolute error in points; plain where no candidate beats the plain link.

    The line is fitted with almost no ridge: a ridge pulls the line's ends in, and a link that
    bends towards them wins back what the ridge took, not what the column holds (with a ridge
    of 1, 39 of 40 columns of an exactly logit-linear matrix bent; with 1e-3, 4 of 40, each
    by 0.4-4% of the plain link's error). Requiring a bent link to beat the plain one by 5%
    kept all 40 plain but gave back most of the probe gain on our dev splits (paired over 8
    seeds: probe MedAE -0.013 +- 0.018 against -0.041 +- 0.017).

    Gross outliers move the choice: with 30 of 1,680 cells of that matrix flipped to 2 or 98,
    35 of 40 columns bend and the held-out median error rises from 0.01 to 0.12 points (the
    factorization's Student-t noise keeps the rest of the fit robust)."""
    factors = _row_factors(values, is_percent, floor, eps)
    m = values.shape[1]
    lo_out, hi_out = floor.astype(float).copy(), np.full(m, 100.0)
    for j in np.flatnonzero(is_percent):
        rows = np.flatnonzero(np.isfinite(values[:, j]))
        if len(rows) < min_cells:
            continue
        x = values[rows, j]
        design = np.column_stack([np.ones(len(rows)), factors[rows]])
        penalty = ridge * np.eye(design.shape[1])
        penalty[0, 0] = 0.0
        # the hat matrix design @ proj is never formed: it is cells x cells (4,000 models:
        # 128 MB and 5e8 operations per column), its diagonal and products are cells x 3
        proj = np.linalg.solve(design.T @ design + penalty, design.T)
        leverage = np.clip(np.einsum("ij,ji->i", design, proj), 0.0, 0.99)
        vmin, vmax = float(x.min()), float(x.max())
        los = floor[j] + np.asarray(_LINK_STEPS) * (vmin - floor[j])
        his = 100.0 - np.asarray(_LINK_STEPS) * (100.0 - vmax)
        lo, hi = (grid.reshape(-1) for grid in np.meshgrid(los, his, indexing="ij"))
        usable = hi - lo >= 1e-6
        lo, hi = lo[usable], hi[usable]
        # every candidate link at once: a column of y per (lo, hi), in the grid's order
        q = np.clip((x[:, None] - lo) / (hi - lo), eps, 1.0 - eps)
        y = np.log(q / (1.0 - q))
        y_loo = y - (y - design @ (proj @ y)) / (1.0 - leverage)[:, None]
        pred = lo + (hi - lo) / (1.0 + np.exp(-np.clip(y_loo, -30, 30)))
        err = np.mean(np.abs(np.clip(pred, 0.0, 100.0) - x[:, None]), axis=0)
        plain = (lo == floor[j]) & (hi == 100.0)
        err = np.where(plain, err - 1e-9, err)  # ties go to the plain link
        best = (lo[np.argmin(err)], hi[np.argmin(err)])
        lo_out[j], hi_out[j] = best
    return lo_out, hi_out
