"""`BenchPress`: a pinned snapshot plus the fitted factorization, answering predictions.

bp = BenchPress.load("2026.11.30.2")   # or "latest"
bp.predict({"gpqa_diamond": 80, "hle": 20})["mmlu_pro"].score
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import polars as pl

from predictor.fitted_state import restore_state
from predictor.resolve import NameResolver, display_names
from predictor.snapshots import Snapshot, default_stores, load_snapshot, resolve_version
from predictor.stores import open_store

# Plausible bounds for open scales, to reject typos (a probe of 1e9 Elo) with a clear error.
_UNBOUNDED_LIMIT = 1e7


def _valid_ranges(benchmarks: pl.DataFrame) -> dict[str, tuple[float, float]]:
    """benchmark -> (lower, upper) from the snapshot (older snapshots have no such columns)."""
    if not {"lower", "upper"} <= set(benchmarks.columns):
        return {}
    ranges = {}
    for benchmark, lower, upper in benchmarks.select("benchmark_id", "lower", "upper").iter_rows():
        low = -math.inf if lower is None or math.isnan(lower) else float(lower)
        high = math.inf if upper is None or math.isnan(upper) else float(upper)
        ranges[benchmark] = (low, high)
    return ranges


TRUST_WIDTH = 5.0  # points: the trust figure is P(|error| <= TRUST_WIDTH)


class ProbeScoreError(ValueError):
    """A probe score the caller gave cannot be used (out of range, not finite, given twice, a
    benchmark outside the fit): the caller's input, so the CLI exits 2 as for any usage error."""


class FractionScoresWarning(UserWarning):
    """Probe scores that look like fractions (0-1) given where percentages are expected."""


@dataclass(frozen=True)
class Prediction:
    """A predicted score with its central `level` interval; `confidence` is the half-width.

    `p_within_5` is the trust figure: the predictive probability that the true score lies
    within 5 percentage points of `score`, calibrated on held-out cells like the interval
    (1.0 for the probes themselves). None on benchmarks not scored in percent (Elo, dollars,
    1-10 ratings: 5 units mean something else on each) and for a snapshot fitted by the
    recipe ALS, which has no predictive distribution."""

    benchmark: str
    score: float
    low: float
    high: float
    level: float
    observed: bool = False  # True for the probes themselves (returned unchanged)
    p_within_5: float | None = None

    @property
    def confidence(self) -> float:
        return (self.high - self.low) / 2.0

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "confidence": self.confidence}


@dataclass(frozen=True)
class MatrixView:
    values: np.ndarray
    models: list[str]
    benchmarks: list[str]
    scales: list[str]


class BenchPress:
    """A loaded snapshot. Construct with `load` or `from_pretrained`."""

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        fit = snapshot.fit
        self.fit_models_: list[str] = list(fit["model_ids"])
        self.fit_benchmarks_: list[str] = list(fit["benchmark_ids"])
        self._column = {b: j for j, b in enumerate(self.fit_benchmarks_)}
        values = self._dense(self.fit_models_, self.fit_benchmarks_)
        self.completer_ = restore_state(fit["state"], values)
        self._scale = dict(snapshot.benchmarks.select("benchmark_id", "scale").iter_rows())
        self._range = _valid_ranges(snapshot.benchmarks)
        ranges = [self._range.get(b, (-math.inf, math.inf)) for b in self.fit_benchmarks_]
        self._bounds = tuple(np.array(side) for side in zip(*ranges, strict=True))  # low, high
        self.resolve_model = NameResolver("model", self.models, snapshot.aliases)
        # Benchmarks also resolve by their display name ("MBPP", "WebDev Arena score"); model
        # display names are too noisy for that (several models share one).
        self.resolve_benchmark = NameResolver(
            "benchmark",
            self.benchmarks,
            snapshot.aliases,
            display_names(snapshot.benchmarks, "benchmark_id"),
        )

    # ----------------------------------------------------------------- loading
    @classmethod
    def load(cls, version: str = "latest", store: str | Path | None = None) -> BenchPress:
        """Load a published version ("latest" = newest) from `store` or the default stores
        (BENCHPRESS_HOME's store, then the snapshot bundled with the package).

        `store` is a directory or a URI (`s3://bucket/prefix`, `https://host/path`): a remote
        version is cached under BENCHPRESS_HOME/cache and verified, so a pinned version loads
        offline once cached; "latest" falls back to the newest cached one if unreachable."""
        if store is None:
            return cls(load_snapshot(resolve_version(version, default_stores())))
        return cls(load_snapshot(open_store(store).resolve(version)))

    @classmethod
    def from_pretrained(cls, name: str = "latest") -> BenchPress:
        """A version string, "latest", or the path of a snapshot directory."""
        path = Path(name)
        if name not in ("latest",) and path.is_dir():
            return cls(load_snapshot(path))
        return cls.load(name)

    # ------------------------------------------------------------------ facts
    @property
    def version(self) -> str:
        return self.snapshot.version

    @property
    def models(self) -> list[str]:
        return self.snapshot.models["model_id"].to_list()

    @property
    def benchmarks(self) -> list[str]:
        return self.snapshot.benchmarks["benchmark_id"].to_list()

    @property
    def manifest(self) -> dict[str, object]:
        return dict(self.snapshot.manifest)

    def _dense(self, models: list[str], benchmarks: list[str]) -> np.ndarray:
        row = {m: i for i, m in enumerate(models)}
        col = {b: j for j, b in enumerate(benchmarks)}
        values = np.full((len(models), len(benchmarks)), np.nan)
        for model_id, benchmark_id, score in self.snapshot.cells.select(
            "model_id", "benchmark_id", "score"
        ).iter_rows():
            if model_id in row and benchmark_id in col:
                values[row[model_id], col[benchmark_id]] = score
        return values

    def matrix(self) -> MatrixView:
        """The published matrix (every resolved cell), models x benchmarks, NaN = missing."""
        values = self._dense(self.models, self.benchmarks)
        return MatrixView(
            values, self.models, self.benchmarks, [self._scale[b] for b in self.benchmarks]
        )

    def scores(self) -> pl.DataFrame:
        """Observed cells with provenance: which source, URL and payload said it, and when
        (and, in snapshots that record them, the row, the source's names and the setting)."""
        wanted = [
            "model_id",
            "benchmark_id",
            "score",
            "source",
            "url",
            "fetched_at",
            "payload_sha256",
            "model_key",
            "n_observations",
            "row_ref",
            "model_name",
            "benchmark_key",
            "setting",
            "agent",
            "raw_value",
            "raw_unit",
            "n_sources",
        ]
        cells = self.snapshot.cells
        return cells.select([c for c in wanted if c in cells.columns])

    # -------------------------------------------------------------- prediction
    def _probe_row(self, probe_scores: Mapping[str, float]) -> np.ndarray:
        if not isinstance(probe_scores, Mapping):
            kind = type(probe_scores).__name__
            raise TypeError(f"probe_scores must be a mapping of benchmark -> score, got {kind}")
        if not probe_scores:
            raise ProbeScoreError("probe_scores is empty: give at least one benchmark score")
        row = np.full(len(self.fit_benchmarks_), np.nan)
        for name, raw in probe_scores.items():
            benchmark = self.resolve_benchmark(name)
            if benchmark not in self._column:
                raise ProbeScoreError(
                    f"benchmark {benchmark!r} has too few observations in snapshot "
                    f"{self.version} to be used as a probe"
                )
            if isinstance(raw, bool) or not isinstance(raw, int | float | np.number):
                raise TypeError(f"score for {name!r} must be a number, got {raw!r}")
            try:
                value = float(raw)
            except OverflowError:  # an int beyond the float range
                raise ProbeScoreError(
                    f"score for {name!r} is implausibly large (no float)"
                ) from None
            if not math.isfinite(value):
                raise ProbeScoreError(f"score for {name!r} must be finite, got {raw!r}")
            if self._scale[benchmark] == "percent" and not 0.0 <= value <= 100.0:
                raise ProbeScoreError(
                    f"score for {name!r} must lie in 0-100 (percent), got {value:g}"
                )
            if abs(value) > _UNBOUNDED_LIMIT:
                raise ProbeScoreError(f"score for {name!r} is implausibly large: {value:g}")
            low, high = self._range.get(benchmark, (-math.inf, math.inf))
            if not low <= value <= high:
                raise ProbeScoreError(
                    f"score for {name!r} lies outside the valid range of {benchmark} "
                    f"({low:g} to {high:g}): {value:g}"
                )
            column = self._column[benchmark]
            if not np.isnan(row[column]):
                raise ProbeScoreError(f"benchmark {benchmark!r} is given twice (as {name!r})")
            row[column] = value
        self._warn_if_fractions(row)
        return row

    def _warn_if_fractions(self, row: np.ndarray) -> None:
        """Scores are percent (0-100). Every percent score at most 1 (gpqa_diamond=0.8) is
        almost surely a fraction: the answer would be for a near-zero model, silently."""
        given = [
            (name, row[c])
            for c, name in enumerate(self.fit_benchmarks_)
            if np.isfinite(row[c]) and self._scale[name] == "percent"
        ]
        if given and all(v <= 1.0 for _, v in given) and any(v > 0.0 for _, v in given):
            shown = ", ".join(f"{name}={v:g}" for name, v in given[:3])
            warnings.warn(
                f"every percent score given is at most 1 ({shown}): scores are percentages "
                "(0-100), not fractions; multiply by 100 if these are fractions",
                FractionScoresWarning,
                stacklevel=4,
            )

    def predict(
        self,
        probe_scores: Mapping[str, float],
        level: float = 0.9,
        targets: str | Sequence[str] | None = None,
    ) -> dict[str, Prediction]:
        """Predict every fitted benchmark for a new model from its probe scores.

        The model is folded in against the snapshot's benchmark factors (no refit). Probes
        come back unchanged with `observed=True` and a zero-width interval. `targets` (a
        profile name or benchmark names, as elsewhere) keeps only those benchmarks.
        """
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
        row = self._probe_row(probe_scores)
        trust = np.full(len(row), np.nan)
        if hasattr(self.completer_, "fold_in_summary"):  # one fold-in pass for everything
            mean, low, high, within = self.completer_.fold_in_summary(row, level, TRUST_WIDTH)
            percent = np.array([self._scale[b] == "percent" for b in self.fit_benchmarks_])
            trust = np.where(percent, within, np.nan)
        else:  # a recipe (ALS) snapshot: no predictive distribution, no trust figure
            mean = self.completer_.fold_in(row)
            low, high = self.completer_.fold_in_interval(row, level=level)
        # open scales are fitted linearly and can run past what the benchmark allows (negative
        # dollars or minutes); every true score lies in the valid range, so the clipped
        # interval covers at least as often
        mean, low, high = (self.in_range(a) for a in (mean, low, high))
        kept = self._targets(targets)
        return {
            benchmark: Prediction(
                benchmark=benchmark,
                score=float(mean[j]),
                low=float(min(low[j], mean[j])),
                high=float(max(high[j], mean[j])),
                level=level,
                observed=not np.isnan(row[j]),
                p_within_5=None if np.isnan(trust[j]) else float(trust[j]),
            )
            for j, benchmark in enumerate(self.fit_benchmarks_)
            if kept is None or benchmark in kept
        }

    def in_range(self, values: np.ndarray) -> np.ndarray:
        """`values` (last axis: the fitted benchmarks) clipped to each benchmark's valid range.

        Open scales are fitted linearly and can run past what a benchmark allows (negative
        dollars or minutes for a weak model); every true score lies in the range, so a
        clipped interval covers at least as often. Every prediction shown goes through this."""
        floor, ceiling = self._bounds
        return np.clip(values, floor, ceiling)

    def fitted_values(
        self, keep_observed: bool = True, level: float | None = None
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """(mean, low, high) of the fitted block (models x benchmarks of the fit), in range;
        low and high only with a `level`."""
        mean = self.in_range(self.completer_.predict(keep_observed=keep_observed))
        if level is None:
            return mean, None, None
        low, high = self.completer_.predict_interval(level=level, keep_observed=keep_observed)
        return mean, self.in_range(low), self.in_range(high)

    def _targets(self, targets: str | Sequence[str] | None) -> set[str] | None:
        from predictor.trust.profiles import resolve_targets

        chosen = resolve_targets(targets, self.fit_benchmarks_, self.resolve_benchmark)
        return None if chosen is None else set(chosen)

    # ------------------------------------------------------ trust (predictor.trust)
    def select_probes(
        self, k=5, budget=None, targets=None, allowlist=None, costs=None, progress=None
    ):
        """Greedy probe set for this snapshot; see `predictor.trust.probes`.

        `progress(done, total)` is called as candidates are scored (for a progress bar)."""
        from predictor.trust.probes import select_probes_for

        return select_probes_for(self, k, budget, targets, allowlist, costs, progress)

    def compare_models(self, probes, target_benchmarks, names=None, level=0.9):
        """Per-benchmark predicted order with P(A > B) and tie groups."""
        from predictor.trust.rankings import compare_models

        return compare_models(self, probes, target_benchmarks, names, level)

    def compare_with_known_models(self, predictions_or_probes, reference_models, **kwargs):
        """Where a new model would rank among snapshot models (`.summary()`, `.to_frame()`)."""
        from predictor.trust.rankings import compare_with_known_models

        return compare_with_known_models(self, predictions_or_probes, reference_models, **kwargs)

    def what_to_run_next(self, known_scores, targets=None, budget=None, top=5, **kwargs):
        """Unobserved benchmarks ranked by target-interval narrowing per unit cost."""
        from predictor.trust.next_benchmark import what_to_run_next

        return what_to_run_next(self, known_scores, targets, budget, top, **kwargs)

    def suspicious_scores(self, threshold=3.5):
        """Observed cells far from their leave-one-out fold-in prediction (cached)."""
        from predictor.trust.suspicious import suspicious_scores

        return suspicious_scores(self, threshold)


def predictions_frame(predictions: Mapping[str, Prediction]) -> pl.DataFrame:
    """Tidy table of predictions: one row per benchmark."""
    return pl.DataFrame(
        [p.as_dict() for p in predictions.values()],
        schema={
            "benchmark": pl.String,
            "score": pl.Float64,
            "low": pl.Float64,
            "high": pl.Float64,
            "level": pl.Float64,
            "observed": pl.Boolean,
            "p_within_5": pl.Float64,
            "confidence": pl.Float64,
        },
    )
