"""What a fit may know about a matrix besides its scores, and which of it the default uses.

Per model: a release date (fractional year; NaN = unknown) and a family
(`predictor.names.families`). Per benchmark: a chance floor (25 on 4-way multiple choice), the valid
range and a category (coding, math, knowledge, ...). The default method uses the release date
as a covariate and the families and categories as hierarchical priors (`DEFAULT_USE`): each
earned its place on held-out splits of the paper matrix (docs/method.md). Chance floors in
the transform did not (no gain on the paper matrix, worse on the Open LLM Leaderboard's
near-chance models): they are available as the part "floors". The valid range is always
applied. A bare `complete_matrix(values, scales)` knows none of this; the published fit and
`benchpress evaluate` pass it in.

Sources: the paper matrix's `data.json` (release dates) with the benchmark registry CSV
(`paper_side_information`), or a published snapshot's tables (`snapshot_side_information`:
the catalogue date where the snapshot has one, else the date the model was first seen).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from predictor.names.families import model_families

# Years of doubt about a date only known as the day a leaderboard first listed the model: with
# doubt the fit infers the date around that day instead of taking it as the release. Measured
# on the recorded payloads (older, then newer; tests/pipeline/test_snapshot_history.py): half a
# year of doubt turned the benchmark-loading subspace by 34 degrees between the two fits, over
# the publish gate's 30, against under 30 with the day taken as the date (26 of 249 fitted
# models), so the day is taken as the date.
FIRST_SEEN_DOUBT = 0.0

# A release date given for a new model may lie this many months before the earliest or after
# the newest date of the fit's models, no further: the fit's date trend is linear, and beyond
# its data it runs on without bound (a model dated 9999-12-31 was predicted at 100 on every
# benchmark with a zero-width interval, one dated 0001-01-01 at 0). 12 months covers a model
# released after the snapshot was fitted, and an older one a little before its models.
DATE_MARGIN_MONTHS = 12

# What the default method uses; `fit_kwargs(use=...)` picks a subset for comparisons.
PARTS = ("date", "families", "categories", "floors")
DEFAULT_USE = ("date", "families", "categories")


@dataclass(frozen=True)
class SideInformation:
    """Side information of a models x benchmarks matrix, in its row and column order."""

    release_year: np.ndarray | None = None  # (n,) fractional years, NaN = unknown
    # (n,) years of doubt about release_year: 0 = a stated date; > 0 = a rough one (a model only
    # known by the day a leaderboard first listed it), inferred in the fit around it
    release_year_sd: np.ndarray | None = None
    families: tuple[str | None, ...] | None = None  # (n,)
    floors: np.ndarray | None = None  # (m,) chance score of percent columns, 0 = none
    lower: np.ndarray | None = None  # (m,) valid range, -inf / inf = open
    upper: np.ndarray | None = None
    categories: tuple[str | None, ...] | None = None  # (m,)

    def rows(self, index: Sequence[int] | np.ndarray) -> SideInformation:
        """The same for a subset of the models (in `index` order)."""
        index = np.asarray(index, dtype=int)
        return replace(
            self,
            release_year=None if self.release_year is None else self.release_year[index],
            release_year_sd=None if self.release_year_sd is None else self.release_year_sd[index],
            families=None if self.families is None else tuple(self.families[i] for i in index),
        )

    def columns(self, index: Sequence[int] | np.ndarray) -> SideInformation:
        """The same for a subset of the benchmarks (in `index` order)."""
        index = np.asarray(index, dtype=int)

        def pick(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[index]

        return replace(
            self,
            floors=pick(self.floors),
            lower=pick(self.lower),
            upper=pick(self.upper),
            categories=None
            if self.categories is None
            else tuple(self.categories[j] for j in index),
        )

    def fit_kwargs(self, use: Sequence[str] = DEFAULT_USE) -> dict[str, Any]:
        """Keyword arguments of `complete_matrix` / `BayesianCompleter.fit` for the parts in
        `use` (a subset of `PARTS`); the valid range is always passed when known."""
        unknown = sorted(set(use) - set(PARTS))
        if unknown:
            raise ValueError(f"side information: unknown parts {unknown}; known: {PARTS}")
        kwargs: dict[str, Any] = {"lower": self.lower, "upper": self.upper}
        years = self.release_year
        if "date" in use and years is not None and np.isfinite(years).any():
            # a model folded in without a date gets it inferred from its scores
            # (`BenchPress.side_for`), never a fixed default such as the fit's newest
            kwargs["row_features"] = years
            doubt = self.release_year_sd
            if doubt is not None and np.nan_to_num(doubt).any():
                kwargs["row_feature_sd"] = doubt
        if "families" in use and self.families is not None:
            kwargs["row_groups"] = list(self.families)
        if "categories" in use and self.categories is not None:
            kwargs["col_groups"] = list(self.categories)
        if "floors" in use and self.floors is not None:
            kwargs["floors"] = self.floors
        return kwargs

    def model_features(self, i: int, use: Sequence[str] = DEFAULT_USE) -> np.ndarray | None:
        """Model i's `features` for a fold-in (its release date), None when not used."""
        years = self.release_year
        if "date" not in use or years is None or not np.isfinite(years).any():
            return None  # the fit had no date feature either (see `fit_kwargs`)
        return np.array([years[i]])

    def model_group(self, i: int, use: Sequence[str] = DEFAULT_USE) -> str | None:
        """Model i's family for a fold-in, None when not used."""
        if "families" not in use or self.families is None:
            return None
        return self.families[i]


def unknown_features(completer: Any) -> np.ndarray | None:
    """Features of a model folded in whose release date nobody knows: NaN, which the
    default method infers from the model's scores jointly with its vector (the date prior:
    the fit's own dates). None for a fit without dates (nothing to infer)."""
    default, _ = completer.new_model_side()
    return None if default is None else np.full(len(default), np.nan)


def fractional_year(value: str | date | datetime | None) -> float:
    """`2025`, `2025-04`, `2025-04-16` or a date -> fractional year (a bare year counts as its
    middle, a year-month as the middle of the month); NaN when missing or unreadable."""
    if value is None or value == "":
        return float("nan")
    if isinstance(value, datetime | date):
        return value.year + (value.month - 1) / 12.0 + (value.day - 1) / 365.0
    try:
        parts = [int(p) for p in str(value)[:10].split("-")]
    except ValueError:
        return float("nan")
    if len(parts) == 1:
        return parts[0] + 0.5
    day = parts[2] if len(parts) > 2 else 15
    return parts[0] + (parts[1] - 1) / 12.0 + (day - 1) / 365.0


def checked_release_date(value: str | date | datetime) -> float:
    """A release date a person gave (`2025`, `2025-04`, `2025-04-16` or a date) as a fractional
    year; anything else (`2025-13-40`, `soon`) is a ValueError saying what is expected."""
    if isinstance(value, datetime | date):
        return fractional_year(value)
    text = str(value).strip()
    parts = text.split("-")
    try:
        if not 1 <= len(parts) <= 3 or len(parts[0]) != 4:
            raise ValueError
        numbers = [int(p) for p in parts]
        date(numbers[0], *(numbers[1:] + [1, 1])[:2])  # a real year, month and day
    except ValueError:
        raise ValueError(
            f"release date {text!r} is not a date: give YYYY-MM-DD (or YYYY-MM, YYYY)"
        ) from None
    return fractional_year(text)


def registry_columns(
    benchmarks: pl.DataFrame, benchmark_ids: Sequence[str]
) -> dict[str, np.ndarray | tuple[str | None, ...]]:
    """floors, lower, upper, categories of `benchmark_ids` from a benchmark table (the
    registry CSV or a snapshot's benchmarks.parquet; columns it lacks count as unknown)."""
    rows = {r["benchmark_id"]: r for r in benchmarks.iter_rows(named=True)}

    def number(b: str, column: str, default: float) -> float:
        value = rows.get(b, {}).get(column)
        try:
            out = float(value) if value not in (None, "") else default
        except (TypeError, ValueError):
            return default
        return default if np.isnan(out) else out

    return {
        "floors": np.array([number(b, "floor", 0.0) for b in benchmark_ids]),
        "lower": np.array([number(b, "lower", -np.inf) for b in benchmark_ids]),
        "upper": np.array([number(b, "upper", np.inf) for b in benchmark_ids]),
        "categories": tuple((rows.get(b, {}).get("category") or None) for b in benchmark_ids),
    }


def paper_side_information(
    data_path: str | Path, registry_path: str | Path, benchmark_ids: Sequence[str]
) -> SideInformation:
    """Side information of the BenchPress paper matrix: release dates from its data.json,
    families from the model ids, floors / ranges / categories from the benchmark registry."""
    data = json.loads(Path(data_path).read_text())
    ids = [m["id"] for m in data["models"]]
    years = np.array([fractional_year(m.get("release_date")) for m in data["models"]])
    registry = pl.read_csv(registry_path, infer_schema=False)
    return SideInformation(
        release_year=years,
        families=tuple(model_families(ids)),
        **registry_columns(registry, benchmark_ids),
    )


def first_seen_years(cells: pl.DataFrame, model_ids: Sequence[str]) -> np.ndarray:
    """Per model the fractional year of its earliest `fetched_at` among `cells` (NaN when it
    has none): when the warehouse first saw it, a stand-in for an unknown release date."""
    if cells.height == 0 or "fetched_at" not in cells.columns:
        return np.full(len(model_ids), np.nan)
    first = dict(cells.group_by("model_id").agg(pl.col("fetched_at").min()).iter_rows())
    return np.array([fractional_year(first.get(m)) for m in model_ids])


def snapshot_side_information(
    models: pl.DataFrame,
    benchmarks: pl.DataFrame,
    cells: pl.DataFrame,
    model_ids: Sequence[str],
    benchmark_ids: Sequence[str],
) -> SideInformation:
    """Side information of a snapshot's matrix, as the pipeline's fit had it: release dates
    from `models.release_date` (the catalogue's, else the sources' stated date), NaN (unknown)
    where the snapshot has none or only the day the model was first seen (`date_source`
    `first_seen`: when a model was first seen says little of when it was released); families
    from the ids; floors / ranges / categories from `benchmarks`. `cells` is not read for
    dates any more (a first sighting is no release date); kept for callers."""
    years = np.full(len(model_ids), np.nan)
    doubt = np.zeros(len(model_ids))
    if "release_date" in models.columns:
        dated = models.filter(pl.col("release_date").is_not_null())
        known = dict(dated.select("model_id", "release_date").iter_rows())
        years = np.array([fractional_year(known.get(m)) for m in model_ids])
        if "date_source" in models.columns:
            source = dict(dated.select("model_id", "date_source").iter_rows())
            doubt = np.array(
                [FIRST_SEEN_DOUBT if source.get(m) == "first_seen" else 0.0 for m in model_ids]
            )
    return SideInformation(
        release_year=years,
        release_year_sd=doubt,
        families=tuple(model_families(model_ids)),
        **registry_columns(benchmarks, benchmark_ids),
    )
