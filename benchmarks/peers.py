"""Peers a practitioner could pick instead of ours, from scikit-learn (the package index):
IterativeImputer with ExtraTrees in logit space (MissForest-style) and KNNImputer.

Each is a `fit_predict(values, scales) -> Completion` for `predictor.evaluation.run_holdout`:
percent columns go through the same `ScaleTransform` as ours (logit, clipped, z-scored per
column), the imputer fills the z-matrix and the back-transform keeps predictions inside each
column's range. They give point predictions only (no intervals: low = high = mean). Seeded,
single-threaded, so deterministic. scikit-learn is not a dependency of the package: install
it (`pip install scikit-learn`) to run them.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np
import polars as pl

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from predictor.evaluation.protocols import Method, SideAware, ranking_accuracy, run_holdout  # noqa: E402
from predictor.fit.completion import Completion  # noqa: E402
from predictor.side_information import DEFAULT_USE  # noqa: E402
from predictor.transforms import ScaleTransform  # noqa: E402

PEER_NAMES = ("extra_trees", "knn")


def _in_logit_space(impute, values: np.ndarray, scales: Sequence[str], level: float) -> Completion:
    values = np.asarray(values, dtype=float)
    transform = ScaleTransform(scales, eps=0.002).fit(values)
    z = transform.transform(values)
    filled = impute(z)
    mean = np.where(np.isnan(values), transform.inverse(filled), values)
    return Completion(mean=mean, low=mean, high=mean, model=None, level=level)


def extra_trees_imputer(
    values: np.ndarray,
    scales: Sequence[str],
    level: float = 0.9,
    n_estimators: int = 50,
    max_iter: int = 5,
    random_state: int = 0,
) -> Completion:
    """IterativeImputer(ExtraTreesRegressor) in z-scored logit space (MissForest-style)."""
    from sklearn.ensemble import ExtraTreesRegressor
    from sklearn.experimental import enable_iterative_imputer  # noqa: F401
    from sklearn.impute import IterativeImputer

    imputer = IterativeImputer(
        estimator=ExtraTreesRegressor(
            n_estimators=n_estimators, min_samples_leaf=2, random_state=random_state, n_jobs=1
        ),
        max_iter=max_iter,
        random_state=random_state,
        keep_empty_features=True,
    )
    return _in_logit_space(imputer.fit_transform, values, scales, level)


def knn_imputer(
    values: np.ndarray, scales: Sequence[str], level: float = 0.9, n_neighbors: int = 5
) -> Completion:
    """KNNImputer (distance-weighted neighbours over the shared columns) in logit space."""
    from sklearn.impute import KNNImputer

    imputer = KNNImputer(n_neighbors=n_neighbors, weights="distance", keep_empty_features=True)
    return _in_logit_space(imputer.fit_transform, values, scales, level)


def peer_methods(level: float = 0.9, seed: int = 0) -> list[Method]:
    """The scikit-learn peers as `Method`s of `predictor.evaluation.protocols`."""
    return [
        Method(
            "extra_trees",
            "IterativeImputer + ExtraTrees (logit)",
            partial(extra_trees_imputer, level=level, random_state=seed),
        ),
        Method("knn", "KNNImputer (logit)", partial(knn_imputer, level=level)),
    ]


def holdout_peers(
    values: np.ndarray,
    scales: Sequence[str],
    folds: Sequence,
    methods: Sequence[Method],
    margin: float = 5.0,
) -> tuple[dict[str, dict], dict[str, pl.DataFrame]]:
    """Held-out figures (median over folds: MedAE, coverage and width where the method has
    intervals; ranking accuracy pooled as `evaluate_methods`) and every held-out cell, per
    method, on the same folds."""
    figures, cells = {}, {}
    for method in methods:
        run = run_holdout(values, scales, folds, method.fit_predict)
        per_fold = run.per_fold
        figures[method.name] = {
            "label": method.label,
            "medae": float(per_fold["medae"].median()),
            "ranking_accuracy": ranking_accuracy(values, run.cells, margin)["accuracy"],
            "coverage_90": float(per_fold["coverage_90"].median()),
            "median_width_90": float(per_fold["median_width_90"].median()),
            "seconds": run.seconds,
        }
        cells[method.name] = run.cells
    return figures, cells


def column_comparison(
    ours: pl.DataFrame, peer: pl.DataFrame, benchmark_ids: Sequence[str], min_cells: int = 30
) -> pl.DataFrame:
    """Per benchmark with at least `min_cells` held-out cells pooled over the folds: our
    MedAE, the peer's and their ratio, worst ratio first."""

    def medae(cells: pl.DataFrame, name: str) -> pl.DataFrame:
        return cells.group_by("benchmark").agg(
            (pl.col("actual") - pl.col("mean")).abs().median().alias(name), pl.len().alias("n")
        )

    both = medae(ours, "ours").join(medae(peer, "peer").drop("n"), on="benchmark")
    ids = pl.Series("benchmark_id", [benchmark_ids[j] for j in both["benchmark"]])
    return (
        both.with_columns(ids, ratio=pl.col("ours") / pl.col("peer"))
        .filter(pl.col("n") >= min_cells)
        .sort("ratio", descending=True)
    )


# Columns where ExtraTrees has beaten us before (saturated or very hard benchmarks).
NAMED_COLUMNS = (
    "usamo_2025",
    "livebench",
    "matharena_apex_2025",
    "finance_agent",
    "mrcr_v2_2needle_128k",
)
RATIO_LIMIT = 1.5
# Columns over RATIO_LIMIT on our dev splits (seeds 1000-1002) with the plain logit link.
OVER_LIMIT_COLUMNS = ("mrcr_v2", "mmmu", "screenspot_pro", "hle_tools")


def peer_report(
    values: np.ndarray,
    scales: Sequence[str],
    benchmark_ids: Sequence[str],
    folds: Sequence,
    side,
    level: float = 0.9,
    seed: int = 0,
) -> dict:
    """Ours (with the matrix's side information) beside the peers on the same held-out folds,
    and the per-column comparison with ExtraTrees."""
    ours = Method(
        "ours",
        "ours: Bayesian MF + side info",
        SideAware(side, DEFAULT_USE, {"level": level, "random_state": seed}),
    )
    figures, cells = holdout_peers(values, scales, folds, [ours, *peer_methods(level, seed)])
    columns = column_comparison(cells["ours"], cells["extra_trees"], benchmark_ids)
    return {
        "methods": figures,
        "columns_vs_extra_trees": columns.to_dicts(),
        "columns_over_limit": columns.filter(pl.col("ratio") > RATIO_LIMIT)[
            "benchmark_id"
        ].to_list(),
    }


def format_peer_report(report: dict) -> str:
    lines = [f"  {'method':<40} {'MedAE':>6} {'rank%':>6} {'cov90':>6} {'width':>6} {'fit s':>7}"]
    for fig in report["methods"].values():
        lines.append(
            f"  {fig['label'][:40]:<40} {fig['medae']:>6.2f} {100 * fig['ranking_accuracy']:>6.1f} "
            f"{fig['coverage_90']:>6.3f} {fig['median_width_90']:>6.1f} {fig['seconds']:>7.1f}"
        )
    rows = report["columns_vs_extra_trees"]
    named = [r for r in rows if r["benchmark_id"] in NAMED_COLUMNS]
    worst = rows[:5]
    lines.append(
        f"\n  per column (>= 30 held-out cells pooled): ours / ExtraTrees MedAE; "
        f"{len(report['columns_over_limit'])} of {len(rows)} over {RATIO_LIMIT}x"
    )
    for r in [*worst, *(r for r in named if r not in worst)]:
        lines.append(
            f"  {r['benchmark_id']:<28} n={r['n']:>4} ours {r['ours']:>6.2f} "
            f"ExtraTrees {r['peer']:>6.2f} ratio {r['ratio']:.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Dev splits (seeds of `benchmarks/dev_splits.py`): `python benchmarks/peers.py`."""
    import argparse
    import json

    from benchmarks.dev_splits import SEEDS
    from predictor.evaluation.protocols import (
        DEFAULT_MATRIX_PATH,
        DEFAULT_REGISTRY_PATH,
        load_paper_matrix,
        per_model_folds,
    )
    from predictor.side_information import paper_side_information

    parser = argparse.ArgumentParser(description="peers on the dev splits")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS[:3]))
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    values, _, benchmark_ids, scales = load_paper_matrix(DEFAULT_MATRIX_PATH)
    side = paper_side_information(DEFAULT_MATRIX_PATH, DEFAULT_REGISTRY_PATH, benchmark_ids)
    folds = per_model_folds(values, tuple(args.seeds))
    report = peer_report(values, scales, benchmark_ids, folds, side)
    print(f"dev splits: seeds {args.seeds}, {len(folds)} folds")
    print(format_peer_report(report))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(report, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
