"""The Dagster code location: `dagster dev -m pipelines.definitions` shows the whole lineage."""

from __future__ import annotations

import dagster as dg

from pipelines.assets.fit import factorization, published_snapshot
from pipelines.assets.matrix import normalized_scores, score_matrix
from pipelines.assets.sources import build_source_assets
from pipelines.checks import (
    drift_checks,
    identity_resolution,
    matrix_sanity,
    one_metric_per_column,
    rank2_structure,
    sources_fetched,
)
from pipelines.jobs import daily_refresh, refresh_job
from pipelines.resources import default_resources
from pipelines.sources import SOURCES

defs = dg.Definitions(
    assets=[
        *(asset for source in SOURCES.values() for asset in build_source_assets(source)),
        normalized_scores,
        score_matrix,
        factorization,
        published_snapshot,
    ],
    asset_checks=[
        sources_fetched,
        identity_resolution,
        matrix_sanity,
        one_metric_per_column,
        rank2_structure,
        *drift_checks,
    ],
    jobs=[refresh_job],
    schedules=[daily_refresh],
    resources=default_resources(),
)
