"""What the published fit knows besides the scores: release dates (catalogue, else first seen),
families, and the chance floors the snapshot's benchmark table carries."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import polars as pl

from pipelines.identity.registry import load_registry
from pipelines.stages.fit import FitResult
from pipelines.stages.side_information import fit_side_information, release_dates
from pipelines.stages.snapshot import benchmark_table, model_table


def cells_frame(rows: list[tuple[str, str, float, datetime]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows,
        schema={
            "model_id": pl.String,
            "benchmark_id": pl.String,
            "score": pl.Float64,
            "fetched_at": pl.Datetime(time_zone="UTC"),
        },
        orient="row",
    ).with_columns(source=pl.lit("livebench"))


CELLS = cells_frame(
    [
        ("o3-high", "gpqa_diamond", 83.3, datetime(2025, 8, 6, tzinfo=UTC)),
        ("o3@medium", "gpqa_diamond", 80.1, datetime(2025, 8, 6, tzinfo=UTC)),
        ("gpt-4o-20240806", "mmlu_pro", 74.7, datetime(2024, 12, 22, tzinfo=UTC)),
        ("acme-7b", "mmlu_pro", 40.0, datetime(2025, 3, 21, tzinfo=UTC)),
        ("acme-7b", "gpqa_diamond", 30.0, datetime(2024, 12, 26, tzinfo=UTC)),
    ]
)


def test_release_dates_come_from_the_catalogue_else_from_first_seen() -> None:
    registry = load_registry()
    ids = ["o3-high", "o3@medium", "gpt-4o-20240806", "acme-7b", "never-seen"]
    dates = release_dates(ids, registry.catalogue, CELLS)
    assert dates.rows() == [
        ("o3-high", "2025-04-16", "catalogue"),  # BenchPress id of the catalogued o3
        ("o3@medium", "2025-04-16", "catalogue"),  # another setting of the same snapshot
        ("gpt-4o-20240806", "2024-08-06", "catalogue"),
        ("acme-7b", "2024-12-26", "first_seen"),  # its earliest fetched score
        ("never-seen", None, None),
    ]
    side = fit_side_information(ids, ["gpqa_diamond", "mmlu_pro"], CELLS, registry)
    assert side.families == ("o3", "o3", "gpt4o", "acme", "never-seen")
    np.testing.assert_allclose(
        side.release_year[:4],
        [
            2025 + 3 / 12 + 15 / 365,
            2025 + 3 / 12 + 15 / 365,
            2024 + 7 / 12 + 5 / 365,
            2024 + 11 / 12 + 25 / 365,
        ],
    )
    assert np.isnan(side.release_year[4])
    assert side.floors.tolist() == [25.0, 10.0]  # 4-way and 10-way multiple choice
    assert side.categories == ("knowledge", "knowledge")
    assert side.lower.tolist() == [0.0, 0.0] and side.upper.tolist() == [100.0, 100.0]


def test_snapshot_tables_carry_floors_families_and_release_dates() -> None:
    registry = load_registry()
    fit = FitResult(
        ["acme-7b", "o3-high"], ["gpqa_diamond"], ["percent"], np.ones((2, 1)), None, {}
    )
    benchmarks = benchmark_table(
        registry,
        CELLS,
        fit,
        pl.DataFrame(
            schema={
                "benchmark_id": pl.String,
                "run_cost_usd": pl.Float64,
                "run_cost_reports": pl.Int32,
            }
        ),
    )
    assert benchmarks.select("benchmark_id", "floor", "in_fit").rows() == [
        ("gpqa_diamond", 25.0, True),
        ("mmlu_pro", 10.0, False),
    ]
    normalized = pl.DataFrame(
        {
            "model_id": ["o3-high"],
            "model_name": ["o3 (high)"],
            "resolution": ["resolved"],
            "source": ["livebench"],
            "setting": [None],
        },
        schema_overrides={"setting": pl.String},
    )
    models = model_table(normalized, CELLS, fit, registry)
    assert models.select("model_id", "family", "release_date", "date_source").rows() == [
        ("acme-7b", "acme", "2024-12-26", "first_seen"),
        ("gpt-4o-20240806", "gpt4o", "2024-08-06", "catalogue"),
        ("o3-high", "o3", "2025-04-16", "catalogue"),
        ("o3@medium", "o3", "2025-04-16", "catalogue"),
    ]
