"""Greedy probe selection on the BenchPress paper matrix, against the paper's five probes.

Prints:
1. the time to select k=5 probes over all 133 benchmarks of the 84 x 133 paper matrix
   (one default-method fit + the greedy search), and the set chosen;
2. the hidden-cell MedAE of the paper's leave-one-model-out probe protocol
   (`predictor.evaluation.protocols.run_probe_protocol`, default method) for
   a. the paper's probes (gpqa_diamond, hle, codeforces_rating, mmlu_pro, arc_agi_1),
   b. the set selected on the full matrix (IN-SAMPLE: the scored models took part in the
      selection),
   c. out-of-sample selection: models split into 3 folds (seeded); for each fold the probes are
      selected on the other two folds' rows only and the fold's models are scored with them.
   Each set hides different cells (its own probes are revealed), as in the paper's protocol.

    python benchmarks/probe_selection.py [--k 5] [--models 84] [--out probe_selection.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from predictor.evaluation.protocols import (  # noqa: E402
    DEFAULT_MATRIX_PATH,
    PAPER_PROBES,
    ProbeRun,
    load_paper_matrix,
    run_probe_protocol,
    summarize_probe,
)
from predictor.fit.completion import complete_matrix  # noqa: E402
from predictor.trust.probes import select_probes_detailed  # noqa: E402


def _probe_medae(values, scales, columns, models) -> dict:
    run = run_probe_protocol(values, scales, columns, complete_matrix, models)
    s = summarize_probe(run)
    return {
        "medae_hidden": s["medae_hidden"],
        "n_hidden": s["n_hidden"],
        "medae_paper_style": s["medae_paper"],
        "seconds": run.seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_MATRIX_PATH)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--models", type=int, help="score only the first N models (quick run)")
    parser.add_argument("--seed", type=int, default=1000, help="seed of the 3 model folds")
    parser.add_argument(
        "--min-coverage",
        type=float,
        default=0.5,
        help="candidate probes must be observed for this share of models "
        "(the extra out-of-sample row)",
    )
    parser.add_argument(
        "--n-splits",
        type=int,
        default=1,
        help="selection score: 1 = in-sample fold-in, > 1 = cross-fitted over that many "
        "model groups (select_probes_detailed's n_splits)",
    )
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)

    values, _, benchmark_ids, scales = load_paper_matrix(args.data)
    n = values.shape[0]
    models = list(range(n if args.models is None else min(args.models, n)))

    start = time.perf_counter()
    full = select_probes_detailed(
        values, scales, k=args.k, benchmarks=benchmark_ids, n_splits=args.n_splits
    )
    select_s = time.perf_counter() - start
    print(
        f"select k={args.k} over {values.shape[1]} benchmarks ({n} x {values.shape[1]}): "
        f"{select_s:.2f} s (fit + greedy search)"
    )
    for b, e in zip(full.benchmarks, full.errors, strict=True):
        how = "in-sample fold-in" if args.n_splits == 1 else f"cross-fitted, {args.n_splits} groups"
        print(f"  + {b:<28} expected MedAE ({how}) {e:.2f}")

    paper_cols = [benchmark_ids.index(b) for b in PAPER_PROBES]
    results = {"select_seconds": select_s, "selected_full": full.as_dict()}
    results["paper"] = _probe_medae(values, scales, paper_cols, models)
    results["selected_in_sample"] = _probe_medae(values, scales, full.columns, models)

    rng = np.random.default_rng(args.seed)
    fold_of = rng.permutation(n) % 3
    for cov in (0.0, args.min_coverage):
        key = "selected_out_of_sample" if cov == 0.0 else "selected_out_of_sample_covered"
        results[key] = _out_of_sample(
            values, scales, benchmark_ids, models, fold_of, args.k, cov, args.n_splits
        )

    print(f"\nleave-one-model-out probe protocol, default method, {len(models)} models:")
    print(f"{'probe set':<50} {'MedAE hidden':>12} {'n hidden':>9} {'paper-style':>11}")
    for key, label in [
        ("paper", "paper: " + ",".join(PAPER_PROBES)),
        ("selected_in_sample", "selected on full matrix (in-sample)"),
        ("selected_out_of_sample", "selected without the scored models (3 folds)"),
        (
            "selected_out_of_sample_covered",
            f"same, candidates observed for >= {args.min_coverage:.0%} of models",
        ),
    ]:
        r = results[key]
        print(
            f"{label[:50]:<50} {r['medae_hidden']:>12.2f} {r['n_hidden']:>9d} "
            f"{r['medae_paper_style']:>11.2f}"
        )
    print("selected in-sample: " + ", ".join(full.benchmarks))
    for key in ("selected_out_of_sample", "selected_out_of_sample_covered"):
        for f, s in enumerate(results[key]["fold_sets"]):
            print(f"{key} fold {f}: " + ", ".join(s))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))
    return 0


def _out_of_sample(
    values, scales, benchmark_ids, models, fold_of, k, min_coverage, n_splits=1
) -> dict:
    oos_cells, fold_sets = [], []
    for f in range(3):
        train = np.flatnonzero(fold_of != f)
        test = [i for i in models if fold_of[i] == f]
        keep = np.flatnonzero(np.isfinite(values[train]).sum(axis=0) >= 2)
        sel = select_probes_detailed(
            values[np.ix_(train, keep)],
            [scales[j] for j in keep],
            k=k,
            benchmarks=[benchmark_ids[j] for j in keep],
            min_coverage=min_coverage,
            n_splits=n_splits,
        )
        cols = [int(keep[c]) for c in sel.columns]
        fold_sets.append([benchmark_ids[c] for c in cols])
        if test:
            oos_cells.append(run_probe_protocol(values, scales, cols, complete_matrix, test).cells)
    oos = summarize_probe(ProbeRun(cells=pl.concat(oos_cells), seconds=float("nan")))
    return {
        "medae_hidden": oos["medae_hidden"],
        "n_hidden": oos["n_hidden"],
        "medae_paper_style": oos["medae_paper"],
        "fold_sets": fold_sets,
    }


if __name__ == "__main__":
    raise SystemExit(main())
