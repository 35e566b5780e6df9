"""`BenchPress`: a pinned snapshot plus the fitted factorization, answering predictions.

bp = BenchPress.load("2026.12.07.3")   # or "latest"
bp.predict({"gpqa_diamond": 80, "hle": 20})["mmlu_pro"].score
bp.predict("results/")["mmlu_pro"].score   # lm-eval, Inspect, EEE, HELM or tidy files
"""

from __future__ import annotations

import calendar
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import polars as pl

from predictor.fit.dense import dense_matrix
from predictor.fit.fitted_state import restore_state
from predictor.fit.own_matrix import (
    MIN_PER_BENCHMARK,
    MIN_PER_MODEL,
    fit_own_snapshot,
    save_snapshot,
)
from predictor.methods.base import NotSupportedError
from predictor.methods.common import check_level
from predictor.names.families import model_family
from predictor.names.model_names import derived_base
from predictor.names.resolve import AmbiguousNameError, NameResolver, display_names
from predictor.new_benchmark import NewBenchmarkPrediction, predict_benchmark
from predictor.results import parse_overrides
from predictor.results import probe_scores as scores_in
from predictor.results import read_results as read_files
from predictor.results.errors import ResultsError
from predictor.results.inputs import summarise
from predictor.results.limited import limited_checked
from predictor.results.noise import published_noise
from predictor.results.snapshot import on_snapshot
from predictor.side_information import (
    DATE_MARGIN_MONTHS,
    checked_release_date,
    fractional_year,
    unknown_features,
)
from predictor.snapshots.folders import folder_hint, folder_reference, snapshot_in
from predictor.snapshots.layout import SCORES_COLUMNS
from predictor.snapshots.pretrained import resolve_pretrained
from predictor.snapshots.private_line import (
    check_own_target,
    private_hint,
    private_store,
    private_store_dir,
    public_versions,
)
from predictor.snapshots.reader import (
    Snapshot,
    SnapshotError,
    default_stores,
    load_snapshot,
    parse_pin,
    resolve_version,
)
from predictor.snapshots.stores import open_store
from predictor.trust.missing_probes import MissingProbesWarning, split_probes
from predictor.trust.next_benchmark import what_to_run_next
from predictor.trust.probe_plan import DEFAULT_BUDGET_TOKENS, plan_probes_for
from predictor.trust.probes import select_probes_for
from predictor.trust.profiles import resolve_targets
from predictor.trust.rankings import compare_models, compare_with_known_models
from predictor.trust.suspicious import suspicious_scores
from predictor.util.fraction_scores import (
    all_fractions,
    beside_percent_messages,
    converted_message,
    fit_fraction_messages,
    kept_message,
    split_fractions,
)
from predictor.util.progress import FitProgress, Progress
from predictor.util.text_safety import quoted
from predictor.values import (
    BASIS_BASE,
    BASIS_KNOWN,
    BASIS_NAME,
    BASIS_NONE,
    DATE_GIVEN,
    DATE_INFERRED,
    FractionScoresWarning,
    MatrixView,
    Measured,
    Noise,
    Prediction,
    Predictions,
    ProbeScoreError,
    ReleaseDateError,
    SideUsed,
    predictions_frame,
    split_measured,
)

__all__ = [
    "BenchPress",
    "FractionScoresWarning",
    "MatrixView",
    "Measured",
    "Noise",
    "Prediction",
    "Predictions",
    "ProbeScoreError",
    "ReleaseDateError",
    "SideUsed",
    "predictions_frame",
]


def _iso_day(value: str | date | datetime) -> str:
    """A given release date as an ISO day (a bare year or month stays as written)."""
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return str(value).strip()[:10]


def _year_to_day(year: float) -> str:
    """A fractional year (`predictor.side_information.fractional_year`) back to its day."""
    whole = int(math.floor(year))
    month = min(12, int(math.floor((year - whole) * 12.0)) + 1)
    day = int(round((year - whole - (month - 1) / 12.0) * 365.0)) + 1
    last = calendar.monthrange(whole, month)[1]  # a month is 1/12 year: up to 31 days here
    return f"{whole:04d}-{month:02d}-{max(1, min(day, last)):02d}"


# Plausible bounds for open scales, to reject typos (a probe of 1e9 Elo) with a clear error.
_UNBOUNDED_LIMIT = 1e7
# A 0-100 score's standard error cannot exceed 50: the spread of half 0s and half 100s.
_MAX_PERCENT_STDERR = 50.0

# What `predict` takes as probe scores: {benchmark: score or (score, standard error)}, a
# results frame (`read_results`), or results files, folders and globs.
ProbeMapping = Mapping[str, float | tuple[float, float]]
ProbeInput = ProbeMapping | pl.DataFrame | str | os.PathLike | Sequence[str | os.PathLike]


def _is_paths(value: object) -> bool:
    """A path, or a non-empty list or tuple of paths (never a list of (name, score) pairs)."""
    if isinstance(value, str | os.PathLike):
        return True
    return (
        isinstance(value, list | tuple)
        and bool(value)
        and all(isinstance(v, str | os.PathLike) for v in value)
    )


def _percent_columns(scores: object) -> dict[str, list[float]]:
    """benchmark -> its scores, for the percent benchmarks of a frame given to `fit` (its
    `scale` column, percent when absent), to warn about fractions before minutes of fitting;
    empty for a frame `fit` refuses anyway (it says why)."""
    if not isinstance(scores, pl.DataFrame) or not {"benchmark", "score"} <= set(scores.columns):
        return {}
    try:
        frame = scores.select(
            pl.col("benchmark").cast(pl.String).str.strip_chars(),
            pl.col("score").cast(pl.Float64),
            (
                pl.col("scale").cast(pl.String).str.strip_chars().fill_null("percent")
                if "scale" in scores.columns
                else pl.lit("percent")
            ).alias("scale"),
        )
    except pl.exceptions.PolarsError:
        return {}
    percent = frame.filter((pl.col("scale") == "percent") & pl.col("score").is_finite())
    grouped = percent.group_by("benchmark", maintain_order=True).agg("score")
    return {str(b): values for b, values in grouped.iter_rows()}


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


_CATALOGUE: dict[str, BenchPress] = {}  # `BenchPress.catalogue`, one snapshot at a time

TRUST_WIDTH = 5.0  # points: the trust figure is P(|error| <= TRUST_WIDTH)


class BenchPress:
    """A loaded snapshot. Construct with `load` or `from_pretrained`.

    It is a `predictor.fitted_matrix.FittedMatrix`, the interface the modules built on it
    (`predictor.trust`, `new_benchmark`, `reference_names`, `drift`) take."""

    default_level = 0.9  # `predict`'s interval level when none is given

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        fit = snapshot.fit
        self.fit_models_: list[str] = list(fit["model_ids"])
        self.fit_benchmarks_: list[str] = list(fit["benchmark_ids"])
        self._column = {b: j for j, b in enumerate(self.fit_benchmarks_)}
        values = self._dense(self.fit_models_, self.fit_benchmarks_)
        self.completer_ = restore_state(fit["state"], values)
        self._scale = dict(snapshot.benchmarks.select("benchmark_id", "scale").iter_rows())
        self._percent = np.array([self._scale[b] == "percent" for b in self.fit_benchmarks_])
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
    def fit(
        cls,
        scores: pl.DataFrame,
        *,
        level: float = 0.9,
        method: str = "bayes",
        min_per_model: int = MIN_PER_MODEL,
        min_per_benchmark: int = MIN_PER_BENCHMARK,
        progress: Progress | None = None,
        **method_params: Any,
    ) -> BenchPress:
        """A predictor of your own matrix, fitted in memory like a published snapshot.

        `scores`: a long Polars frame with columns `model, benchmark, score` and optionally
        `scale` ("percent", the default, or "unbounded"), `release_date` and `family` (per
        model; the family defaults to one read from the name) and `category` (per benchmark;
        default the registry's for known ids). The default method is fitted with that side
        information and its new-model intervals calibrated, as the pipeline does; `method`
        ("bayes" or "als") and `method_params` (e.g. `rank=3`) choose otherwise. Every model
        needs `min_per_model` scores and every benchmark `min_per_benchmark` (3 each by
        default); a frame short of them is refused with the counts. `level` is the default
        interval level of `predict` on the result. `.save(store)` publishes it.

        A fit of thousands of models takes minutes: `progress(phase, done, total)` is
        called as each step ends (the checks, the fit, each of the calibration's held-out
        groups; `predictor.util.progress`), and each step is logged at INFO on the
        `predictor.fit` logger."""
        default_level = check_level(level)  # before minutes of fitting, not after
        for message in fit_fraction_messages(_percent_columns(scores)):
            warnings.warn(message, FractionScoresWarning, stacklevel=2)
        report = FitProgress(progress)
        snapshot = fit_own_snapshot(
            scores,
            method=method,
            min_per_model=min_per_model,
            min_per_benchmark=min_per_benchmark,
            progress=report,
            **method_params,
        )
        bp = cls(snapshot)
        bp.default_level = default_level
        report("predictor", 1, 1)
        return bp

    def save(self, store: str | Path | None = None) -> str:
        """Save this predictor's snapshot (from `BenchPress.fit`) as the next calendar version
        of `store` (a directory or URI) and return the version.

        Without `store` it goes to your private line (`$BENCHPRESS_HOME/private/snapshots`),
        never to the public store that `BenchPress.load()` and `benchpress predict` read:
        `BenchPress.load(private=True)` (or `load(version, private=True)`) loads it back. With
        a folder, `BenchPress.load(store)` and `from_pretrained(store)` read its newest version
        back, `load(version, store=store)` a pinned one. The public stores
        (`$BENCHPRESS_HOME/snapshots`, the `BENCHPRESS_PUBLISH_URI` one) are refused. Saving
        identical content again publishes nothing and returns the version that holds it."""
        if store is None:
            target, reserved = open_store(private_store_dir()), public_versions()
        else:
            check_own_target(store)
            target, reserved = open_store(store), set()
        return save_snapshot(self.snapshot, target, reserved=reserved)

    @classmethod
    def load(
        cls,
        version: str | Path = "latest",
        store: str | Path | None = None,
        *,
        private: bool = False,
    ) -> BenchPress:
        """Load a published version ("latest" = newest) from `store` or the default stores
        (BENCHPRESS_HOME's store, then the snapshot bundled with the package).

        Your own matrices (`BenchPress.fit(frame).save()`) are in the private line, read only
        with `private=True`. Without either, `version` may also be a folder as a `Path` (text is
        always a version): a store written by `save(path)` (its newest version) or one
        snapshot folder.

        `version` may pin the manifest too, as container images are pinned:
        `"2026.12.07.3@sha256:<64 hex>"` (the digest `snapshots show` prints) loads only that
        exact manifest, and anything else is a `SnapshotError` naming both digests.

        `store` is a directory or a URI (`s3://bucket/prefix`, `https://host/path`): a remote
        version is cached under BENCHPRESS_HOME/cache and verified, so a pinned version loads
        offline once cached; "latest" falls back to the newest cached one if unreachable."""
        folder = None if store is not None or private else folder_reference(version)
        if folder is not None:  # with a store, `version` names a version in it, never a folder
            directory, expected = snapshot_in(folder)
            return cls(load_snapshot(directory, expected))
        name, digest = parse_pin(str(version))
        if private and store is not None:
            raise ValueError("give either store or private=True, not both")
        if private:
            directory = private_store().resolve(name, digest)
        elif store is None:
            if (hint := folder_hint(name)) is not None:
                raise SnapshotError(hint)
            try:
                directory = resolve_version(name, default_stores())
            except SnapshotError as exc:
                raise private_hint(exc, name) from None
        else:
            directory = open_store(store).resolve(name, digest)
        return cls(load_snapshot(directory, directory.name, digest))

    @classmethod
    def catalogue(cls) -> BenchPress:
        """The newest published snapshot (else the bundled one), kept per version directory:
        snapshots are immutable, so a kept one never goes stale. Reference models a snapshot
        lacks are looked up here (`predictor.reference_names`)."""
        directory = resolve_version("latest", default_stores())
        key = str(directory)
        if key not in _CATALOGUE:
            _CATALOGUE.clear()  # one at a time: a snapshot's fit is a few MB
            _CATALOGUE[key] = cls(load_snapshot(directory))
        return _CATALOGUE[key]

    @classmethod
    def from_pretrained(cls, name: str | Path = "latest") -> BenchPress:
        """A named bundled snapshot ("microsoft/benchpress-v1", `predictor.snapshots.pretrained`), a
        version string, "latest", or a folder: a snapshot directory or a store written by
        `save(path)` (its newest version); any of these but "latest" pinned by digest with
        `@sha256:<64 hex>`."""
        name = str(name)
        base, digest = parse_pin(name) if "@sha256:" in name else (name, None)
        if (pretrained := resolve_pretrained(base)) is not None:
            return cls(load_snapshot(pretrained, digest=digest))
        path = Path(base)
        if base not in ("latest",) and path.is_dir():
            directory, expected = snapshot_in(path)
            return cls(load_snapshot(directory, expected, digest))
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
        return dense_matrix(self.snapshot.cells, row_ids=models, column_ids=benchmarks)[0]

    def matrix(self) -> MatrixView:
        """The published matrix (every resolved cell), models x benchmarks, NaN = missing."""
        values = self._dense(self.models, self.benchmarks)
        return MatrixView(
            values, self.models, self.benchmarks, [self._scale[b] for b in self.benchmarks]
        )

    def scores(self) -> pl.DataFrame:
        """Observed cells with provenance: which source, URL and payload said it, and when
        (and, in snapshots that record them, the row, the source's names and the setting)."""
        wanted = list(SCORES_COLUMNS)
        cells = self.snapshot.cells
        return cells.select([c for c in wanted if c in cells.columns])

    # ---------------------------------- the fitted matrix (`predictor.fitted_matrix`)
    @property
    def fit_columns(self) -> Mapping[str, int]:
        """Fitted benchmark id -> its column in the fitted matrix (`fit_benchmarks_` order);
        `b in bp.fit_columns` asks whether benchmark id `b` is fitted. Read-only."""
        return MappingProxyType(self._column)

    def observed_values(self, models: Sequence[str], benchmarks: Sequence[str]) -> np.ndarray:
        """The snapshot's observed scores of `models` x `benchmarks` (ids) as a dense array,
        NaN where a cell has none."""
        return self._dense(list(models), list(benchmarks))

    def scale_of(self, benchmark: str) -> str:
        """The scale of a snapshot benchmark (an id): `"percent"` (0-100) or `"unbounded"`
        (Elo, dollars, other open scales)."""
        return self._scale[benchmark]

    # -------------------------------------------------------------- prediction
    def probe_row(self, probe_scores: ProbeMapping, warn_fractions: bool = True) -> np.ndarray:
        """A new model's `{benchmark name: score}`, checked, as one row over the fitted
        benchmarks (NaN: not given): names resolved, each a fitted benchmark given once, scores
        finite numbers in the benchmark's range (`ProbeScoreError` says which and why); percent
        scores all in 0-1 are converted from fractions, with a warning (`warn_fractions`;
        `_convert_fractions`). A score may be a
        `(score, standard_error)` pair (`Measured`): its score goes into the row, its standard
        error into `probe_rows`' second row."""
        return self.probe_rows(probe_scores, warn_fractions)[0]

    def probe_rows(
        self, probe_scores: ProbeMapping, warn_fractions: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """(`probe_row`, the standard error each score was given with over the same
        benchmarks: NaN where none was, or the benchmark was not given). A standard error
        that is not a finite number >= 0, or that is implausibly large for the benchmark
        (over 50 points on a percent one, the largest spread a 0-100 score can have), is a
        `ProbeScoreError` naming the benchmark."""
        if not isinstance(probe_scores, Mapping):
            kind = type(probe_scores).__name__
            raise TypeError(f"probe_scores must be a mapping of benchmark -> score, got {kind}")
        if not probe_scores:
            raise ProbeScoreError("probe_scores is empty: give at least one benchmark score")
        row = np.full(len(self.fit_benchmarks_), np.nan)
        stderr = np.full(len(self.fit_benchmarks_), np.nan)
        for name, given in probe_scores.items():
            benchmark = self.resolve_benchmark(name)
            if benchmark not in self._column:
                raise ProbeScoreError(
                    f"benchmark {quoted(benchmark)} has too few observations in snapshot "
                    f"{self.version} to be used as a probe"
                )
            raw, error = split_measured(quoted(name), given)
            if isinstance(raw, bool) or not isinstance(raw, int | float | np.number):
                raise TypeError(f"score for {quoted(name)} must be a number, got {quoted(raw)}")
            try:
                value = float(raw)
            except OverflowError:  # an int beyond the float range
                raise ProbeScoreError(
                    f"score for {quoted(name)} is implausibly large (no float)"
                ) from None
            if not math.isfinite(value):
                raise ProbeScoreError(f"score for {quoted(name)} must be finite, got {quoted(raw)}")
            if self._scale[benchmark] == "percent" and not 0.0 <= value <= 100.0:
                raise ProbeScoreError(
                    f"score for {quoted(name)} must lie in 0-100 (percent), got {value:g}"
                )
            if abs(value) > _UNBOUNDED_LIMIT:
                raise ProbeScoreError(f"score for {quoted(name)} is implausibly large: {value:g}")
            low, high = self._range.get(benchmark, (-math.inf, math.inf))
            if not low <= value <= high:
                raise ProbeScoreError(
                    f"score for {quoted(name)} lies outside the valid range of {benchmark} "
                    f"({low:g} to {high:g}): {value:g}"
                )
            if error is not None:
                self._check_stderr(name, benchmark, error)
            column = self._column[benchmark]
            if not np.isnan(row[column]):
                raise ProbeScoreError(f"benchmark {benchmark!r} is given twice (as {quoted(name)})")
            row[column] = value
            stderr[column] = np.nan if error is None else error
        if warn_fractions:
            self._convert_fractions(row, stderr)
        return row, stderr

    def _check_stderr(self, name: str, benchmark: str, error: float) -> None:
        """A standard error no score of `benchmark` can have is refused, naming it."""
        if self._scale[benchmark] == "percent" and error > _MAX_PERCENT_STDERR:
            raise ProbeScoreError(
                f"standard error for {quoted(name)} must be at most {_MAX_PERCENT_STDERR:g} "
                f"points on a percent benchmark, got {error:g}"
            )
        if error > _UNBOUNDED_LIMIT:
            raise ProbeScoreError(
                f"standard error for {quoted(name)} is implausibly large: {error:g}"
            )

    def measurement_noise(self, benchmark: str, score: float, stderr: float | None = None) -> Noise:
        """The noise an observed `score` of `benchmark` (an id) is compared with: its
        standard error when one is known (`stderr`: given, or from a results file), else
        the benchmark's default (`predictor.results.noise.published_noise`: 1 point or the
        binomial error over its items on percent benchmarks, an arena's typical interval on
        Elo ones, none on other open scales). `source` says which."""
        if stderr is not None and math.isfinite(stderr):
            return Noise(float(stderr), "given")
        return published_noise(benchmark, self._scale[benchmark], self._unit.get(benchmark), score)

    @cached_property
    def _unit(self) -> dict[str, str | None]:
        table = self.snapshot.benchmarks
        if "unit" not in table.columns:
            return {}
        return dict(table.select("benchmark_id", "unit").iter_rows())

    def fold_in_noise(self, row: np.ndarray, stderr: np.ndarray) -> np.ndarray | None:
        """The measurement noise to add in the fold-in (`noise_sd` of the completer
        contract) for scores `row` given with standard errors `stderr` (NaN: none): what
        each standard error exceeds the noise a published score of its benchmark already
        carries (`measurement_noise`'s default), sqrt(se^2 - default^2), since the fit's
        own noise holds that much. None when no score is noisier than that: the fold-in is
        then the one of exact scores (a full run's standard error changes nothing)."""
        noisy = np.flatnonzero(np.isfinite(row) & np.isfinite(stderr) & (stderr > 0))
        if not len(noisy):
            return None
        extra = np.full(len(row), np.nan)
        for j in noisy:
            benchmark = self.fit_benchmarks_[j]
            published = self.measurement_noise(benchmark, float(row[j])).sd
            extra[j] = math.sqrt(max(0.0, float(stderr[j]) ** 2 - published**2))
        return extra if np.nansum(extra) > 0 else None

    def _convert_fractions(self, row: np.ndarray, stderr: np.ndarray) -> None:
        """Scores are percent (0-100): when every percent score given lies in 0-1 and one is
        below any score the fit saw on its benchmark, they are fractions, converted in place
        (x100, their standard errors too) with one warning; else they are kept with a warning
        (a weak model). A fraction-like score beside percent ones is kept and named in a
        warning of its own (`predictor.util.fraction_scores`). Open scales are never looked
        at."""
        columns = np.flatnonzero(np.isfinite(row) & self._percent)
        given = [(self.fit_benchmarks_[c], float(row[c])) for c in columns]
        if all_fractions(given) and not self._plausible_as_percent(row, columns):
            row[columns] *= 100.0
            stderr[columns] *= 100.0  # NaN (none given) stays NaN
            for c in columns[np.isfinite(stderr[columns])]:
                self._check_stderr(self.fit_benchmarks_[c], self.fit_benchmarks_[c], stderr[c])
            warnings.warn(converted_message(given), FractionScoresWarning, stacklevel=4)
            return
        if all_fractions(given):
            warnings.warn(kept_message(given), FractionScoresWarning, stacklevel=4)
            return
        for message in beside_percent_messages(*split_fractions(given)):
            warnings.warn(message, FractionScoresWarning, stacklevel=4)

    def _plausible_as_percent(self, row: np.ndarray, columns: np.ndarray) -> bool:
        """Whether scores of at most 1 read as percentages are each at or above the lowest
        score the fit saw on its benchmark: a weak model near zero on hard benchmarks
        (hle=0.4, frontiermath=0) is such a model, not fractions; 0.46 on GPQA Diamond,
        where no model scored under 20, is a fraction."""
        floor = self._lowest_observed
        return bool(np.all(row[columns] >= floor[columns]))

    @cached_property
    def _lowest_observed(self) -> np.ndarray:
        """Each fitted benchmark's lowest observed score in the snapshot (inf: none)."""
        lowest = dict(
            self.snapshot.cells.group_by("benchmark_id").agg(pl.col("score").min()).iter_rows()
        )
        return np.array(
            [
                lowest.get(b, math.inf) if lowest.get(b) is not None else math.inf
                for b in self.fit_benchmarks_
            ],
            dtype=float,
        )

    def read_results(
        self,
        paths: str | os.PathLike | Sequence[str | os.PathLike],
        overrides: Mapping[tuple[str, str | None], str] | Sequence[str] | None = None,
    ) -> pl.DataFrame:
        """Results files (lm-eval, Inspect, Every Eval Ever, HELM, tidy CSV/JSON; files,
        folders, globs) as one tidy frame (`predictor.results.RESULT_SCHEMA`) on this
        snapshot's benchmark ids.

        Every row of every file is kept; `status` says which are usable probe scores
        (`mapped`) and why the others are not (`unmapped`, `other_metric`, `not_run`, and
        `not_fitted`: a benchmark of ours this snapshot's fit does not hold). A tidy table's
        benchmark names are resolved like any name here. `overrides`: `--map` items
        (`["my_task=gpqa_diamond"]`) or their parsed mapping. A file that cannot be used
        raises `ResultsError` naming it, the field and what to do."""
        if overrides is not None and not isinstance(overrides, Mapping):
            overrides = parse_overrides(overrides)
        return self.on_snapshot(read_files(paths, overrides))

    def on_snapshot(self, frame: pl.DataFrame) -> pl.DataFrame:
        """A results frame (from `predictor.results.read_results`) on this snapshot's ids:
        names resolved, `not_fitted` rows marked, a tidy file's fractions on percent
        benchmarks converted (with a warning), every usable score in its range."""
        percent = {b for b, scale in self._scale.items() if scale == "percent"}
        return on_snapshot(
            frame, self.resolve_benchmark, self._column, self._fit_ranges, self.version, percent
        )

    @cached_property
    def _fit_ranges(self) -> dict[str, tuple[float, float]]:
        """Valid range of every fitted benchmark (percent ones 0-100 even without bounds)."""
        return {
            b: (0.0, 100.0) if self._scale[b] == "percent" else self._range[b]
            for b in self.fit_benchmarks_
            if self._scale[b] == "percent" or b in self._range
        }

    def _scores_and_units(
        self, probe_scores: ProbeInput, model: str | None, allow_limited: bool = False
    ) -> tuple[ProbeMapping, bool, str | None]:
        """(scores, whether every score was converted from a unit its file states, the
        model's name: `model` as given, else the one model of the results). A results
        file's score comes with its standard error where the file states one, or its item
        count (`ResultInputs.measured`). Scores of a run over part of the items (files, a
        frame, or `run_probe_benchmarks(limit=...)`'s answer) are refused unless
        `allow_limited` (`predictor.results.limited`)."""
        if isinstance(probe_scores, Mapping):
            frame = getattr(probe_scores, "frame", None)  # `ProbeScores` of a probe run
            limited_run = getattr(probe_scores, "limited", False) is True
            if limited_run and isinstance(frame, pl.DataFrame):
                limited_checked(frame, allow_limited)
            return probe_scores, False, model
        if isinstance(probe_scores, pl.DataFrame):
            frame = self.on_snapshot(probe_scores)
        elif _is_paths(probe_scores):
            try:
                frame = self.read_results(probe_scores)
            except ResultsError as exc:
                text = probe_scores if isinstance(probe_scores, str) else ""
                if "=" in text and not Path(text).exists():  # "gpqa_diamond=80": CLI syntax
                    raise ResultsError(
                        text,
                        "no such file or folder",
                        hint="probe_scores is a mapping {benchmark: score} such as "
                        '{"gpqa_diamond": 80}, a results frame, or results file paths',
                    ) from None
                raise exc from None
        else:
            return probe_scores, False, model  # `probe_row` says what it takes
        frame = limited_checked(frame, allow_limited, model)
        inputs = summarise(frame, model)
        if not inputs.scores:
            scores_in(frame, model)  # raises: no result maps onto a benchmark of ours
        return inputs.measured, inputs.units_known, inputs.model or model

    @cached_property
    def _model_dates(self) -> dict[str, tuple[str | None, str | None]]:
        """model id -> (release date, where it comes from) of the snapshot's models table."""
        models = self.snapshot.models
        if "release_date" not in models.columns:
            return {}
        source = (
            models["date_source"]
            if "date_source" in models.columns
            else pl.Series([None] * models.height)
        )
        return {
            m: (None if d is None else str(d)[:10], src)
            for m, d, src in zip(models["model_id"], models["release_date"], source, strict=True)
        }

    def identify(self, model: str | None, base: str | None = None) -> tuple[str, str | None, str]:
        """(basis, the snapshot model whose side information applies, how it was derived)
        for a model's name: a model this snapshot knows (`openai/gpt-4o` resolves as
        `gpt-4o` does); a fine-tune, merge, quantisation or adapter of one, by `base` or by
        its name (`qwen3-32b-sft-v2`: `predictor.names.model_names.derived_base`); else none."""
        if base is not None:
            if not isinstance(base, str) or not base.strip():
                raise ProbeScoreError(f"base must be a non-empty name, got {quoted(base)}")
            return BASIS_BASE, self._one_model(base.strip(), strict=True), "given"
        if model is None:
            return BASIS_NONE, None, ""
        if (known := self._one_model(model)) is not None:
            return BASIS_KNOWN, known, ""
        name = model
        while (derived := derived_base(name)) is not None:
            name, how = derived
            if (known := self._one_model(name)) is not None:
                return BASIS_BASE, known, f"{how}, from the name"
        return BASIS_NAME, None, ""

    def _one_model(self, name: str, strict: bool = False) -> str | None:
        """The snapshot model `name` denotes for its side information: settings of one
        model (`o3`: o3-high, o3@low, ...) share their date and family, so any of them does
        (the first); None when unknown or ambiguous across models (`strict`: raise)."""
        try:
            return self.resolve_model(name) if strict else self.resolve_model.find(name)
        except AmbiguousNameError as exc:
            sides = {(self._model_dates.get(m), model_family(m)) for m in exc.suggestions}
            if len(sides) == 1:
                return sorted(exc.suggestions)[0]
            if strict:
                raise
        return None

    @cached_property
    def _fitted_years(self) -> tuple[float, float] | None:
        """(earliest, newest) release date of the fit's models as fractional years, as the
        fit used them; None when the fit uses no dates."""
        completer = self.completer_
        if completer.new_model_side()[0] is None:
            return None
        kept = getattr(completer, "model_features_", None)
        years = np.empty(0)
        if kept is not None and np.size(kept):
            scaled = np.asarray(kept, dtype=float)[:, 0] * completer.feature_std_[0]
            years = scaled + completer.feature_mean_[0]
        if not np.isfinite(years).any():  # states that kept no features: the models table
            dates = self._model_dates
            years = np.array(
                [fractional_year(dates.get(m, (None, None))[0]) for m in self.fit_models_]
            )
        years = years[np.isfinite(years)]
        return (float(years.min()), float(years.max())) if len(years) else None

    @property
    def release_date_range(self) -> tuple[str, str] | None:
        """The release dates a new model may be given (`predict(release_date=...)`, and
        wherever else a date is taken), as ISO days: from `DATE_MARGIN_MONTHS` (12) before
        the earliest release date of the fit's models to as long after the newest. Further
        out the fit's date trend would be extrapolated. None when the fit uses no dates."""
        years = self._fitted_years
        if years is None:
            return None
        margin = DATE_MARGIN_MONTHS / 12.0
        return _year_to_day(years[0] - margin), _year_to_day(years[1] + margin)

    def _within_release_range(self, year: float) -> float:
        """`year` moved into `release_date_range` (unchanged when it lies inside)."""
        allowed = self.release_date_range
        if allowed is None:
            return year
        low, high = (fractional_year(day) for day in allowed)
        return min(max(year, low), high)

    def _check_release_year(self, year: float, given: str) -> None:
        """`ReleaseDateError` naming `release_date` and the range when a given date lies
        outside `release_date_range`."""
        if self._within_release_range(year) == year:
            return
        earliest, newest = self.release_date_range or ("", "")
        first, last = (_year_to_day(y) for y in self._fitted_years or (year, year))
        raise ReleaseDateError(
            f"release_date {quoted(given)} is outside the dates this snapshot's fit can use: "
            f"{earliest} to {newest} (its models' release dates, {first} to {last}, and "
            f"{DATE_MARGIN_MONTHS} months either side); further out the trend in release "
            "dates would be extrapolated",
            earliest,
            newest,
        )

    def side_for(
        self,
        model: str | None = None,
        family: str | None = None,
        release_date: str | date | datetime | None = None,
        base: str | None = None,
    ) -> tuple[SideUsed, np.ndarray | None, str | None]:
        """What a new model is folded in with: (`SideUsed` for the answer, its features in
        original units (NaN: a date to infer from the probes) or None when the fit used no
        dates, its family or None).

        In order: `family` and `release_date` as given; a model the snapshot knows (by
        `model`, in any spelling `resolve_model` takes) keeps its own date and family; a
        derivative of a known model (`base`, or a name such as `qwen3-32b-sft-v2`) takes the
        base's; otherwise the family is read from the name (`predictor.names.families`) and the
        date is unknown, inferred jointly with the model's vector (never the fit's newest
        day). A date the snapshot only knows as the day a source first listed the model is
        not a release date: it is inferred too. A family the fit does not know gets the
        population prior."""
        for name, value in (("model", model), ("family", family)):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ProbeScoreError(f"{name} must be a non-empty name, got {quoted(value)}")
        year = None
        if release_date is not None:
            try:
                year = checked_release_date(release_date)
            except ValueError:
                raise ProbeScoreError(
                    f"release_date must be a date (YYYY-MM-DD), got {quoted(release_date)}"
                ) from None
            self._check_release_year(year, _iso_day(release_date))
        basis, known, derivation = self.identify(model, base)
        chosen = family.strip() if family is not None else None
        if chosen is None and (known is not None or model is not None):
            chosen = model_family(known if known is not None else model)
        _, known_families = self.completer_.new_model_side()
        features = unknown_features(self.completer_)  # unless something below knows it
        shown_date = source = note = None
        if features is not None:
            own_date, own_source = self._model_dates.get(known, (None, None))
            if year is not None:
                features = np.array([year])
                shown_date, source = _iso_day(release_date), DATE_GIVEN
            elif own_date is not None and own_source != "first_seen":
                own_year = checked_release_date(own_date)
                used = self._within_release_range(own_year)
                features = np.array([used])
                shown_date, source = own_date, own_source or "snapshot"
                if used != own_year:  # a snapshot model older or newer than the fit's
                    shown_date = _year_to_day(used)
                    earliest, newest = self.release_date_range or ("", "")
                    note = (
                        f"{known}'s release date {own_date} lies outside the dates the fit "
                        f"can use ({earliest} to {newest}): {shown_date} was used"
                    )
            else:
                source = DATE_INFERRED
                if own_date is not None:
                    note = f"{known} has no stated release date (first listed {own_date})"
        side = SideUsed(
            model=model,
            family=chosen,
            family_known=chosen is not None and chosen in known_families,
            release_date=shown_date,
            release_date_source=source,
            basis=basis,
            known_model=known if basis == BASIS_KNOWN else None,
            base_model=known if basis == BASIS_BASE else None,
            derivation=derivation or None,
            note=note,
        )
        return side, features, chosen

    def _with_inferred_date(
        self,
        side: SideUsed,
        row: np.ndarray,
        features: np.ndarray | None,
        group: str | None,
        noise: Mapping[str, np.ndarray] | None = None,
    ) -> SideUsed:
        """`side` with the release date the fold-in inferred from the probes (mean, sd)."""
        if not side.date_inferred or features is None:
            return side
        inferred = getattr(self.completer_, "inferred_features", None)
        found = (
            None
            if inferred is None
            else inferred(row, features=features, group=group, **(noise or {}))
        )
        if found is None:
            return replace(side, release_date=None, release_date_source=None)
        mean, sd = float(found[0][0]), float(found[1][0])
        return replace(side, release_date=_year_to_day(mean), release_date_sd_months=sd * 12.0)

    def predict(
        self,
        probe_scores: ProbeInput,
        level: float | None = None,
        targets: str | Sequence[str] | None = None,
        model: str | None = None,
        handle_missing: str = "interpolate",
        family: str | None = None,
        release_date: str | date | datetime | None = None,
        base: str | None = None,
        allow_limited: bool = False,
        *,
        convert_fractions: bool = True,
    ) -> Predictions:
        """Predict every fitted benchmark for a new model from its probe scores.

        `probe_scores`: {benchmark: score}, a score optionally with its standard error
        (`(74.0, 1.5)`, `Measured`); or a results frame (`read_results`) or results files,
        folders and globs, whose usable rows are the scores, each with the file's standard
        error or the binomial one over its items (`model` picks one model when they hold
        several). A standard error above the noise a published score of the benchmark
        carries is added to the probe's noise in the fold-in (`fold_in_noise`): the probe
        moves the answer less and the intervals widen; `.stderr` lists them. The model is
        folded in against the snapshot's benchmark factors (no refit) with the side
        information the fit used, decided by `side_for`: `family` and `release_date` as
        given; else a model the snapshot knows (`model`, or the one model of the files)
        keeps its own; a fine-tune, merge or quantisation of a known model (`base`, or read
        from the name) takes the base's; otherwise the family is read from the name and the
        release date inferred from the probe scores. The
        answer's `.side` says which was used and why.
        Probes come back unchanged with `observed=True` and a zero-width interval. `targets`
        (a profile name or benchmark names, as elsewhere) keeps only those benchmarks.
        `handle_missing`: probes on benchmarks this snapshot lacks (known elsewhere), or has
        with too few scores to fit, are left out with a `MissingProbesWarning` naming them
        and why ("interpolate", while another probe is left) or refused ("error"); see
        `predictor.missing_probes`. `level` defaults to `default_level` (0.9 unless
        `BenchPress.fit` was given another).
        `allow_limited`: scores of a run over part of the items (lm-eval's or Inspect's
        `limit`, a smoke test) are refused (`ResultsError` naming the file and the limit)
        unless True, then used with a `LimitedScoresWarning`; a full run's score of the same
        benchmark is always preferred (`predictor.results.limited`).
        Scores are percentages on percent benchmarks: when every percent score given lies in
        0-1 they are read as fractions, converted to percent (x100) with a
        `FractionScoresWarning`; `convert_fractions=False` keeps them as given (a model that
        really scores under 1%), as scores converted from the unit a results file states
        always are (`predictor.util.fraction_scores`).
        """
        level = self.default_level if level is None else level
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
        scores, units_known, name = self._scores_and_units(probe_scores, model, allow_limited)
        side, features, group = self.side_for(name, family, release_date, base)
        scores = self._fitted_probes(split_probes(self, scores, handle_missing), handle_missing)
        # scores converted from the files' own units cannot be fractions mistaken for percent
        row, stderr = self.probe_rows(scores, warn_fractions=convert_fractions and not units_known)
        noise = self._noise_keyword(row, stderr)
        side = self._with_inferred_date(side, row, features, group, noise)
        mean, low, high, within = self.completer_.fold_in_summary(
            row, level, TRUST_WIDTH, features=features, group=group, **noise
        )
        # the recipe ALS has no predictive distribution: no trust figure
        trust = (
            np.full(len(row), np.nan) if within is None else np.where(self._percent, within, np.nan)
        )
        # open scales are fitted linearly and can run past what the benchmark allows (negative
        # dollars or minutes); every true score lies in the valid range, so the clipped
        # interval covers at least as often
        mean, low, high = (self.in_range(a) for a in (mean, low, high))
        kept = self._targets(targets)
        # plain floats once per array (numpy scalars one by one are slow)
        low, high = np.minimum(low, mean).tolist(), np.maximum(high, mean).tolist()
        observed, mean = (~np.isnan(row)).tolist(), mean.tolist()
        trust = [None if math.isnan(t) else t for t in trust.tolist()]
        return Predictions(
            {
                benchmark: Prediction(
                    benchmark=benchmark,
                    score=mean[j],
                    low=low[j],
                    high=high[j],
                    level=level,
                    observed=observed[j],
                    p_within_5=trust[j],
                )
                for j, benchmark in enumerate(self.fit_benchmarks_)
                if kept is None or benchmark in kept
            },
            side=side,
            stderr={
                self.fit_benchmarks_[j]: float(stderr[j]) for j in np.flatnonzero(~np.isnan(stderr))
            },
        )

    def _fitted_probes(self, scores: Any, handle_missing: str) -> Any:
        """`scores` without the probes on benchmarks this snapshot has but could not fit (too
        few scores: nothing places a model by them), each named in a `MissingProbesWarning`
        with `handle_missing="interpolate"`; kept for `probe_rows` to refuse with "error", or
        when no probe would be left. Names that do not resolve are kept for it to refuse."""
        if handle_missing != "interpolate" or not isinstance(scores, Mapping):
            return scores
        unfitted: dict[object, str] = {}
        for name in scores:
            try:
                benchmark = self.resolve_benchmark(name)
            except (LookupError, ValueError, TypeError):
                continue
            if benchmark not in self._column:
                unfitted[name] = benchmark
        if not unfitted or len(unfitted) == len(scores):
            return scores
        kept = {n: v for n, v in scores.items() if n not in unfitted}
        shown = ", ".join(b if n == b else f"{n} ({b})" for n, b in unfitted.items())
        warnings.warn(
            f"{shown}: too few scores in snapshot {self.version} to be used as a probe, left "
            f"out; predicting from the other {len(kept)} ({', '.join(map(str, kept))}); "
            "handle_missing='error' (--handle-missing error) refuses instead",
            MissingProbesWarning,
            stacklevel=3,
        )
        return kept

    def _noise_keyword(self, row: np.ndarray, stderr: np.ndarray) -> dict[str, np.ndarray]:
        """`{"noise_sd": ...}` for the completer's fold-in when a score is noisier than a
        published one (`fold_in_noise`), else nothing: exact probes call it as before."""
        noise = self.fold_in_noise(row, stderr)
        return {} if noise is None else {"noise_sd": noise}

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
        chosen = resolve_targets(targets, self.fit_benchmarks_, self.resolve_benchmark)
        return None if chosen is None else set(chosen)

    # ------------------------------------------------------ trust (predictor.trust)
    def select_probes(
        self,
        k=5,
        budget=None,
        targets=None,
        allowlist=None,
        costs=None,
        progress=None,
        *,
        runnable=None,
        chat=False,
    ):
        """Greedy probe set for this snapshot; see `predictor.trust.probes`.

        `runnable="lm_eval"` or `"inspect"` chooses only among benchmarks that tool has a
        task for (`chat=True`: only tasks a chat endpoint can run, i.e. generative ones);
        `progress(done, total)` is called as candidates are scored (for a progress bar)."""
        return select_probes_for(
            self, k, budget, targets, allowlist, costs, progress, runnable, chat
        )

    def plan_probes(
        self,
        runnable="lm_eval",
        budget_tokens=DEFAULT_BUDGET_TOKENS,
        *,
        chat=False,
        targets=None,
        allowlist=None,
        progress=None,
    ):
        """The probe plan harness `runnable` runs within `budget_tokens` tokens: benchmarks
        and the items each runs on (a seeded subset, or all), chosen by expected error per
        token; see `predictor.trust.probe_plan`. `chat=True`: only tasks a chat endpoint can
        run; `targets`, `allowlist`, `progress` as in `select_probes`."""
        return plan_probes_for(self, runnable, budget_tokens, chat, targets, allowlist, progress)

    def compare_models(self, probes, target_benchmarks, names=None, level=0.9):
        """Per-benchmark predicted order with P(A > B) and tie groups."""
        return compare_models(self, probes, target_benchmarks, names, level)

    def compare_with_known_models(self, predictions_or_probes, reference_models, **kwargs):
        """Where a new model would rank among snapshot models (`.summary()`, `.to_frame()`)."""
        return compare_with_known_models(self, predictions_or_probes, reference_models, **kwargs)

    def what_to_run_next(
        self,
        known_scores,
        targets=None,
        budget=None,
        top=5,
        *,
        model=None,
        allow_limited=False,
        **kwargs,
    ):
        """Unobserved benchmarks ranked by target-interval narrowing per unit cost.

        `known_scores` as `predict` takes them (a mapping, a results frame, files); `model`
        (the model's name, or the one to pick from the files), `family`, `release_date` and
        `allow_limited` as in `predict`."""
        known, units_known, name = self._scores_and_units(known_scores, model, allow_limited)
        if units_known:  # converted from the files' own units: never fractions
            kwargs["convert_fractions"] = False
        return what_to_run_next(self, known, targets, budget, top, model=name, **kwargs)

    def suspicious_scores(self, threshold=3.5):
        """Observed cells far from their leave-one-out fold-in prediction (cached)."""
        return suspicious_scores(self, threshold)

    # ------------------------------------------------------- joint predictive (tracking)
    def predictive_draws(
        self,
        probe_scores: ProbeMapping,
        n: int = 4000,
        random_state: int = 0,
        level: float = 0.9,
        *,
        model: str | None = None,
        family: str | None = None,
        release_date: str | date | datetime | None = None,
        base: str | None = None,
        handle_missing: str = "interpolate",
        convert_fractions: bool = True,
    ) -> tuple[list[str], np.ndarray]:
        """(fitted benchmarks, (n, benchmarks) array): joint predictive draws of a new model.

        What `predict` summarises per benchmark, kept joint: the fraction of draws in which
        several benchmarks all pass a threshold is the probability that they all do (not the
        product of the marginals: benchmarks that load on the same factors move together).
        The draws' central `level` range is `predict`'s interval at that level (with the same
        `model`, `family`, `release_date` and `base`; a centre past a benchmark's valid range
        or on the flat end of its link is moved onto that edge in both,
        `ScaleTransform.interval`); probes come back as given (with a standard error, as in
        `predict`, they weigh less in the fold-in; `predictor.tracking.checkpoints` draws
        their measurement noise for criteria); every draw is clipped to its benchmark's
        valid range (`in_range`). Seeded: the same arguments give the same draws. A probe
        the fit cannot use is left out or refused as `handle_missing` says, and fractions
        are converted as `convert_fractions` says (`predict`)."""
        probes = split_probes(self, probe_scores, handle_missing)
        row, stderr = self.probe_rows(probes, warn_fractions=convert_fractions)
        _, features, group = self.side_for(model, family, release_date, base)
        try:
            draws = self.completer_.fold_in_draws(
                row,
                n,
                random_state,
                level,
                features=features,
                group=group,
                **self._noise_keyword(row, stderr),
            )
        except NotSupportedError:
            raise TypeError(
                f"snapshot {self.version} was fitted by a method without a predictive "
                "distribution (the recipe ALS): it has no predictive draws"
            ) from None
        return list(self.fit_benchmarks_), self.in_range(draws)

    # ------------------------------------------------- a new benchmark (the transpose)
    def predict_benchmark(
        self,
        scores: Mapping[str, object],
        scale: str = "percent",
        level: float = 0.9,
        name: str | None = None,
        top: int = 10,
    ) -> NewBenchmarkPrediction:
        """A NEW benchmark's scores for every model of the fit, from at least 3 models'
        scores on it ({model: score}, a score optionally with its standard error as in
        `predict`; names resolve as reference models do): the transpose
        of `predict`, folded in against the fitted model factors without a refit.

        Returns a `NewBenchmarkPrediction`: `.predictions` (one row per model, with its
        central `level` interval), `.ranking` (the `top` models' order with P(A > B)),
        `.similar` (the public benchmarks it behaves most like), `.next_models` (whose score
        would pin it down best) and `.summary()`. See `predictor.new_benchmark`."""
        return predict_benchmark(self, scores, scale=scale, level=level, name=name, top=top)
