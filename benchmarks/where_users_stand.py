"""Known, renamed and undated models predicted the way users ask, on the bundled snapshot.

Fitted models of the snapshot whose release date a source states are split into seeded
folds; each fold leaves the fit (`BenchPress.fit` on every other fitted cell, with the
snapshot's release dates, families, scales and categories), and each of its models reveals
five probe scores (the snapshot's default probe set first, then its runnable sets, then the
most observed benchmarks it has) and has its other cells predicted through
`BenchPress.predict`:

- (a) `bare`: `predict(probes)`, as the web page, `predict --from` and `run` are used with no
  name: the date is inferred from the probes;
- (b) `name`: `predict(probes, model=ID)`, the model's cells out of the fit but its identity
  row (name, release date, family) kept, as a public model with too few scores to fit is;
- (c) `fine-tune name`: `predict(probes, model=ID + "-sft-v2")`, the same identity row: a
  fine-tune of a known base;
- (d) `true date`: `predict(probes, model=ID, release_date=DATE)`;
- `recipe`: the BenchPress recipe (logit bias ALS) fitted on the same cells, `predict(probes)`.

The figure is the median over models of each model's median absolute error on its hidden
cells (points), per release-date stratum and overall, with the 90% intervals' coverage of
those cells. Then the ratios the product decision rests on: (b), (c) and (a) against (d).

    python benchmarks/where_users_stand.py              # 5 folds, about a minute on 2 cores
    python benchmarks/where_users_stand.py --quick      # every other model, 3 folds
    python benchmarks/where_users_stand.py --seed 1     # another split of the models
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from predictor.api import BenchPress  # noqa: E402
from predictor.side_information import fractional_year  # noqa: E402
from predictor.trust.probe_sets import ProbeBenchmarks  # noqa: E402
from predictor.values import FractionScoresWarning  # noqa: E402

N_PROBES = 5
MIN_HIDDEN = 3
WAYS = ("bare", "name", "fine-tune name", "true date", "recipe")
STRATA = (
    ("pre-2025", -np.inf, 2025.0),
    ("2025-01..08", 2025.0, 2025 + 8 / 12),
    ("2025-09 on", 2025 + 8 / 12, np.inf),
)
FINE_TUNE_SUFFIX = "-sft-v2"


def within_range(bp: BenchPress, date: str) -> str:
    """`date` moved to the nearest end of the fit's `release_date_range`, as the product
    moves a known model's own date: a fold's fit can lack the oldest models' years, and a
    date further out is refused (`ReleaseDateError`)."""
    allowed = bp.release_date_range
    if allowed is None:
        return date
    day = date if len(date) == 10 else (date + "-01-01")[:10]
    return min(max(day, allowed[0]), allowed[1])


def probe_order(bp: BenchPress) -> list[str]:
    """Benchmarks in the order probes are taken: the default set, the runnable sets, then
    by how many fitted models have a score."""
    sets = ProbeBenchmarks.for_snapshot(bp)
    counts = bp.snapshot.cells.group_by("benchmark_id").len().sort("len", descending=True)
    ordered = [*sets.default, *sets.lm_eval, *sets.low_cost, *counts["benchmark_id"]]
    return [b for b in dict.fromkeys(ordered) if b in bp._column]


def eligible_models(bp: BenchPress, order: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """(model, its probes, its hidden benchmarks) of fitted models with a stated release
    date, five probes and at least `MIN_HIDDEN` other fitted cells."""
    cells = bp.snapshot.cells.filter(pl.col("model_id").is_in(bp.fit_models_))
    has = cells.group_by("model_id").agg(pl.col("benchmark_id"))
    has = {m: set(b) & set(bp.fit_benchmarks_) for m, b in has.iter_rows()}
    out = []
    for model in bp.fit_models_:
        date, source = bp._model_dates.get(model, (None, None))
        if date is None or source == "first_seen":
            continue
        probes = [b for b in order if b in has[model]][:N_PROBES]
        hidden = sorted(has[model] - set(probes))
        if len(probes) == N_PROBES and len(hidden) >= MIN_HIDDEN:
            out.append((model, probes, hidden))
    return out


def long_frame(bp: BenchPress, models: set[str]) -> pl.DataFrame:
    """The fitted cells of `models` as `BenchPress.fit` takes them, with side information."""
    dates = {
        m: d for m, (d, src) in bp._model_dates.items() if d is not None and src != "first_seen"
    }
    benchmarks = bp.snapshot.benchmarks.select(
        pl.col("benchmark_id").alias("benchmark"), "scale", "category"
    )
    cells = bp.snapshot.cells.filter(
        pl.col("model_id").is_in(list(models)) & pl.col("benchmark_id").is_in(bp.fit_benchmarks_)
    )
    frame = cells.select(
        pl.col("model_id").alias("model"), pl.col("benchmark_id").alias("benchmark"), "score"
    ).join(benchmarks, on="benchmark")
    return frame.with_columns(
        pl.col("model")
        .replace_strict(dates, default=None, return_dtype=pl.String)
        .alias("release_date")
    )


def with_identities(bp: BenchPress, source: BenchPress, models: list[str]) -> BenchPress:
    """`bp` whose models table also names `models` (their date and family from `source`):
    public models the snapshot knows but could not fit."""
    rows = source.snapshot.models.filter(pl.col("model_id").is_in(models)).with_columns(
        pl.lit(False).alias("in_fit")
    )
    table = pl.concat([bp.snapshot.models, rows], how="diagonal_relaxed")
    return BenchPress(dataclasses.replace(bp.snapshot, models=table))


def errors(preds, truth: dict[str, float]) -> tuple[float, float]:
    """(median absolute error, fraction of cells inside the interval) on `truth`'s cells."""
    err = [abs(preds[b].score - v) for b, v in truth.items()]
    inside = [preds[b].low <= v <= preds[b].high for b, v in truth.items()]
    return float(np.median(err)), float(np.mean(inside))


def run(bp: BenchPress, folds: int, seed: int, step: int) -> pl.DataFrame:
    order = probe_order(bp)
    chosen = eligible_models(bp, order)[::step]
    rng = np.random.default_rng(seed)
    fold_of = rng.permutation(len(chosen)) % folds
    rows = []
    for f in range(folds):
        held = [c for c, k in zip(chosen, fold_of, strict=True) if k == f]
        out = {m for m, _, _ in held}
        frame = long_frame(bp, set(bp.fit_models_) - out)
        start = time.perf_counter()
        fitted = BenchPress.fit(frame, random_state=seed)
        recipe = BenchPress.fit(frame, method="als")
        named = with_identities(fitted, bp, sorted(out))
        seconds = time.perf_counter() - start
        print(
            f"fold {f + 1}/{folds}: {len(held)} models held out, fits {seconds:.0f} s", flush=True
        )
        for model, probes, hidden in held:
            values = dict(
                bp.snapshot.cells.filter(pl.col("model_id") == model)
                .select("benchmark_id", "score")
                .iter_rows()
            )
            revealed = {b: values[b] for b in probes}
            truth = {b: values[b] for b in hidden if b in fitted._column}
            date = bp._model_dates[model][0]
            answers = {
                "bare": fitted.predict(revealed),
                "name": named.predict(revealed, model=model),
                "fine-tune name": named.predict(revealed, model=model + FINE_TUNE_SUFFIX),
                "true date": named.predict(
                    revealed, model=model, release_date=within_range(named, date)
                ),
                "recipe": recipe.predict(revealed),
            }
            for way, preds in answers.items():
                medae, cover = errors(preds, truth)
                side = preds.side
                rows.append(
                    {
                        "model": model,
                        "year": fractional_year(date),
                        "way": way,
                        "medae": medae,
                        "coverage": cover,
                        "cells": len(truth),
                        "basis": side.basis,
                        "date_used": side.release_date,
                    }
                )
    return pl.DataFrame(rows)


def summary(results: pl.DataFrame) -> pl.DataFrame:
    """MedAE (median over models) and pooled 90% coverage per way and stratum."""
    out = []
    for way in WAYS:
        part = results.filter(pl.col("way") == way)
        row: dict[str, object] = {"way": way}
        for label, low, high in (*STRATA, ("all", -np.inf, np.inf)):
            s = part.filter((pl.col("year") >= low) & (pl.col("year") < high))
            row[f"{label} ({s.height})"] = round(float(s["medae"].median()), 2)
            cover = float((s["coverage"] * s["cells"]).sum() / s["cells"].sum())
            row[f"cov {label}"] = round(cover, 3)
        out.append(row)
    return pl.DataFrame(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="every other model, 3 folds")
    parser.add_argument("--version", default="latest", help="snapshot (default: newest)")
    parser.add_argument("--csv", type=Path, help="write every model's figures here")
    args = parser.parse_args()
    # a few published scores are small percentages (ARC-AGI-2 at 0.83%), not fractions
    warnings.simplefilter("ignore", FractionScoresWarning)
    bp = BenchPress.load(args.version)
    folds, step = (3, 2) if args.quick else (args.folds, 1)
    start = time.perf_counter()
    results = run(bp, folds, args.seed, step)
    if args.csv:
        results.write_csv(args.csv)
    table = summary(results)
    print(
        f"\nsnapshot {bp.version}: {results['model'].n_unique()} models held out in {folds} folds"
    )
    print("median over models of each model's median absolute error on its hidden cells; ")
    print("cov: share of those cells inside the 90% interval\n")
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        print(table)
    overall = dict(zip(table["way"], table.select(pl.col("^all .*$")).to_series(), strict=True))
    truth = overall["true date"]
    print()
    for way in ("name", "fine-tune name", "bare", "recipe"):
        print(f"{way:>15} / true date: {overall[way] / truth:.2f}x")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
