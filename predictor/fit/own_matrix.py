"""A snapshot built in memory from a team's own long score frame (`BenchPress.fit`).

Teams with an internal benchmark suite, and the benchmark scripts, fit the default method on
their own `model, benchmark, score` rows, with the side information the pipeline uses for the
published snapshot: a release date per model (none given: unknown), a family per model (none
given: read from the name, `predictor.names.families`), a category per benchmark (none given: the
benchmark registry's for known ids, none for a team's own) and the valid range of the scale
(0-100 for percent scores, open otherwise). The fit, its new-model interval calibration and
the fold-in are `predictor.fit.fitting`'s, as in the pipeline.

A frame with fewer than `MIN_PER_MODEL` cells for a model or `MIN_PER_BENCHMARK` for a
benchmark is refused, naming them with their counts: their factors would rest on nothing.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import polars as pl

from predictor.fit.calibration_cache import cache_folder
from predictor.fit.dense import dense_matrix
from predictor.fit.fitting import fit_calibrated
from predictor.methods.fold_in_calibration import FoldInCalibration
from predictor.methods.registry import DEFAULT_METHOD, completer_class
from predictor.names.families import model_family
from predictor.side_information import (
    SideInformation,
    checked_release_date,
    fractional_year,
    registry_columns,
)
from predictor.snapshots.layout import draft_manifest, published_manifest
from predictor.snapshots.private_line import OWN_DESCRIPTION, OWN_ORIGIN
from predictor.snapshots.reader import (
    FORMAT_VERSION,
    Snapshot,
    SnapshotError,
    content_hash,
    list_versions,
)
from predictor.snapshots.stores import SnapshotStore
from predictor.snapshots.writer import SnapshotTables, next_version, write_manifest, write_tables
from predictor.util.paths import bundled_snapshot_dir
from predictor.util.progress import FitProgress, Progress

MIN_PER_MODEL = 3  # scores a model needs: a level and a direction to place it
MIN_PER_BENCHMARK = 3  # scores a benchmark needs (as a new benchmark: `MIN_SCORES`)
SCALES = ("percent", "unbounded")
UNPUBLISHED = "unpublished"  # the version of a fit not yet saved to a store
_REQUIRED = ("model", "benchmark", "score")
_OPTIONAL = ("scale", "release_date", "family", "category")
_PLAUSIBLE_LIMIT = 1e7  # as `BenchPress.predict`: a larger score is a typo
T = TypeVar("T")


class ScoresFrameError(ValueError):
    """The frame given to `BenchPress.fit` cannot be fitted; the message says which row or
    column and what to do."""


def _text_column(frame: pl.DataFrame, name: str) -> pl.Series:
    column = frame[name]
    if column.dtype not in (pl.String, pl.Categorical, pl.Null):
        if name == "release_date" and column.dtype in (pl.Date, pl.Datetime):
            return column.cast(pl.Date).cast(pl.String)
        raise ScoresFrameError(f"column {name!r} must hold text, got {column.dtype}")
    return column.cast(pl.String).str.strip_chars()


def _checked(scores: pl.DataFrame) -> pl.DataFrame:
    """The frame with its columns checked and typed; every problem names the row."""
    if not isinstance(scores, pl.DataFrame):
        kind = type(scores).__name__
        raise TypeError(f"scores must be a Polars DataFrame (model, benchmark, score), got {kind}")
    missing = [c for c in _REQUIRED if c not in scores.columns]
    if missing:
        raise ScoresFrameError(
            f"the frame lacks column(s) {', '.join(missing)}: give model, benchmark, score "
            f"(and optionally {', '.join(_OPTIONAL)}); it has {', '.join(scores.columns)}"
        )
    if scores.height == 0:
        raise ScoresFrameError("the frame has no rows")
    if not scores["score"].dtype.is_numeric() or scores["score"].dtype == pl.Boolean:
        raise ScoresFrameError(f"column 'score' must be numeric, got {scores['score'].dtype}")
    columns = {
        "model": _text_column(scores, "model"),
        "benchmark": _text_column(scores, "benchmark"),
        "score": scores["score"].cast(pl.Float64),
        "scale": _text_column(scores, "scale").fill_null("percent")
        if "scale" in scores.columns
        else pl.Series("scale", ["percent"] * scores.height),
    }
    for name in ("release_date", "family", "category"):
        if name in scores.columns:
            columns[name] = _text_column(scores, name).replace("", None)
    frame = pl.DataFrame(columns).with_row_index("row", offset=1)
    _check_rows(frame)
    return frame


def _first(frame: pl.DataFrame, condition: pl.Expr) -> dict[str, Any] | None:
    bad = frame.filter(condition)
    return None if bad.height == 0 else bad.row(0, named=True)


def _check_rows(frame: pl.DataFrame) -> None:
    for name in ("model", "benchmark"):
        if (row := _first(frame, pl.col(name).is_null() | (pl.col(name) == ""))) is not None:
            raise ScoresFrameError(f"row {row['row']}: empty {name}")
    if (row := _first(frame, ~pl.col("scale").is_in(SCALES))) is not None:
        raise ScoresFrameError(
            f"row {row['row']}: scale {row['scale']!r} is not one of {', '.join(SCALES)}"
        )
    if (row := _first(frame, ~pl.col("score").is_finite() | pl.col("score").is_null())) is not None:
        raise ScoresFrameError(f"row {row['row']}: score must be a finite number")
    percent_out = (pl.col("scale") == "percent") & ~pl.col("score").is_between(0.0, 100.0)
    if (row := _first(frame, percent_out)) is not None:
        raise ScoresFrameError(
            f"row {row['row']}: {row['model']} on {row['benchmark']} scores {row['score']:g}, "
            "outside 0-100 (percent); give scale 'unbounded' for Elo, dollars or ratings"
        )
    if (row := _first(frame, pl.col("score").abs() > _PLAUSIBLE_LIMIT)) is not None:
        raise ScoresFrameError(f"row {row['row']}: score {row['score']:g} is implausibly large")
    twice = frame.filter(pl.len().over("model", "benchmark") > 1)
    if twice.height:
        first = twice.row(0, named=True)
        rows = twice.filter(
            (pl.col("model") == first["model"]) & (pl.col("benchmark") == first["benchmark"])
        )["row"].to_list()
        raise ScoresFrameError(
            f"rows {', '.join(map(str, rows))}: {first['model']} on {first['benchmark']} is "
            "scored more than once; keep one score per model and benchmark"
        )
    if "release_date" in frame.columns:  # each distinct text once: a date repeats per score
        texts = frame["release_date"].drop_nulls().unique(maintain_order=True).to_list()
        bad = [text for text in texts if not _is_release_date(text)]
        if (row := _first(frame, pl.col("release_date").is_in(bad))) is not None:
            raise ScoresFrameError(
                f"row {row['row']}: release_date {row['release_date']!r} is not a date (YYYY-MM-DD)"
            )
    for name, key in (("scale", "benchmark"), ("category", "benchmark")):
        _one_per(frame, name, key)
    for name in ("release_date", "family"):
        _one_per(frame, name, "model")


def _is_release_date(text: str) -> bool:
    try:
        checked_release_date(text)
    except ValueError:
        return False
    return True


def _one_per(frame: pl.DataFrame, name: str, key: str) -> None:
    """A per-model or per-benchmark column must say one thing for each of them."""
    if name not in frame.columns:
        return
    counts = frame.filter(pl.col(name).is_not_null()).group_by(key).agg(pl.col(name).unique())
    for owner, found in counts.iter_rows():
        if len(found) > 1:
            shown = ", ".join(sorted(str(v) for v in found))
            raise ScoresFrameError(f"{key} {owner!r} has more than one {name}: {shown}")


def _check_counts(frame: pl.DataFrame, min_per_model: int, min_per_benchmark: int) -> None:
    for key, minimum in (("model", min_per_model), ("benchmark", min_per_benchmark)):
        counts = frame.group_by(key).len().filter(pl.col("len") < minimum).sort("len", key)
        if counts.height:
            shown = ", ".join(f"{k} ({n})" for k, n in counts.head(5).iter_rows())
            more = f" and {counts.height - 5} more" if counts.height > 5 else ""
            raise ScoresFrameError(
                f"{counts.height} {key}(s) have fewer than {minimum} scores: {shown}{more}; "
                f"each {key} needs at least {minimum} (min_per_{key}={minimum})"
            )


@lru_cache(maxsize=1)
def _registry() -> pl.DataFrame:
    """The benchmark registry as the bundled snapshot carries it (ids, names, categories,
    valid ranges): the defaults for known benchmark ids."""
    newest = sorted(p for p in bundled_snapshot_dir().iterdir() if p.is_dir())[-1]
    return pl.read_parquet(newest / "benchmarks.parquet").select(
        "benchmark_id", "name", "category", "lower", "upper"
    )


def _per_key(frame: pl.DataFrame, name: str, key: str) -> dict[str, str | None]:
    if name not in frame.columns:
        return {}
    rows = frame.filter(pl.col(name).is_not_null()).select(key, name).unique()
    return dict(rows.iter_rows())


def _check_ranges(frame: pl.DataFrame, benchmarks: pl.DataFrame) -> None:
    """A score outside its benchmark's valid range contradicts it: named, never fitted."""
    bounds = benchmarks.select(pl.col("benchmark_id").alias("benchmark"), "lower", "upper")
    outside = frame.join(bounds, on="benchmark").filter(
        (pl.col("score") < pl.col("lower")) | (pl.col("score") > pl.col("upper"))
    )
    if outside.height:
        row = outside.sort("row").row(0, named=True)
        raise ScoresFrameError(
            f"row {row['row']}: {row['model']} on {row['benchmark']} scores {row['score']:g}, "
            f"outside its valid range {row['lower']:g} to {row['upper']:g}"
        )


def side_information_of(
    frame: pl.DataFrame, model_ids: Sequence[str], benchmark_ids: Sequence[str]
) -> tuple[SideInformation, pl.DataFrame, pl.DataFrame]:
    """(side information in matrix order, models table, benchmarks table) of a checked frame."""
    dates = _per_key(frame, "release_date", "model")
    given_families = _per_key(frame, "family", "model")
    categories = _per_key(frame, "category", "benchmark")
    scale = dict(frame.select("benchmark", "scale").unique().iter_rows())
    names = dict(_registry().select("benchmark_id", "name").iter_rows())
    known = registry_columns(_registry(), benchmark_ids)  # unknown ids: open, no category
    families = [given_families.get(m) or model_family(m) for m in model_ids]
    category = [
        categories.get(b) or c for b, c in zip(benchmark_ids, known["categories"], strict=True)
    ]
    percent = np.array([scale[b] == "percent" for b in benchmark_ids])
    # percent scores lie in 0-100; a known open scale keeps the registry's range (Elo
    # 500-3000, a rating 0-4000), a team's own is open
    lower = np.where(percent, 0.0, known["lower"])
    upper = np.where(percent, 100.0, known["upper"])
    side = SideInformation(
        release_year=np.array([fractional_year(dates.get(m)) for m in model_ids]),
        families=tuple(families),
        floors=np.zeros(len(benchmark_ids)),
        lower=lower,
        upper=upper,
        categories=tuple(category),
    )
    counts = dict(frame.group_by("model").len().iter_rows())
    models = pl.DataFrame(
        {
            "model_id": list(model_ids),
            "name": list(model_ids),
            "n_cells": [counts[m] for m in model_ids],
            "n_sources": [1] * len(model_ids),
            "in_fit": [True] * len(model_ids),
            "family": families,
            "release_date": [dates.get(m) for m in model_ids],
            "date_source": ["given" if dates.get(m) else None for m in model_ids],
        },
        schema_overrides={"n_cells": pl.Int32, "n_sources": pl.Int32, "release_date": pl.String},
    )
    bench_counts = dict(frame.group_by("benchmark").len().iter_rows())
    benchmarks = pl.DataFrame(
        {
            "benchmark_id": list(benchmark_ids),
            "name": [names.get(b) or b for b in benchmark_ids],
            "scale": [scale[b] for b in benchmark_ids],
            "category": category,
            "lower": side.lower.tolist(),
            "upper": side.upper.tolist(),
            "floor": [None] * len(benchmark_ids),
            "n_cells": [bench_counts[b] for b in benchmark_ids],
            "in_fit": [True] * len(benchmark_ids),
        },
        schema_overrides={
            "category": pl.String,
            "floor": pl.Float64,
            "n_cells": pl.Int32,
        },
    )
    return side, models, benchmarks


def _empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


def calibration_record(calibration: FoldInCalibration | None) -> dict[str, str] | None:
    """Where a fit's new-model interval calibration came from, for its manifest (not kept
    when saved): `{"source": "computed"}`, or `{"source": "cache", "cache_key": ...,
    "cache_entry": ...}` when read from `BENCHPRESS_CALIBRATION_CACHE`; None without one."""
    if calibration is None:
        return None
    if calibration.cache_key is None:
        return {"source": "computed"}
    folder = cache_folder()
    entry = "" if folder is None else str(folder / f"{calibration.cache_key}.json")
    return {"source": "cache", "cache_key": calibration.cache_key, "cache_entry": entry}


def fit_own_snapshot(
    scores: pl.DataFrame,
    *,
    method: str = DEFAULT_METHOD,
    min_per_model: int = MIN_PER_MODEL,
    min_per_benchmark: int = MIN_PER_BENCHMARK,
    fitted_at: datetime | date | None = None,
    progress: Progress | None = None,
    **method_params: Any,
) -> Snapshot:
    """An in-memory `Snapshot` of `scores` fitted like a published one (see module doc);
    `progress` hears of each step (`predictor.util.progress`; logged at INFO in any case)."""
    cls = completer_class(method)
    report = FitProgress() if progress is None else progress
    frame = _checked(scores)
    _check_counts(frame, int(min_per_model), int(min_per_benchmark))
    values, model_ids, benchmark_ids = dense_matrix(frame, "model", "benchmark")
    side, models, benchmarks = side_information_of(frame, model_ids, benchmark_ids)
    _check_ranges(frame, benchmarks)
    scales = benchmarks["scale"].to_list()
    report("checks", 1, 1)

    def make() -> Any:
        return cls(**method_params)

    completer, _ = fit_calibrated(
        values,
        scales,
        make,
        side,
        random_state=int(method_params.get("random_state", 0)),
        progress=report,
    )
    cells = frame.select(
        pl.col("model").alias("model_id"),
        pl.col("benchmark").alias("benchmark_id"),
        "score",
        pl.lit("own").alias("source"),
        pl.lit(None, pl.String).alias("url"),
    ).sort("model_id", "benchmark_id")
    manifest = {
        "format_version": FORMAT_VERSION,
        "version": UNPUBLISHED,
        "parent": None,
        "description": OWN_DESCRIPTION,
        "origin": OWN_ORIGIN,  # kept out of the public line (`predictor.snapshots.private_line`)
        "counts": {
            "models": len(model_ids),
            "benchmarks": len(benchmark_ids),
            "cells": cells.height,
            "sources": ["own"],
        },
        "fit_params": {"method": method, **completer.get_params()},
        "built_at": None if fitted_at is None else str(fitted_at),
        "calibration": calibration_record(getattr(completer, "fold_in_calibration_", None)),
    }
    fit = {"model_ids": model_ids, "benchmark_ids": benchmark_ids, "state": completer.to_state()}
    report("snapshot", 1, 1)
    return Snapshot(
        path=Path(UNPUBLISHED),
        manifest=manifest,
        cells=cells,
        models=models,
        benchmarks=benchmarks,
        aliases=_empty(
            {"kind": pl.String, "source": pl.String, "name": pl.String, "id": pl.String}
        ),
        conflicts=_empty({"model_id": pl.String, "benchmark_id": pl.String}),
        fit=fit,
    )


def save_snapshot(
    snapshot: Snapshot,
    store: SnapshotStore,
    today: date | None = None,
    reserved: Iterable[str] = (),
) -> str:
    """Publish an in-memory snapshot to `store` as its next calendar version; returns the
    version. Content equal to the store's newest version publishes nothing and returns that
    version. Version names already used by the snapshots bundled with the package, or given
    in `reserved` (the public line's, for the private line), are never reused for other
    content (`BenchPress.load` searches both)."""
    tables = SnapshotTables(
        cells=snapshot.cells,
        models=snapshot.models,
        benchmarks=snapshot.benchmarks,
        aliases=snapshot.aliases,
        conflicts=snapshot.conflicts,
        fit=snapshot.fit,
    )
    versions = store.list_versions()
    parent = versions[-1] if versions else None
    with tempfile.TemporaryDirectory(prefix="benchpress-save-") as tmp:
        scratch = Path(tmp) / "draft"
        hashes = _staged(lambda: write_tables(tables, scratch))
        digest = content_hash(hashes)
        if parent is not None and store.read_manifest(parent).get("content_hash") == digest:
            return parent
        # a name spelt as a version but holding no snapshot (a stray folder) is passed over
        taken = {
            *versions,
            *store.taken_versions(),
            *list_versions(bundled_snapshot_dir()),
            *reserved,
        }
        version = next_version(taken, today or datetime.now(UTC).date())
        facts = {
            key: snapshot.manifest[key]
            for key in ("counts", "fit_params", "description", "origin")
            if key in snapshot.manifest
        }
        published_at = datetime.now(UTC).isoformat(timespec="seconds")
        manifest = published_manifest(
            draft_manifest(hashes, digest, facts), {}, version, parent, published_at
        )
        _staged(lambda: write_manifest(scratch, manifest))
        final = _staged(lambda: scratch.rename(Path(tmp) / version))
        return store.publish_dir(final)


def _staged(write: Callable[[], T]) -> T:
    """`write()` in the temporary folder a snapshot is staged in before its store gets it;
    an OSError there (a full or read-only temporary disk) is a `SnapshotError` saying so."""
    try:
        return write()
    except OSError as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
        raise SnapshotError(
            f"could not stage the snapshot in a temporary folder ({reason}): set TMPDIR to a "
            "writable folder with room for it"
        ) from None
