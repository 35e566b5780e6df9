"""Held-out figures on our own matrices: the published one and single-source ones that no
setting was chosen on.

Predictions are made from the published matrix (hundreds of models, many sources), not from
the paper's 84 x 133, so this measures our method where users predict. Matrices, all from the
bundled snapshot's cells (or `--version`):

- `published`: the snapshot's fitted matrix (the rows and columns `BenchPress.predict` uses);
- `livebench`, `open_llm_leaderboard`, `epoch_ai`: the cells whose published source is that
  leaderboard, models with at least 10 (open_llm_leaderboard: all 6) scores and benchmarks
  with at least 8 (`select`), Open LLM Leaderboard thinned to `--max-models` seeded models.

Protocol: per-model 3-fold splits (`predictor.evaluation.per_model_folds`, the paper's
construction) on seeds 0-2 (9 fits per method and matrix); median over folds of MedAE, the 90%
coverage and median width (percent benchmarks), and the pairwise ranking accuracy (gap >= 5).
Methods: ours (the default method with the matrix's side information: catalogue release dates,
else first seen; families; categories), ours without side information, the
BenchPress recipe (vectorised ALS: the loop port is too slow for these sizes) and column mean.

    python benchmarks/own_matrices.py                     # about 4 minutes on 2 cores
    python benchmarks/own_matrices.py --matrices livebench --seeds 0 --out own.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import polars as pl

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from pipelines.identity.registry import load_registry  # noqa: E402
from pipelines.stages.side_information import fit_side_information  # noqa: E402
from predictor.api import BenchPress  # noqa: E402
from predictor.evaluation.protocols import (  # noqa: E402
    SideAware,
    column_mean_baseline,
    per_model_folds,
    ranking_accuracy,
    run_holdout,
    summarize_errors,
)
from predictor.fit.completion import complete_matrix  # noqa: E402
from predictor.fit.dense import dense_matrix  # noqa: E402
from predictor.side_information import DEFAULT_USE  # noqa: E402

MATRICES = ("published", "livebench", "open_llm_leaderboard", "epoch_ai")
MIN_PER_MODEL = {"livebench": 10, "open_llm_leaderboard": 6, "epoch_ai": 10}
MIN_PER_BENCHMARK = 8


def select(cells: pl.DataFrame, min_per_model: int, min_per_benchmark: int) -> pl.DataFrame:
    """Drop sparse models and benchmarks until every one left meets its minimum."""
    while True:
        models = cells.group_by("model_id").len().filter(pl.col("len") >= min_per_model)
        benches = cells.group_by("benchmark_id").len().filter(pl.col("len") >= min_per_benchmark)
        kept = cells.filter(
            pl.col("model_id").is_in(models["model_id"].implode())
            & pl.col("benchmark_id").is_in(benches["benchmark_id"].implode())
        )
        if kept.height == cells.height:
            return kept
        cells = kept


def build_matrix(bp: BenchPress, name: str, max_models: int, seed: int = 0):
    """(values, model ids, benchmark ids, scales, cells) of one matrix of the snapshot."""
    cells = bp.snapshot.cells
    scale = dict(bp.snapshot.benchmarks.select("benchmark_id", "scale").iter_rows())
    if name == "published":
        fitted = cells.filter(
            pl.col("model_id").is_in(bp.fit_models_)
            & pl.col("benchmark_id").is_in(bp.fit_benchmarks_)
        )
    else:
        fitted = select(
            cells.filter(pl.col("source") == name), MIN_PER_MODEL[name], MIN_PER_BENCHMARK
        )
        models = sorted(fitted["model_id"].unique().to_list())
        if len(models) > max_models:
            rng = np.random.default_rng(seed)
            keep = sorted(rng.choice(models, size=max_models, replace=False).tolist())
            fitted = fitted.filter(pl.col("model_id").is_in(keep))
    values, models, benches = dense_matrix(fitted)
    return values, models, benches, [scale[b] for b in benches], cells


def evaluate_matrix(name: str, bp: BenchPress, seeds: list[int], max_models: int) -> dict:
    values, models, benches, scales, cells = build_matrix(bp, name, max_models)
    side = fit_side_information(models, benches, cells, load_registry())
    folds = per_model_folds(values, seeds)
    methods = {
        "ours": SideAware(side, DEFAULT_USE, {"level": 0.9}),
        "ours_plain": partial(complete_matrix, level=0.9),
        "recipe": partial(complete_matrix, level=0.9, method="als"),
        "column_mean": partial(column_mean_baseline, level=0.9),
    }
    out: dict = {
        "n_models": len(models),
        "n_benchmarks": len(benches),
        "n_cells": int(np.isfinite(values).sum()),
        "n_folds": len(folds),
        "methods": {},
    }
    for method, fit_predict in methods.items():
        start = time.perf_counter()
        run = run_holdout(values, scales, folds, fit_predict)
        summary = summarize_errors(run.per_fold)
        rank = ranking_accuracy(values, run.cells, 5.0)
        out["methods"][method] = {
            "medae": summary["medae"],
            "coverage_90": summary.get("coverage_90", summary["coverage"]),
            "median_width_90": summary.get("median_width_90", float("nan")),
            "ranking_accuracy": rank["accuracy"],
            "seconds": time.perf_counter() - start,
        }
        print(
            f"  {name:<22} {method:<12} MedAE {summary['medae']:6.2f}  "
            f"90% cov {out['methods'][method]['coverage_90']:.3f} / width "
            f"{out['methods'][method]['median_width_90']:5.1f}  rank {rank['accuracy']:.3f}  "
            f"({out['methods'][method]['seconds']:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
    return out


def format_results(results: dict) -> str:
    methods = ("ours", "ours_plain", "recipe", "column_mean")
    head = f"{'matrix':<22} {'models':>6} {'bench':>5} {'cells':>6}" + "".join(
        f" {m:>12}" for m in methods
    )
    lines = ["held-out MedAE (median over per-model folds), points", head, "-" * len(head)]
    for name, r in results["matrices"].items():
        line = f"{name:<22} {r['n_models']:>6} {r['n_benchmarks']:>5} {r['n_cells']:>6}"
        line += "".join(f" {r['methods'][m]['medae']:>12.2f}" for m in methods)
        lines.append(line)
    lines += ["", "90% coverage / median width (percent benchmarks); ranking accuracy"]
    for name, r in results["matrices"].items():
        parts = []
        for m in methods:
            f = r["methods"][m]
            cov, width = f["coverage_90"], f["median_width_90"]
            text = "-" if not np.isfinite(width) else f"{cov:.3f}/{width:4.1f}"
            parts.append(f"{m} {text} {100 * f['ranking_accuracy']:.1f}%")
        lines.append(f"{name:<22} " + "; ".join(parts))
    lines.append(
        f"\nsnapshot {results['version']}; per-model 3-fold splits, seeds "
        f"{','.join(map(str, results['seeds']))}; ours = default method with side information"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="latest", help="snapshot (default: latest)")
    parser.add_argument("--matrices", default=",".join(MATRICES), help="comma-separated subset")
    parser.add_argument("--seeds", default="0,1,2", help="seeds of the per-model 3-fold splits")
    parser.add_argument("--max-models", type=int, default=600, help="rows per single source")
    parser.add_argument("--out", help="also write the JSON results here")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.matrices.split(",") if n.strip()]
    unknown = sorted(set(names) - set(MATRICES))
    if unknown:
        parser.error(f"--matrices: unknown {unknown}; choose from {', '.join(MATRICES)}")
    seeds = [int(s) for s in args.seeds.split(",")]
    bp = BenchPress.load(args.version)
    results = {
        "version": bp.version,
        "seeds": seeds,
        "matrices": {name: evaluate_matrix(name, bp, seeds, args.max_models) for name in names},
    }
    print(format_results(results))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
