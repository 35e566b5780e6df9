"""Blocking asset checks: the publish gate. A failing check stops `published_snapshot`."""

import dagster as dg
import polars as pl

from pipelines.assets.fit import factorization
from pipelines.assets.matrix import score_matrix
from pipelines.identity.registry import load_registry
from pipelines.resources import WarehouseResource
from pipelines.settings import check_thresholds
from warehouse.scores import read_table


def matrix_problems(
    cells: pl.DataFrame, scale_of: dict[str, str], min_models: int, min_benchmarks: int
) -> list[str]:
    """What is wrong with a matrix, in words; empty when it is sane."""
    problems = []
    n_models, n_benchmarks = cells["model_id"].n_unique(), cells["benchmark_id"].n_unique()
    if n_models < min_models:
        problems.append(f"{n_models} models < minimum {min_models}")
    if n_benchmarks < min_benchmarks:
        problems.append(f"{n_benchmarks} benchmarks < minimum {min_benchmarks}")
    if not cells["score"].is_finite().all():
        problems.append("non-finite scores")
    percent = cells.filter(
        pl.col("benchmark_id").replace_strict(scale_of, default="unknown") == "percent"
    )
    outside = percent.filter((pl.col("score") < 0) | (pl.col("score") > 100))
    if outside.height:
        first = outside.row(0, named=True)
        problems.append(
            f"{outside.height} percent scores outside 0-100, e.g. {first['model_id']} on "
            f"{first['benchmark_id']} = {first['score']}"
        )
    missing = cells.filter(pl.col("source").is_null() | pl.col("payload_url").is_null())
    if missing.height:
        problems.append(f"{missing.height} cells without provenance")
    return problems


@dg.asset_check(asset=score_matrix, blocking=True, description="Size, range and provenance.")
def matrix_sanity(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    thresholds = check_thresholds()
    scale_of = dict(load_registry().benchmarks.select("benchmark_id", "scale").iter_rows())
    with warehouse.connect() as con:
        cells = read_table(con, "matrix_cells")
    problems = matrix_problems(cells, scale_of, thresholds.min_models, thresholds.min_benchmarks)
    return dg.AssetCheckResult(
        passed=not problems,
        metadata={
            "problems": dg.MetadataValue.json(problems),
            "models": cells["model_id"].n_unique(),
            "benchmarks": cells["benchmark_id"].n_unique(),
            "min_models": thresholds.min_models,
            "min_benchmarks": thresholds.min_benchmarks,
        },
        description="; ".join(problems) or "matrix is sane",
    )


@dg.asset_check(
    asset=factorization,
    blocking=True,
    description="The top two factors still explain most of the variance (rank-2 structure).",
)
def rank2_structure(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    import json

    floor = check_thresholds().min_top2_variance_share
    with warehouse.connect() as con:
        row = con.execute(
            "SELECT figures FROM staged_snapshots ORDER BY staged_at DESC LIMIT 1"
        ).fetchone()
    if row is None:
        return dg.AssetCheckResult(passed=False, description="no factorization staged")
    share = float(json.loads(row[0])["variance_share_top2"])
    passed = share >= floor
    return dg.AssetCheckResult(
        passed=passed,
        metadata={"variance_share_top2": share, "floor": floor},
        description=f"top-2 variance share {share:.3f} {'>=' if passed else '<'} floor {floor:.3f}",
    )
