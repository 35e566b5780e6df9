"""Side information of the published matrix for the fit: release dates, families, floors.

The default completion method uses each model's release date, its family and each
benchmark's category and chance floor (`predictor.side_information`). A model's release date
is the catalogue's snapshot date (`models.csv`) when the catalogue knows the model, else the
day the warehouse first saw one of its scores (`fetched_at`): the date a user of the snapshot
could have known about it.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pipelines.identity.catalogue import Catalogue, CatalogueRow
from pipelines.identity.registry import Registry
from predictor.families import model_families
from predictor.side_information import SideInformation, fractional_year, registry_columns


def catalogue_row(catalogue: Catalogue, model_id: str) -> CatalogueRow | None:
    """The catalogue row of a canonical model id (`o3-high`, `o3@medium`, `gpt-4o-20240806`)."""
    stem = model_id.split("@", 1)[0]
    return (
        catalogue.by_benchpress.get(model_id)
        or catalogue.by_model.get(stem)
        or catalogue.by_benchpress.get(stem)
    )


def release_dates(
    model_ids: Sequence[str], catalogue: Catalogue, cells: pl.DataFrame
) -> pl.DataFrame:
    """model_id, release_date (YYYY-MM-DD) and date_source ("catalogue" or "first_seen";
    null when neither is known) for every id."""
    first: dict[str, object] = {}
    if cells.height and "fetched_at" in cells.columns:
        first = dict(cells.group_by("model_id").agg(pl.col("fetched_at").min()).iter_rows())
    rows = []
    for model_id in model_ids:
        row = catalogue_row(catalogue, model_id)
        if row is not None and row.snapshot:
            rows.append((model_id, row.snapshot[:10], "catalogue"))
        elif first.get(model_id) is not None:
            rows.append((model_id, str(first[model_id])[:10], "first_seen"))
        else:
            rows.append((model_id, None, None))
    return pl.DataFrame(
        rows,
        schema={"model_id": pl.String, "release_date": pl.String, "date_source": pl.String},
        orient="row",
    )


def fit_side_information(
    model_ids: Sequence[str],
    benchmark_ids: Sequence[str],
    cells: pl.DataFrame,
    registry: Registry,
) -> SideInformation:
    """Side information of the fitted matrix, in its row and column order."""
    dates = release_dates(model_ids, registry.catalogue, cells)
    return SideInformation(
        release_year=dates["release_date"]
        .map_elements(fractional_year, return_dtype=pl.Float64)
        .fill_null(float("nan"))
        .to_numpy(),
        families=tuple(model_families(model_ids)),
        **registry_columns(registry.benchmarks, benchmark_ids),
    )
