"""The 5-probe protocol of `benchmarks/paper_protocol.py` (b) through the path users take.

Each model of the BenchPress paper matrix is left out in turn with its five default probes
(gpqa_diamond, hle, codeforces_rating, mmlu_pro, arc_agi_1) revealed, and its other observed
cells are predicted; the figure is the MedAE of those hidden cells, pooled over models:

- `user path`: `BenchPress.fit` on the other models' cells (a long frame with their release
  dates from `data.json`; families read from the ids), then `BenchPress.predict(probes,
  model=ID, release_date=DATE)`: what a team predicting a new model from its probes gets;
  and from the same fit `BenchPress.predict(probes)` alone (the whole population as its
  family's prior, its release date inferred from the probes);
- `complete_matrix, side information`: the protocol as `benchpress evaluate` runs it (the
  model's row with only its probes, in one fit with release dates, families and categories);
- `complete_matrix, no side information`: `complete_matrix(values, scales)`;
- `recipe`: the BenchPress reference recipe (vectorised logit bias ALS).

    python benchmarks/user_path.py               # every model, about 5 minutes on 2 cores
    python benchmarks/user_path.py --quick       # every 4th model
    python benchmarks/user_path.py --seeds 0 1 2 # each method with three seeds, and their mean

The methods are Monte Carlo fits: `--seeds` shows how much of a difference between two rows
is the seed's.
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

from predictor.api import BenchPress  # noqa: E402
from predictor.evaluation.protocols import (  # noqa: E402
    DEFAULT_MATRIX_PATH,
    DEFAULT_REGISTRY_PATH,
    PAPER_PROBES,
    SideAware,
    load_paper_matrix,
    load_paper_models,
    paper_scores_frame,
    run_probe_protocol,
)
from predictor.fit.completion import complete_matrix  # noqa: E402
from predictor.side_information import DEFAULT_USE, paper_side_information  # noqa: E402


def user_path(
    scores: pl.DataFrame,
    values: np.ndarray,
    model_ids: list[str],
    benchmark_ids: list[str],
    dates: dict[str, str | None],
    models: list[int],
    seed: int = 0,
) -> tuple[list[float], list[float], float, dict[str, int]]:
    """(absolute errors of every hidden cell with the model's name and date, the same without
    them, seconds, how the families were used)."""
    probes = [benchmark_ids.index(b) for b in PAPER_PROBES]
    errors: list[float] = []
    unnamed: list[float] = []
    families = {"known": 0, "population": 0}
    start = time.perf_counter()
    for i in models:
        revealed = {benchmark_ids[j]: values[i, j] for j in probes if np.isfinite(values[i, j])}
        hidden = [j for j in np.flatnonzero(np.isfinite(values[i])) if j not in probes]
        if not revealed or not hidden:
            continue
        frame = scores.filter(pl.col("model") != model_ids[i])
        bp = BenchPress.fit(frame, random_state=seed)
        answer = bp.predict(revealed, model=model_ids[i], release_date=dates.get(model_ids[i]))
        families["known" if answer.side.family_known else "population"] += 1
        errors += [abs(answer[benchmark_ids[j]].score - values[i, j]) for j in hidden]
        bare = bp.predict(revealed)  # no name, no date: the population, a date inferred
        unnamed += [abs(bare[benchmark_ids[j]].score - values[i, j]) for j in hidden]
    return errors, unnamed, time.perf_counter() - start, families


def left_out_models(values: np.ndarray, probes: list[int], quick: bool = False) -> list[int]:
    """The models the protocol leaves out: those with a probe to reveal and a cell to hide
    (every 4th with `quick`); the others are skipped by every method alike."""
    models = range(0, values.shape[0], 4 if quick else 1)
    return [
        i
        for i in models
        if np.isfinite(values[i, probes]).any()
        and (np.isfinite(values[i]).sum() > np.isfinite(values[i, probes]).sum())
    ]


def summarise(runs: list[tuple[list[float], float]]) -> dict:
    """Mean over seeds of the hidden cells' MedAE, each seed's, the cells, seconds per seed."""
    return {
        "medae_hidden": round(float(np.mean([np.median(e) for e, _ in runs])), 3),
        "medae_by_seed": [round(float(np.median(e)), 3) for e, _ in runs],
        "n_hidden": len(runs[0][0]),
        "seconds": round(float(np.mean([t for _, t in runs])), 1),
    }


def user_path_figures(data: Path, seeds: list[int], quick: bool = False) -> dict:
    """The user's path alone (`paper_protocol.py --user-path`): with and without the model's
    name and release date, `summarise`d over `seeds`."""
    values, model_ids, benchmark_ids, _ = load_paper_matrix(data)
    dates = dict(load_paper_models(data).select("model_id", "release_date").iter_rows())
    models = left_out_models(values, [benchmark_ids.index(b) for b in PAPER_PROBES], quick)
    scores = paper_scores_frame(data)
    named, bare = [], []
    for seed in seeds:
        with_name, without, seconds, _ = user_path(
            scores, values, model_ids, benchmark_ids, dates, models, seed
        )
        named.append((with_name, seconds))
        bare.append((without, seconds))
    return {
        "models": len(models),
        "seeds": list(seeds),
        "named": summarise(named),
        "no_name_or_date": summarise(bare),
    }


def protocol(values, scales, fit_predict, models: list[int], probes) -> tuple[list[float], float]:
    """Absolute errors of the hidden cells of `run_probe_protocol` over `models`."""
    errors: list[float] = []
    start = time.perf_counter()
    for i in models:
        run = run_probe_protocol(values, scales, probes, fit_predict, [i])
        hidden = run.cells.filter(~pl.col("revealed") & pl.col("mean").is_finite())
        errors += (hidden["actual"] - hidden["mean"]).abs().to_list()
    return errors, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_MATRIX_PATH), help="BenchPress data.json")
    parser.add_argument("--quick", action="store_true", help="every 4th model only")
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[0], help="random_state of every fit (default 0)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    values, model_ids, benchmark_ids, scales = load_paper_matrix(args.data)
    meta = load_paper_models(args.data)
    dates = dict(meta.select("model_id", "release_date").iter_rows())
    side = paper_side_information(args.data, DEFAULT_REGISTRY_PATH, benchmark_ids)
    probes = [benchmark_ids.index(b) for b in PAPER_PROBES]
    models = left_out_models(values, probes, args.quick)
    scores = paper_scores_frame(args.data)  # what BenchPress.fit is given, less one model
    per_seed: dict[str, list[tuple[list[float], float]]] = {}
    for seed in args.seeds:
        params = {"level": 0.9, "random_state": seed}
        named, bare, seconds, _ = user_path(
            scores, values, model_ids, benchmark_ids, dates, models, seed
        )
        runs = {
            "user path (BenchPress.fit + predict)": (named, seconds),
            "user path, no name or date given": (bare, seconds),
            "complete_matrix, side information": protocol(
                values, scales, SideAware(side, DEFAULT_USE, params), models, probes
            ),
            "complete_matrix, no side information": protocol(
                values, scales, partial(complete_matrix, **params), models, probes
            ),
            "recipe (logit bias ALS)": protocol(
                values, scales, partial(complete_matrix, method="als", **params), models, probes
            ),
        }
        for name, run in runs.items():
            per_seed.setdefault(name, []).append(run)
    figures = {name: summarise(runs) for name, runs in per_seed.items()}
    if args.json:
        print(json.dumps({"models": len(models), "figures": figures}, indent=2))
        return 0
    seeds = ", ".join(map(str, args.seeds))
    print(f"5-probe protocol, paper matrix: {len(models)} models left out in turn; seeds {seeds}")
    print(f"{'method':<40} {'MedAE hidden':>12} {'by seed':>24} {'cells':>6} {'s/seed':>7}")
    for name, row in figures.items():
        by_seed = " ".join(f"{v:.3f}" for v in row["medae_by_seed"])
        print(
            f"{name:<40} {row['medae_hidden']:>12.3f} {by_seed:>24} "
            f"{row['n_hidden']:>6} {row['seconds']:>7.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
