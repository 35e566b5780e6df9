"""Reproduce the BenchPress paper's held-out figures for the reference recipe and a baseline.

Runs "logit bias ALS, rank 2" (LowRankCompleter defaults) and the column-mean baseline on the
paper's 30 folds (10 seeds x 3 per-model folds) and reports the median over folds.

    python benchmarks/paper_protocol.py --out paper_protocol.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from functools import partial
from pathlib import Path

import numpy as np

from predictor.completion import complete_matrix
from predictor.evaluation import (
    column_mean_baseline,
    holdout_errors,
    load_folds,
    load_paper_matrix,
    summarize_errors,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = Path("..") / "shared" / "leaderboards" / "benchpress_matrix"
REFERENCE_PARAMS = dict(rank=2, alpha=0.1, n_iter=40, n_seeds=10, random_state=0, cv_folds=3)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_DATA_DIR,
        help="directory with data.json and the fold file; relative paths are taken from the "
        "repo root (default: %(default)s)",
    )
    parser.add_argument("--folds-file", default="folds_s10_f3_bs42_ms1.json")
    parser.add_argument("--out", type=Path, help="write per-fold rows and summaries as JSON here")
    parser.add_argument("--level", type=float, default=0.9, help="interval level (default 0.9)")
    parser.add_argument("--max-folds", type=int, help="only run the first N folds (quick check)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    data_dir = args.data_dir if args.data_dir.is_absolute() else REPO_ROOT / args.data_dir
    values, _, benchmark_ids, scales = load_paper_matrix(data_dir / "data.json")
    folds = load_folds(data_dir / args.folds_file)[: args.max_folds]
    methods = {
        "logit_bias_als_r2": partial(complete_matrix, level=args.level, **REFERENCE_PARAMS),
        "column_mean": partial(column_mean_baseline, level=args.level),
    }

    results = {}
    for name, fit_predict in methods.items():
        start = time.perf_counter()
        per_fold = holdout_errors(values, scales, folds, fit_predict)
        summary = summarize_errors(per_fold)
        summary["wall_seconds"] = time.perf_counter() - start
        results[name] = {"summary": summary, "per_fold": per_fold.to_dicts()}

    print_table(results, args.level, len(folds), values)
    if args.out:
        payload = {
            "protocol": {
                "data": "data.json",
                "folds_file": args.folds_file,
                "n_folds": len(folds),
                "n_models": int(values.shape[0]),
                "n_benchmarks": len(benchmark_ids),
                "n_observed": int(np.isfinite(values).sum()),
                "level": args.level,
                "aggregation": "median over folds of each fold's figure",
            },
            "reference_params": REFERENCE_PARAMS,
            "published": {"medae": 4.576, "medape": 7.78, "coverage": 0.8994, "width": 27.17},
            "python": platform.python_version(),
            "methods": results,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(payload, indent=2))
        print(f"wrote {args.out}")
    return 0


def print_table(results: dict, level: float, n_folds: int, values: np.ndarray) -> None:
    pct = int(round(level * 100))
    print(f"{values.shape[0]}x{values.shape[1]} matrix, {n_folds} folds (median over folds)")
    header = (
        f"{'method':<20} {'MedAE':>7} {'MedAPE%':>8} {'within5':>8} "
        f"{f'cov{pct}':>7} {f'width{pct}':>8} {'wall s':>7}"
    )
    print(header)
    print("-" * len(header))
    for name, res in results.items():
        s = res["summary"]
        print(
            f"{name:<20} {s['medae']:>7.3f} {s['medape']:>8.2f} {s['within5']:>8.3f} "
            f"{s['coverage']:>7.3f} {s['median_width']:>8.2f} {s['wall_seconds']:>7.1f}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
