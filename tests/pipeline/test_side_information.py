"""What the published fit knows besides the scores: release dates (catalogue, else the date
the sources state, else first seen, which the fit treats as unknown), families, and the chance
floors the snapshot's benchmark table carries."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import polars as pl
import pytest

from pipelines.identity.registry import load_registry
from pipelines.identity.resolve import resolve
from pipelines.sources import arc_prize
from pipelines.stages.fit import FitResult
from pipelines.stages.side_information import (
    STATED_SCHEMA,
    choose_release_dates,
    fit_side_information,
    release_date_metadata,
    release_dates,
    stated_dates,
)
from pipelines.stages.snapshot import benchmark_table, model_table
from predictor.side_information import (
    FIRST_SEEN_DOUBT,
    fractional_year,
    snapshot_side_information,
)
from tests.support.shared_data import require_shared, shared_leaderboards


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


def stated(*rows: tuple[str, str, str, datetime]) -> pl.DataFrame:
    """Statements as `stated_dates` gives them: model id, source, date, payload fetch time."""
    return pl.DataFrame(list(rows), schema=STATED_SCHEMA, orient="row")


FETCHED = datetime(2026, 1, 17, tzinfo=UTC)


def test_release_dates_come_from_the_catalogue_else_from_first_seen() -> None:
    registry = load_registry()
    ids = ["o3-high", "o3@medium", "gpt-4o-20240806", "acme-7b", "never-seen"]
    dates = release_dates(ids, registry.catalogue, CELLS)
    assert dates.select("model_id", "release_date", "date_source").rows() == [
        ("o3-high", "2025-04-16", "catalogue"),  # BenchPress id of the catalogued o3
        ("o3@medium", "2025-04-16", "catalogue"),  # another setting of the same snapshot
        ("gpt-4o-20240806", "2024-08-06", "catalogue"),
        ("acme-7b", "2024-12-26", "first_seen"),  # its earliest fetched score
        ("never-seen", None, None),
    ]
    side = fit_side_information(ids, ["gpqa_diamond", "mmlu_pro"], CELLS, registry)
    assert side.families == ("o3", "o3", "gpt4o", "acme", "never-seen")
    np.testing.assert_allclose(
        side.release_year[:3],
        [
            2025 + 3 / 12 + 15 / 365,
            2025 + 3 / 12 + 15 / 365,
            2024 + 7 / 12 + 5 / 365,
        ],
    )
    # first seen is no release date: the fit takes the day with `FIRST_SEEN_DOUBT` years of
    # doubt (none for now, see there); no date at all: NaN, inferred in the fit
    assert side.release_year[3] == pytest.approx(2024 + 11 / 12 + 25 / 365)
    assert side.release_year_sd.tolist() == [0.0, 0.0, 0.0, FIRST_SEEN_DOUBT, 0.0]
    assert np.isnan(side.release_year[4])
    assert side.floors.tolist() == [25.0, 10.0]  # 4-way and 10-way multiple choice
    assert side.categories == ("knowledge", "knowledge")
    assert side.lower.tolist() == [0.0, 0.0] and side.upper.tolist() == [100.0, 100.0]


def test_catalogue_then_stated_then_first_seen_and_settings_share_their_base() -> None:
    registry = load_registry()
    ids = ["o3@low", "acme-7b", "acme-7b@high", "zeta-2", "zeta-2@xhigh", "omega-1"]
    cells = cells_frame(
        [
            ("acme-7b@high", "mmlu_pro", 40.0, datetime(2025, 9, 1, tzinfo=UTC)),
            ("omega-1", "mmlu_pro", 40.0, datetime(2025, 10, 2, tzinfo=UTC)),
        ]
    )
    said = stated(
        ("o3-high", "epoch_ai", "2025-04-10", FETCHED),  # the catalogue wins over sources
        ("acme-7b", "epoch_ai", "2025-03-04", FETCHED),
        ("acme-7b", "llm_stats", "2025-03-04", FETCHED),  # agrees
        ("zeta-2@xhigh", "arc_prize", "2025-11-20", FETCHED),  # stated for a setting only
    )
    choice = choose_release_dates(ids, registry.catalogue, cells, said)
    assert choice.dates.rows() == [
        ("o3@low", "2025-04-16", "catalogue", "epoch_ai 2025-04-10"),
        # agreeing sources: the most preferred one is named (llm-stats' priority beats Epoch's)
        ("acme-7b", "2025-03-04", "llm_stats", "epoch_ai 2025-03-04; llm_stats 2025-03-04"),
        # a setting takes its base's date, not its own first sighting
        ("acme-7b@high", "2025-03-04", "llm_stats", "epoch_ai 2025-03-04; llm_stats 2025-03-04"),
        # and the base takes a date stated for one of its settings
        ("zeta-2", "2025-11-20", "arc_prize", "arc_prize 2025-11-20"),
        ("zeta-2@xhigh", "2025-11-20", "arc_prize", "arc_prize 2025-11-20"),
        ("omega-1", "2025-10-02", "first_seen", None),  # nothing states a date
    ]
    assert choice.conflicts.height == 0 and choice.rejected.height == 0
    side = fit_side_information(ids, ["mmlu_pro"], cells, registry, said)
    expected = [fractional_year(d) for d in ("2025-04-16", "2025-03-04", "2025-03-04")]
    expected += [fractional_year("2025-11-20")] * 2
    np.testing.assert_allclose(side.release_year[:5], expected)
    # omega-1: first seen only, a date the fit infers around that day
    assert side.release_year[5] == pytest.approx(fractional_year("2025-10-02"))
    assert side.release_year_sd.tolist() == [0.0] * 5 + [FIRST_SEEN_DOUBT]


def test_earliest_stated_date_wins_and_the_disagreement_is_counted() -> None:
    registry = load_registry()
    said = stated(
        ("acme-7b", "benchpress_matrix", "2025-06-01", FETCHED),
        ("acme-7b@high", "epoch_ai", "2025-04-20", FETCHED),  # 42 days earlier: a conflict
        ("acme-7b", "llm_stats", "2025", FETCHED),  # a year only never beats a day
        ("zeta-2", "aider", "2025-07-01", FETCHED),
        ("zeta-2", "epoch_ai", "2025-07-20", FETCHED),  # 19 days: no conflict
        ("beta-3", "benchpress_matrix", "2024-09", FETCHED),  # only a month: used as stated
    )
    choice = choose_release_dates(
        ["acme-7b", "acme-7b@high", "zeta-2", "beta-3"], registry.catalogue, CELLS, said
    )
    assert choice.dates.select("model_id", "release_date", "date_source").rows() == [
        ("acme-7b", "2025-04-20", "epoch_ai"),
        ("acme-7b@high", "2025-04-20", "epoch_ai"),
        ("zeta-2", "2025-07-01", "aider"),
        ("beta-3", "2024-09", "benchpress_matrix"),
    ]
    assert choice.dates["date_sources"][0] == (
        "llm_stats 2025; epoch_ai 2025-04-20; benchpress_matrix 2025-06-01"
    )
    assert choice.conflicts.rows() == [
        (
            "acme-7b",
            "2025-04-20",
            "2025-06-01",
            42,
            "llm_stats 2025; epoch_ai 2025-04-20; benchpress_matrix 2025-06-01",
        ),
        (
            "acme-7b@high",
            "2025-04-20",
            "2025-06-01",
            42,
            "llm_stats 2025; epoch_ai 2025-04-20; benchpress_matrix 2025-06-01",
        ),
    ]
    figures = release_date_metadata(choice, ["acme-7b", "zeta-2"])
    assert figures == {
        "release_date_sources": {
            "aider": {"models": 1, "fitted": 1},
            "benchpress_matrix": {"models": 1, "fitted": 0},
            "epoch_ai": {"models": 2, "fitted": 1},
        },
        "release_date_first_seen_fitted": 0,
        "release_date_conflicts": 2,
        "release_date_conflicts_fitted": 1,
        "release_dates_rejected": 0,
    }


def test_a_hub_upload_day_counts_only_where_no_source_states_a_release() -> None:
    registry = load_registry()
    said = stated(
        # the repo was created, private, two weeks before the release Epoch states
        ("acme-7b", "open_llm_leaderboard", "2025-03-20", FETCHED),
        ("acme-7b", "epoch_ai", "2025-04-03", FETCHED),
        ("zeta-2", "open_llm_leaderboard", "2025-06-11", FETCHED),  # the only statement
    )
    choice = choose_release_dates(["acme-7b", "zeta-2"], registry.catalogue, CELLS, said)
    assert choice.dates.rows() == [
        (
            "acme-7b",
            "2025-04-03",
            "epoch_ai",
            "open_llm_leaderboard 2025-03-20; epoch_ai 2025-04-03",
        ),
        ("zeta-2", "2025-06-11", "open_llm_leaderboard", "open_llm_leaderboard 2025-06-11"),
    ]
    assert choice.conflicts.height == 0  # an upload day before the release is no disagreement


def test_impossible_stated_dates_are_rejected_and_counted_never_fatal() -> None:
    registry = load_registry()
    said = stated(
        ("acme-7b", "epoch_ai", "2014-12-31", FETCHED),  # before 2015
        ("acme-7b", "arc_prize", "2026-03-01", FETCHED),  # after the payload was fetched
        ("acme-7b", "llm_stats", "soon", FETCHED),  # not a date
        ("acme-7b", "aider", "2025-02-30", FETCHED),  # no such day
        ("zeta-2", "epoch_ai", "2026-02", FETCHED),  # a month after the fetch: rejected
        ("zeta-2", "llm_stats", "2026-01-17", FETCHED),  # the fetch day itself is fine
    )
    choice = choose_release_dates(["acme-7b", "zeta-2"], registry.catalogue, CELLS, said)
    assert choice.dates.select("model_id", "release_date", "date_source").rows() == [
        ("acme-7b", "2024-12-26", "first_seen"),  # nothing possible is stated
        ("zeta-2", "2026-01-17", "llm_stats"),
    ]
    assert choice.rejected.rows() == [
        ("acme-7b", "aider", "2025-02-30", "not a date"),
        ("acme-7b", "arc_prize", "2026-03-01", "after the payload stating it was fetched"),
        ("acme-7b", "epoch_ai", "2014-12-31", "before 2015-01-01"),
        ("zeta-2", "epoch_ai", "2026-02", "after the payload stating it was fetched"),
        ("acme-7b", "llm_stats", "soon", "not a date"),
    ]
    assert release_date_metadata(choice, [])["release_dates_rejected"] == 5


def test_stated_dates_flow_from_real_arc_prize_rows_to_the_models_table() -> None:
    """ARC Prize's recorded bytes -> parser -> resolution -> the snapshot's models table."""
    folder = require_shared(shared_leaderboards() / "arc_prize")
    urls = (
        arc_prize.EVALUATIONS_URL,
        arc_prize.MODELS_URL,
        arc_prize.DATASETS_URL,
        arc_prize.PROVIDERS_URL,
    )
    rows = arc_prize.parse({url: (folder / url.rsplit("/", 1)[-1]).read_bytes() for url in urls})
    fetched = datetime(2026, 6, 16, 2, 2, 26, tzinfo=UTC)
    scores = rows.with_columns(
        pl.lit(1, pl.Int64).alias("parse_id"),
        pl.lit("sha").alias("payload_sha256"),
        pl.lit(fetched).alias("fetched_at"),
    )
    registry = load_registry()
    normalized = resolve(scores, registry)
    assert "release_date" in normalized.columns
    said = stated_dates(normalized)
    assert said.filter(pl.col("model_id") == "gpt-5.4-mini@high").rows() == [
        ("gpt-5.4-mini@high", "arc_prize", "2026-03-17", fetched)
    ]
    cells = (
        normalized.filter(pl.col("resolution") == "resolved")
        .group_by("model_id", "benchmark_id")
        .agg(pl.col("score").first(), pl.col("fetched_at").first(), pl.col("source").first())
    )
    fit = FitResult(["gpt-5.4-mini@high"], ["arc_agi_2"], ["percent"], np.ones((1, 1)), None, {})
    models = model_table(normalized, cells, fit, registry).filter(
        pl.col("model_id").is_in(["gpt-5.4-mini@high", "gpt-5.4-mini@low", "claude-opus-4.6"])
    )
    assert models.select("model_id", "release_date", "date_source", "date_sources").rows() == [
        # the catalogue's reviewed date beats ARC Prize's earliest (a mis-dated entry)
        (
            "claude-opus-4.6",
            "2026-02-05",
            "catalogue",
            "arc_prize 2025-12-17; arc_prize 2026-02-05",
        ),
        ("gpt-5.4-mini@high", "2026-03-17", "arc_prize", "arc_prize 2026-03-17"),
        ("gpt-5.4-mini@low", "2026-03-17", "arc_prize", "arc_prize 2026-03-17"),
    ]


def test_snapshot_side_information_treats_first_seen_as_uncertain() -> None:
    registry = load_registry()
    models = pl.DataFrame(
        {
            "model_id": ["acme-7b", "o3-high", "zeta-2"],
            "release_date": ["2024-12-26", "2025-04-16", "2025-03-04"],
            "date_source": ["first_seen", "catalogue", "epoch_ai"],
        }
    )
    side = snapshot_side_information(
        models, registry.benchmarks, CELLS, ["o3-high", "acme-7b", "zeta-2"], ["gpqa_diamond"]
    )
    assert side.release_year[0] == fractional_year("2025-04-16")
    # first seen: a rough date the fit infers around, as in the pipeline's fit
    assert side.release_year[1] == fractional_year("2024-12-26")
    assert side.release_year_sd.tolist() == [0.0, FIRST_SEEN_DOUBT, 0.0]
    assert side.release_year[2] == fractional_year("2025-03-04")
    # a snapshot without dates knows none (a first sighting in its cells is none either)
    bare = snapshot_side_information(
        models.drop("release_date", "date_source"),
        registry.benchmarks,
        CELLS,
        ["acme-7b"],
        ["gpqa_diamond"],
    )
    assert math.isnan(bare.release_year[0])


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
