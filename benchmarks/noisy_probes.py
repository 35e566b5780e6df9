"""Noisy probes, declared or not: 90% coverage and error of the fold-in (measure only).

For models of the bundled snapshot's fit with enough percent scores: k of their percent
scores (seeded random choice) are the probes, each moved by Gaussian noise of sd `--stderr`
points (clipped to 0-100), as a subset run's score would be; every other observed cell of the
model is a target. Three fold-ins per model, as `BenchPress.predict` does them (release date
inferred from the probes):

- exact: the probes as published (no noise added);
- noisy, undeclared: the noisy probes taken as exact (what every fold-in did before);
- noisy, declared: the noisy probes with their standard error (`BenchPress.fold_in_noise`).

Printed: 90% coverage over the targets and the median / mean absolute error over the percent
targets. The models are in-sample (their cells were fitted), so the levels are optimistic;
the three rows differ only in the probes, so the comparison is fair. Held-out models and
item-count noise: `benchmarks/probe_budget.py`.

    python benchmarks/noisy_probes.py [--k 5] [--stderr 6] [--models 249] [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np

from predictor import BenchPress
from predictor.side_information import unknown_features


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=5, help="probes per model")
    parser.add_argument("--stderr", type=float, default=6.0, help="probe noise sd, points")
    parser.add_argument("--models", type=int, default=249, help="models at most")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    bp = BenchPress.load()
    completer = bp.completer_
    features = unknown_features(completer)
    values = bp.observed_values(bp.fit_models_, bp.fit_benchmarks_)
    percent = np.array([bp.scale_of(b) == "percent" for b in bp.fit_benchmarks_])
    rng = np.random.default_rng(args.seed)
    rows = [i for i in range(len(values)) if (np.isfinite(values[i]) & percent).sum() >= args.k + 8]
    rng.shuffle(rows)
    rows = rows[: args.models]
    kinds = ("exact", "noisy, undeclared", "noisy, declared")
    covered: dict[str, list[float]] = {k: [] for k in kinds}
    errors: dict[str, list[np.ndarray]] = {k: [] for k in kinds}
    for i in rows:
        scored = np.flatnonzero(np.isfinite(values[i]) & percent)
        probes = rng.choice(scored, args.k, replace=False)
        targets = np.setdiff1d(np.flatnonzero(np.isfinite(values[i])), probes)
        exact = np.full(values.shape[1], np.nan)
        exact[probes] = values[i, probes]
        noisy = exact.copy()
        noisy[probes] = np.clip(exact[probes] + args.stderr * rng.standard_normal(args.k), 0, 100)
        stderr = np.where(np.isnan(exact), np.nan, args.stderr)
        noise = bp.fold_in_noise(noisy, stderr)
        declared = {} if noise is None else {"noise_sd": noise}
        for kind, row, extra in (
            ("exact", exact, {}),
            ("noisy, undeclared", noisy, {}),
            ("noisy, declared", noisy, declared),
        ):
            mean, low, high, _ = completer.fold_in_summary(
                row, 0.9, 5.0, features=features, **extra
            )
            truth = values[i, targets]
            inside = (truth >= low[targets]) & (truth <= high[targets])
            covered[kind].append(float(inside.mean()))
            errors[kind].append(np.abs(mean[targets] - truth)[percent[targets]])
    print(
        f"snapshot {bp.version}: {len(rows)} in-sample models, {args.k} probes each, "
        f"probe noise sd {args.stderr:g} points"
    )
    print(f"{'probes':20s} {'90% coverage':>13s} {'MedAE':>7s} {'MAE':>7s}")
    for kind in kinds:
        every = np.concatenate(errors[kind])
        print(
            f"{kind:20s} {np.mean(covered[kind]):13.3f} {np.median(every):7.2f} "
            f"{np.mean(every):7.2f}"
        )


if __name__ == "__main__":
    main()
