"""Side information of the published matrix for the fit: release dates, families, floors.

The default completion method uses each model's release date, its family and each
benchmark's category and chance floor (`predictor.side_information`). A model's release date
is, in this order (docs/matrix-policy.md, "Release dates"):

1. the reviewed catalogue's snapshot date (`models.csv`), when the catalogue knows the model;
2. else the date the sources state (`stated_dates`: the `release_date` column the parsers fill
   from Epoch AI's `Release date`, llm-stats' `release_date`, ARC Prize's `modelReleaseDate`,
   the BenchPress matrix's `release_date`, Aider's `released`), pooled over every setting of
   the same base model; when they disagree, the earliest (a release precedes every
   re-listing), a date stated to the day before one stated to the month or year only. The
   Open LLM Leaderboard's Hub upload day counts only where no source states a release: a
   repo is often created, private, days or weeks before the release it later carries;
3. else `first_seen`: the day the warehouse first saw one of its scores (`fetched_at`). That
   is when a user of the snapshot could have known about the model, not when it was released,
   so the fit treats it as uncertain: the date is inferred around it (`release_year_sd`).

A stated date before 2015 or after the payload stating it was fetched is impossible: it is
rejected, counted and reported (`ReleaseDates.rejected`), never used and never fatal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np
import polars as pl

from pipelines.identity.catalogue import Catalogue, CatalogueRow
from pipelines.identity.registry import Registry
from pipelines.sources import SOURCE_PRIORITY, UPLOAD_DAY_SOURCES
from predictor.names.families import model_families
from predictor.side_information import (
    FIRST_SEEN_DOUBT,
    SideInformation,
    fractional_year,
    registry_columns,
)

CATALOGUE = "catalogue"
FIRST_SEEN = "first_seen"
EARLIEST_RELEASE = date(2015, 1, 1)  # no model a source scores was released before
CONFLICT_DAYS = 31  # stated dates further apart than this are a disagreement worth showing

STATED_SCHEMA: dict[str, pl.DataType] = {
    "model_id": pl.String(),
    "source": pl.String(),
    "release_date": pl.String(),
    "fetched_at": pl.Datetime(time_zone="UTC"),
}
DATES_SCHEMA: dict[str, pl.DataType] = {
    "model_id": pl.String(),
    "release_date": pl.String(),
    "date_source": pl.String(),
    "date_sources": pl.String(),
}
REJECTED_SCHEMA: dict[str, pl.DataType] = {
    "model_id": pl.String(),
    "source": pl.String(),
    "release_date": pl.String(),
    "reason": pl.String(),
}
CONFLICT_SCHEMA: dict[str, pl.DataType] = {
    "model_id": pl.String(),
    "earliest": pl.String(),
    "latest": pl.String(),
    "days": pl.Int64(),
    "date_sources": pl.String(),
}


def catalogue_row(catalogue: Catalogue, model_id: str) -> CatalogueRow | None:
    """The catalogue row of a canonical model id (`o3-high`, `o3@medium`, `gpt-4o-20240806`)."""
    stem = model_id.split("@", 1)[0]
    return (
        catalogue.by_benchpress.get(model_id)
        or catalogue.by_model.get(stem)
        or catalogue.by_benchpress.get(stem)
    )


def base_model(catalogue: Catalogue, model_id: str) -> str:
    """The model every setting of `model_id` shares, whose release date they all take: the
    catalogue stem (`o3-high` and `o3@low` are `o3`), else the id before its setting
    (`claude-opus-4.7@xhigh` is `claude-opus-4.7`)."""
    row = catalogue_row(catalogue, model_id)
    return row.model if row is not None else model_id.split("@", 1)[0]


def stated_dates(normalized: pl.DataFrame) -> pl.DataFrame:
    """The release dates the sources state (`STATED_SCHEMA`): one row per model id, source,
    stated date and fetch of the payload stating it, from every normalized row placed on a
    model id (scored or not: a row rejected for its score still names its model). Empty for
    rows parsed before sources stated dates (no `release_date` column)."""
    needed = {"model_id", "source", "release_date", "fetched_at"}
    if normalized.height == 0 or not needed <= set(normalized.columns):
        return pl.DataFrame(schema=STATED_SCHEMA)
    return (
        normalized.filter(pl.col("model_id").is_not_null() & pl.col("release_date").is_not_null())
        .select(*STATED_SCHEMA)
        .unique()
        .sort(*STATED_SCHEMA, nulls_last=True)
    )


def _first_day(text: str) -> date | None:
    """The first day a stated date (`2025-04-16`, `2025-04`, `2025`) can mean; None when the
    text is no calendar date."""
    parts = text.split("-")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        return None
    if len(parts[0]) != 4 or any(len(p) != 2 for p in parts[1:]):
        return None
    try:
        return date(*(int(p) for p in parts), *([1] * (3 - len(parts))))
    except ValueError:
        return None


def _rejection(text: str, fetched_at: datetime | None) -> str | None:
    """Why a stated date cannot be a release date, or None when it can."""
    first = _first_day(text)
    if first is None:
        return "not a date"
    if first < EARLIEST_RELEASE:
        return f"before {EARLIEST_RELEASE.isoformat()}"
    if fetched_at is not None and first > fetched_at.date():
        return "after the payload stating it was fetched"
    return None


@dataclass(frozen=True)
class ReleaseDates:
    """What `choose_release_dates` decided: the dates (`DATES_SCHEMA`, one row per model id
    asked for), the models whose stated dates disagree by more than `CONFLICT_DAYS`
    (`CONFLICT_SCHEMA`) and the stated dates rejected as impossible (`REJECTED_SCHEMA`)."""

    dates: pl.DataFrame
    conflicts: pl.DataFrame
    rejected: pl.DataFrame


@dataclass(frozen=True)
class _Stated:
    date: str  # as stated: a day, or a month / year
    source: str  # where the chosen date is stated (the most preferred source among equals)
    listing: str  # every stated date: "source date; source date", earliest first
    latest: str  # the latest date considered beside `date`
    span_days: int  # between `date` and `latest`


def _choose_stated(statements: list[tuple[str, str]]) -> _Stated:
    """The release date of one base model from its valid (source, date) statements."""
    rank = {source: i for i, source in enumerate(SOURCE_PRIORITY)}
    released = [(s, d) for s, d in statements if s not in UPLOAD_DAY_SOURCES] or statements
    days = [(s, d) for s, d in released if len(d) == 10]
    considered = days or released  # a date stated to the day wins over a month or a year
    firsts = sorted((_first_day(d) or EARLIEST_RELEASE, d) for _, d in considered)
    earliest = firsts[0][1]
    source = min(
        (s for s, d in considered if d == earliest), key=lambda s: (rank.get(s, len(rank)), s)
    )
    listing = "; ".join(f"{s} {d}" for d, s in sorted({(d, s) for s, d in statements}))
    span = (firsts[-1][0] - firsts[0][0]).days
    return _Stated(earliest, source, listing, firsts[-1][1], span)


def choose_release_dates(
    model_ids: Sequence[str],
    catalogue: Catalogue,
    cells: pl.DataFrame,
    stated: pl.DataFrame | None = None,
) -> ReleaseDates:
    """The release date of every id in `model_ids`, where it comes from (`date_source`:
    `catalogue`, the id of the source stating it, or `first_seen`; null when nothing is
    known) and which sources state which date (`date_sources`), per the module's order.
    `cells`: the matrix cells (`fetched_at`, for first sightings); `stated`: `stated_dates`
    of the normalized rows (None: no source states a date)."""
    rejected_rows: list[tuple[str, str, str, str]] = []
    by_base: dict[str, list[tuple[str, str]]] = {}
    if stated is not None:
        for model_id, source, text, fetched_at in stated.select(*STATED_SCHEMA).iter_rows():
            reason = _rejection(text, fetched_at)
            if reason is not None:
                rejected_rows.append((model_id, source, text, reason))
                continue
            statements = by_base.setdefault(base_model(catalogue, model_id), [])
            if (source, text) not in statements:
                statements.append((source, text))
    chosen = {base: _choose_stated(statements) for base, statements in by_base.items()}
    first: dict[str, object] = {}
    if cells.height and "fetched_at" in cells.columns:
        first = dict(cells.group_by("model_id").agg(pl.col("fetched_at").min()).iter_rows())
    rows, conflicts = [], []
    for model_id in model_ids:
        row = catalogue_row(catalogue, model_id)
        found = chosen.get(base_model(catalogue, model_id))
        listing = found.listing if found is not None else None
        if row is not None and row.snapshot:
            rows.append((model_id, row.snapshot[:10], CATALOGUE, listing))
        elif found is not None:
            rows.append((model_id, found.date, found.source, listing))
        elif first.get(model_id) is not None:
            rows.append((model_id, str(first[model_id])[:10], FIRST_SEEN, None))
        else:
            rows.append((model_id, None, None, None))
        if found is not None and found.span_days > CONFLICT_DAYS:
            conflicts.append((model_id, found.date, found.latest, found.span_days, found.listing))
    return ReleaseDates(
        dates=pl.DataFrame(rows, schema=DATES_SCHEMA, orient="row"),
        conflicts=pl.DataFrame(conflicts, schema=CONFLICT_SCHEMA, orient="row"),
        rejected=pl.DataFrame(rejected_rows, schema=REJECTED_SCHEMA, orient="row")
        .unique()
        .sort("source", "model_id", "release_date"),
    )


def release_dates(
    model_ids: Sequence[str],
    catalogue: Catalogue,
    cells: pl.DataFrame,
    stated: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """model_id, release_date (YYYY-MM-DD, or YYYY-MM / YYYY as stated), date_source
    (`catalogue`, a source id or `first_seen`; null when nothing is known) and date_sources
    (every stated date, `source date; ...`) for every id: `choose_release_dates`."""
    return choose_release_dates(model_ids, catalogue, cells, stated).dates


def fit_release_years(dates: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(fractional release year, years of doubt) of each row of a `release_dates` table for
    the fit: NaN where the date is unknown; a `first_seen` day is no release date, so it is
    given `FIRST_SEEN_DOUBT` years of doubt and the fit infers the date around it (it must
    not pull the date loadings as a stated date does)."""
    years = (
        dates["release_date"]
        .map_elements(fractional_year, return_dtype=pl.Float64)
        .fill_null(float("nan"))
        .to_numpy()
    )
    first_seen = (dates["date_source"] == FIRST_SEEN).fill_null(False).to_numpy()
    return years, np.where(first_seen, FIRST_SEEN_DOUBT, 0.0)


def fit_side_information(
    model_ids: Sequence[str],
    benchmark_ids: Sequence[str],
    cells: pl.DataFrame,
    registry: Registry,
    stated: pl.DataFrame | None = None,
) -> SideInformation:
    """Side information of the fitted matrix, in its row and column order (`stated`: the
    dates the sources state, `stated_dates`)."""
    dates = release_dates(model_ids, registry.catalogue, cells, stated)
    years, doubt = fit_release_years(dates)
    return SideInformation(
        release_year=years,
        release_year_sd=doubt,
        families=tuple(model_families(model_ids)),
        **registry_columns(registry.benchmarks, benchmark_ids),
    )


def release_date_metadata(choice: ReleaseDates, fitted: Sequence[str]) -> dict[str, object]:
    """Figures for an asset's metadata: models per date source (all, fitted), conflicts
    (stated dates more than `CONFLICT_DAYS` apart) and impossible dates rejected."""
    in_fit = set(fitted)
    dates = choice.dates.with_columns(pl.col("model_id").is_in(list(in_fit)).alias("in_fit"))
    by_source = (
        dates.group_by(pl.col("date_source").fill_null("unknown"))
        .agg(pl.len().alias("models"), pl.col("in_fit").sum().alias("fitted"))
        .sort("date_source")
    )
    return {
        "release_date_sources": {
            source: {"models": int(n), "fitted": int(f)} for source, n, f in by_source.iter_rows()
        },
        "release_date_first_seen_fitted": int(
            dates.filter(pl.col("in_fit") & (pl.col("date_source") == FIRST_SEEN)).height
        ),
        "release_date_conflicts": choice.conflicts.height,
        "release_date_conflicts_fitted": int(
            choice.conflicts["model_id"].is_in(list(in_fit)).sum()
        ),
        "release_dates_rejected": choice.rejected.height,
    }
