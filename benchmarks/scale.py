"""How the default method's fit time and memory grow with the number of models.

A synthetic matrix per size: N models x 1,000 benchmarks, percent scores whose logits are
column offsets + an exact rank-2 product + N(0, 0.3^2) noise, 5% of cells observed at random.
Each size is fitted by `BayesianCompleter()` with its default parameters in a fresh process, so
the peak resident memory reported is that fit's own (data generation included). Also reports
the MedAE on 5,000 unobserved cells against the noise-free truth (a sanity check) and the
time to materialise the completed N x 1,000 matrix (not part of the fit). The last line gives
the largest size's fit time and peak memory, with the number of CPUs.

    python benchmarks/scale.py                       # 1k, 2k, 5k, 10k models
    python benchmarks/scale.py --sizes 1000,10000 --out scale.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

N_BENCHMARKS = 1000
FILL = 0.05
NOISE = 0.3


def synthetic(n: int, m: int = N_BENCHMARKS, fill: float = FILL, seed: int = 0):
    """(observed values with NaN, noise-free truth) in percent."""
    rng = np.random.default_rng(seed)
    offsets = rng.normal(0.0, 0.5, (1, m))
    u, v = rng.normal(0.0, 0.8, (n, 2)), rng.normal(0.0, 0.8, (2, m))
    clean = offsets + u @ v
    truth = 100.0 / (1.0 + np.exp(-clean))
    observed = rng.random((n, m)) < fill
    observed[rng.integers(0, n, m), np.arange(m)] = True  # every benchmark has a score
    noisy = 100.0 / (1.0 + np.exp(-(clean + rng.normal(0.0, NOISE, (n, m)))))
    values = np.where(observed, noisy, np.nan)
    return values, truth


def child(n: int) -> dict:
    from predictor.methods.bayesian import BayesianCompleter

    values, truth = synthetic(n)
    scales = ["percent"] * values.shape[1]
    start = time.perf_counter()
    model = BayesianCompleter().fit(values, scales)
    fit_seconds = time.perf_counter() - start
    rss_fit = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    start = time.perf_counter()
    completed = model.predict()
    predict_seconds = time.perf_counter() - start
    rng = np.random.default_rng(1)
    missing = np.argwhere(np.isnan(values))
    pick = missing[rng.choice(len(missing), size=min(5000, len(missing)), replace=False)]
    err = np.abs(completed[pick[:, 0], pick[:, 1]] - truth[pick[:, 0], pick[:, 1]])
    n_cells = int(np.isfinite(values).sum())
    sweeps = int(model.n_chains_used_) * (model.n_burn + model.n_samples)
    return {
        "n_models": n,
        "n_benchmarks": values.shape[1],
        "n_cells": n_cells,
        "chains": int(model.n_chains_used_),
        "ns_per_cell_sweep": fit_seconds / sweeps / n_cells * 1e9,
        "fit_seconds": fit_seconds,
        "peak_rss_mb_after_fit": rss_fit,
        "predict_seconds": predict_seconds,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "heldout_medae_vs_truth": float(np.median(err)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,2000,5000,10000", help="numbers of models")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child)))
        return 0

    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", str(n)],
            capture_output=True,
            text=True,
            check=True,
        )
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(
            f"{row['n_models']:>6} models x {row['n_benchmarks']} benchmarks, "
            f"{row['n_cells']:>7} cells, {row['chains']} chains: fit {row['fit_seconds']:6.1f} s, "
            f"peak {row['peak_rss_mb']:6.0f} MB, completed matrix {row['predict_seconds']:4.1f} s, "
            f"MedAE vs truth {row['heldout_medae_vs_truth']:.2f}",
            flush=True,
        )
    base = rows[0]
    print(
        "\ngrowth relative to the first size (the chain count drops once chains x cells "
        "exceeds 1e6, so also the cost of one chain sweep per observed cell):"
    )
    for row in rows:
        ratio = row["n_models"] / base["n_models"]
        print(
            f"  {row['n_models']:>6} models: x{ratio:<4g} models -> "
            f"x{row['fit_seconds'] / base['fit_seconds']:.2f} fit time, "
            f"{row['ns_per_cell_sweep']:.0f} ns per cell per chain sweep"
        )
    big = max(rows, key=lambda r: r["n_models"])
    print(
        f"\nat {big['n_models']} models: fit {big['fit_seconds']:.1f} s, "
        f"peak memory {big['peak_rss_mb']:.0f} MB; {os.cpu_count()} CPUs"
    )
    if args.out:
        payload = {
            "rows": rows,
            "fill": FILL,
            "noise_logit_sd": NOISE,
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
        }
        Path(args.out).write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
