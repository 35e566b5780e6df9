"""`benchpress evaluate`: our method, the BenchPress recipe and a baseline, side by side.

`--protocol paper` (default): our default method (with the matrix's side information: release
dates, model families, benchmark categories), the same without side information, the
BenchPress reference recipe and a column-mean baseline, run on the BenchPress paper matrix and
its fold file. `--protocol future`: the time-honest protocol of
`predictor.evaluation.future` (fit on the models released before each quarter, fold in each
model of the quarter from 5 probes), on the paper matrix with its release dates or, with
`--source snapshot`, on a published snapshot's matrix (catalogue dates, else first seen).

The reference recipe is the plain loop port in
`benchmarks/reference_recipe.py` when the repository checkout has it (the yardstick for the
speed comparison), else the vectorised `LowRankCompleter` with the same recipe; the future
protocol folds new models in, which only the vectorised recipe can. `--csv` prints
`summary_frame(results)`: one row per method with its held-out and probe figures (future: one
row per quarter and method, then the pooled rows with quarter `all`).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from predictor.api import BenchPress
from predictor.cli.commands import EVALUATE
from predictor.cli.options import (
    add_commands,
    add_output_options,
    add_progress_option,
    interval_level,
)
from predictor.cli.output import TABLE, CommandError, emit, json_text, output_format, progress_bar
from predictor.evaluation.future import (
    FutureMethod,
    column_mean_future,
    format_future,
    ours_future,
    recipe_future,
    run_future_protocol,
)
from predictor.evaluation.protocols import (
    DEFAULT_FOLDS_PATH,
    DEFAULT_MATRIX_PATH,
    DEFAULT_REGISTRY_PATH,
    PAPER_PROBES,
    REPO_ROOT,
    Method,
    SideAware,
    column_mean_baseline,
    evaluate_methods,
    format_table,
    load_folds,
    load_paper_matrix,
)
from predictor.evaluation.registered import registered_future, registered_paper
from predictor.fit.completion import complete_matrix
from predictor.methods.registry import METHODS
from predictor.side_information import (
    DEFAULT_USE,
    SideInformation,
    paper_side_information,
    snapshot_side_information,
)

OURS_LABEL = "ours: Bayesian MF + side info"

REFERENCE_SCRIPT = REPO_ROOT / "benchmarks" / "reference_recipe.py"
# The protocol's peers; every registered completion method is a choice too, by its registry
# name (`method_names`)
METHOD_NAMES = ("ours", "ours_plain", "ours_date", "reference", "column_mean")
DEFAULT_METHODS = ("ours", "ours_plain", "reference", "column_mean")
FUTURE_METHOD_NAMES = ("ours", "ours_plain", "reference", "column_mean")
PROTOCOLS = ("paper", "future")
SOURCES = ("paper", "snapshot")
QUICK_FOLDS = 3  # the first seed's three folds
QUICK_PROBE_STRIDE = 4  # every 4th model in the probe protocol

# Figures BenchPress published for its recipe (logit bias ALS, rank 2) on the same matrix and
# protocol (arXiv:2606.24020): the peer every run is shown beside. Only figures measured the
# same way are in the table; its footer gives the other two (probe MedAE counting revealed
# cells as exact, 3.93; 90% width over all cells, 27.2).
PUBLISHED = {
    "held-out MedAE": 4.60,
    "ranking accuracy": 0.921,
    "90% coverage": 0.899,
}


def environment(start: float) -> dict[str, Any]:
    """Where the figures were measured, and how long the run took since `start`."""
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "wall_seconds": time.perf_counter() - start,
    }


def load_reference_recipe(path: Path = REFERENCE_SCRIPT) -> tuple[Any, str]:
    """(completer, label) of the reference recipe: the loop port if present, else vectorised."""
    if path.exists():
        spec = importlib.util.spec_from_file_location("benchpress_reference_recipe", path)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.reference_complete, "reference recipe (loop port)"
    return partial(complete_matrix, method="als"), "reference recipe (vectorised ALS)"


def method_names() -> tuple[str, ...]:
    """What `--methods` takes: the peers, then each registered method by its registry name."""
    return METHOD_NAMES + tuple(name for name in METHODS if name not in METHOD_NAMES)


def future_method_names() -> tuple[str, ...]:
    """What `--methods` takes with `--protocol future`."""
    return FUTURE_METHOD_NAMES + tuple(n for n in METHODS if n not in FUTURE_METHOD_NAMES)


def build_methods(
    names: list[str],
    data_path: Path,
    level: float,
    seed: int = 0,
    side: SideInformation | None = None,
) -> list[Method]:
    """The completers of the paper protocol; `side` is the matrix's side information (read
    from `data_path` and the benchmark registry when not given)."""
    if side is None and any(n in ("ours", "ours_date") or n in METHODS for n in names):
        benchmark_ids = load_paper_matrix(data_path)[2]
        side = paper_side_information(data_path, DEFAULT_REGISTRY_PATH, benchmark_ids)
    methods = []
    params = {"level": level, "random_state": seed}
    for name in names:
        if name == "ours":
            fp = SideAware(side, DEFAULT_USE, params)
            methods.append(Method(name, OURS_LABEL, fp))
        elif name == "ours_plain":
            fp = partial(complete_matrix, level=level, random_state=seed)
            methods.append(Method(name, "ours without side information", fp))
        elif name == "ours_date":
            fp = SideAware(side, ("date",), params)
            methods.append(Method(name, "ours, release date only", fp))
        elif name == "reference":
            fp, label = load_reference_recipe()
            methods.append(Method(name, label, fp))
        elif name == "column_mean":
            methods.append(Method(name, "column mean", partial(column_mean_baseline, level=level)))
        elif name in METHODS:  # a registered method as the product fits it
            fp = registered_paper(name, side, level, seed)
            methods.append(Method(name, METHODS[name].label, fp))
        else:
            raise CommandError(
                f"--methods: unknown method {name!r}; choose from {', '.join(method_names())}"
            )
    return methods


def peer_figures(
    results: dict, ours: str = "ours", reference: str = "reference", plain: str = "ours_plain"
) -> list[dict]:
    """Our method's figures beside the same method without side information, the BenchPress
    recipe run here and as published: held-out MedAE, 5-probe MedAE (hidden cells), ranking
    accuracy, 90% width (percent benchmarks) and coverage, seconds of the held-out folds."""
    methods = results["methods"]
    if ours not in methods:
        return []

    def figure(method: str, part: str, key: str) -> float | None:
        value = methods.get(method, {}).get(part, {}).get(key)
        return None if value is None or not np.isfinite(value) else float(value)

    rows = [
        ("held-out MedAE", "holdout", "medae"),
        ("probe MedAE (5 probes)", "probe", "medae_hidden"),
        ("ranking accuracy", "holdout", "ranking_accuracy"),
        ("90% median width", "holdout", "median_width_90"),
        ("90% coverage", "holdout", "coverage_90"),
        ("held-out seconds", "holdout", "seconds"),
    ]
    figures = []
    for name, part, key in rows:
        value = figure(ours, part, key)
        if value is None:
            continue
        figures.append(
            {
                "figure": name,
                "ours": value,
                "ours_plain": figure(plain, part, key),
                "recipe_here": figure(reference, part, key),
                "benchpress_published": PUBLISHED.get(name),
            }
        )
    return figures


def format_peers(figures: list[dict], ours_label: str) -> str:
    """The comparison table under the per-method table: ours, ours without side
    information, the recipe run here, the recipe as published."""

    def cell(value: float | None, name: str) -> str:
        if value is None:
            return ""
        if name in ("ranking accuracy", "90% coverage"):
            return f"{100 * value:.1f}%" if name == "ranking accuracy" else f"{value:.3f}"
        return (
            f"{value:.1f}" if name in ("90% median width", "held-out seconds") else f"{value:.2f}"
        )

    lines = [
        f"{ours_label} beside the same without side information and the BenchPress recipe "
        "(same matrix and folds):",
        f"  {'figure':<24} {'ours':>8} {'no side info':>13} {'recipe here':>12} {'published':>10}",
    ]
    for f in figures:
        name = f["figure"]
        lines.append(
            f"  {name:<24} {cell(f['ours'], name):>8} {cell(f['ours_plain'], name):>13} "
            f"{cell(f['recipe_here'], name):>12} {cell(f['benchpress_published'], name):>10}"
        )
    lines.append(
        "  width: median 90% interval width over percent benchmarks, points (BenchPress "
        "publishes 27.2 over all cells); probe MedAE: hidden cells only (BenchPress publishes "
        "3.93 counting the revealed cells as exact); published: BenchPress, logit bias ALS "
        "rank 2 (arXiv:2606.24020)"
    )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict:
    if getattr(args, "protocol", "paper") == "future":
        return run_future(args)
    if getattr(args, "source", "paper") != "paper":
        raise CommandError(
            "--source snapshot needs --protocol future (held-out figures on a snapshot's "
            "matrix: python benchmarks/own_matrices.py)"
        )
    data_path = Path(args.data)
    folds_path = Path(args.folds)
    for kind, path, where in (
        ("matrix", data_path, "pipelines/replay/microsoft.github.io/benchpress/"),
        ("fold file", folds_path, "benchmarks/data/"),
    ):
        if not path.exists():  # ValueError: `benchpress` prints it as a one-line error
            raise ValueError(f"{kind} not found: {path} (the repository keeps it in {where})")
    values, _, benchmark_ids, scales = load_paper_matrix(data_path)
    folds = load_folds(folds_path)
    probe_models = None
    if args.quick:
        folds = folds[:QUICK_FOLDS]
        probe_models = list(range(0, values.shape[0], QUICK_PROBE_STRIDE))
    names = [n.strip() for n in args.methods.split(",") if n.strip()]
    if not names:
        raise CommandError(f"--methods needs at least one of {', '.join(method_names())}")
    methods = build_methods(names, data_path, args.level, args.seed)
    probes = () if args.no_probe else PAPER_PROBES

    with progress_bar(args, desc="evaluate", unit="fit") as bar:

        def on_fit(phase: str, method: str, done: int, total: int) -> None:
            bar.update_to(done, total)

        def progress(message: str) -> None:
            if bar.enabled:
                bar.describe(message.partition(":")[0])  # "held-out", "probes"
            elif output_format(args) == TABLE:
                print(f"... {message}", file=sys.stderr, flush=True)

        start = time.perf_counter()
        results = evaluate_methods(
            values,
            scales,
            benchmark_ids,
            folds,
            methods,
            probes=probes,
            probe_models=probe_models,
            progress=progress,
            on_fit=on_fit if bar.enabled else None,
        )
    results["protocol"].update(
        {
            "data": _display_path(data_path),
            "folds_file": _display_path(folds_path),
            "quick": bool(args.quick),
            "level": args.level,
            "seed": args.seed,
        }
    )
    results["peers"] = peer_figures(results)
    results["environment"] = environment(start)
    return results


def future_matrix(args: argparse.Namespace) -> tuple[np.ndarray, list[str], SideInformation, dict]:
    """(values, scales, side information, description) of the matrix `--source` names."""
    if args.source == "paper":
        data_path = Path(args.data)
        if not data_path.exists():
            raise ValueError(f"matrix not found: {data_path}")
        values, _, benchmark_ids, scales = load_paper_matrix(data_path)
        side = paper_side_information(data_path, DEFAULT_REGISTRY_PATH, benchmark_ids)
        return values, scales, side, {"source": "paper", "data": _display_path(data_path)}
    bp = BenchPress.load(args.version)
    # the fitted matrix: the rows and columns every prediction is made from
    model_ids, benchmark_ids = bp.fit_models_, bp.fit_benchmarks_
    values = np.array(bp.completer_.values_, dtype=float)
    scales = list(bp.completer_.transform_.scales)
    snapshot = bp.snapshot
    side = snapshot_side_information(
        snapshot.models, snapshot.benchmarks, snapshot.cells, model_ids, benchmark_ids
    )
    return values, scales, side, {"source": "snapshot", "version": bp.version}


def build_future_methods(names: list[str], seed: int = 0) -> list[FutureMethod]:
    methods = []
    for name in names:
        if name == "ours":
            methods.append(FutureMethod(name, OURS_LABEL, ours_future(DEFAULT_USE, seed)))
        elif name == "ours_plain":
            methods.append(
                FutureMethod(name, "ours without side information", ours_future((), seed))
            )
        elif name == "reference":
            methods.append(
                FutureMethod(name, "reference recipe (vectorised ALS)", recipe_future(seed))
            )
        elif name == "column_mean":
            methods.append(FutureMethod(name, "column mean", column_mean_future()))
        elif name in METHODS:
            methods.append(FutureMethod(name, METHODS[name].label, registered_future(name, seed)))
        else:
            raise CommandError(
                f"--methods: {name!r} is not a method of the future protocol; choose from "
                f"{', '.join(future_method_names())}"
            )
    return methods


def run_future(args: argparse.Namespace) -> dict:
    """`--protocol future`: per-quarter figures of every method (`run_future_protocol`)."""
    names = [n.strip() for n in args.methods.split(",") if n.strip()]
    if names == list(DEFAULT_METHODS) or not names:
        names = list(FUTURE_METHOD_NAMES)
    methods = build_future_methods(names, args.seed)
    values, scales, side, where = future_matrix(args)
    start = time.perf_counter()

    def progress(message: str) -> None:
        if output_format(args) == TABLE:
            print(f"... {message}", file=sys.stderr, flush=True)

    results = run_future_protocol(
        values, scales, side, methods, level=args.level, progress=progress
    )
    results["protocol"].update(where)
    results["protocol"]["seed"] = args.seed
    results["environment"] = environment(start)
    return results


def future_frame(results: dict) -> pl.DataFrame:
    """The future protocol's rows: per quarter and method, then pooled (quarter "all")."""
    pooled = results["pooled"].with_columns(quarter=pl.lit("all"))
    return pl.concat([results["quarters"], pooled], how="diagonal_relaxed")


def summary_frame(results: dict) -> pl.DataFrame:
    """One row per method (`--csv`): `method`, `label`, then every figure of its held-out
    summary as `holdout_<name>` and of its probe summary as `probe_<name>`, as in the
    `evaluate_methods` results (per-fold rows and targets are in the JSON only)."""
    rows = []
    for name, entry in results["methods"].items():
        row: dict[str, Any] = {"method": name, "label": entry["label"]}
        for part in ("holdout", "probe"):
            for key, value in entry.get(part, {}).items():
                if value is None or isinstance(value, bool | int | float | str):
                    row[f"{part}_{key}"] = value
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)


def _display_path(path: Path) -> str:
    """Repository-relative when inside the checkout, so outputs carry no machine paths."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return path.name


def _check_out(path: str) -> Path:
    """The `--out` file, checked before minutes of fitting rather than after."""
    out = Path(path)
    if out.is_dir():
        raise CommandError(f"--out {path} is a directory; give the path of a JSON file")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CommandError(f"--out {path}: cannot create its folder ({exc.strerror})") from None
    if not os.access(out.parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise CommandError(f"--out {path} is not writable")
    return out


def cmd_evaluate(args: argparse.Namespace) -> int:
    out = _check_out(args.out) if args.out else None
    results = run(args)
    if results["protocol"].get("name") == "future":
        frame = future_frame(results)
        payload = {
            "protocol": results["protocol"],
            "quarters": results["quarters"].to_dicts(),
            "pooled": results["pooled"].to_dicts(),
            "environment": results["environment"],
        }
        if out is not None:
            out.write_text(json_text(payload) + "\n")

        def future_table() -> None:
            print(format_future(results))
            if args.out:
                print(f"\nwrote {args.out}")

        emit(args, frame, payload=payload, table=future_table)
        return 0
    if out is not None:
        out.write_text(json_text(results) + "\n")

    def table() -> None:
        print(format_table(results))
        ours = results["methods"].get("ours")
        if ours is not None and results["peers"]:
            print()
            print(format_peers(results["peers"], ours["label"]))
        if args.out:
            print(f"\nwrote {args.out}")

    emit(args, summary_frame(results), payload=results, table=table)
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="paper",
        help="paper: held-out folds and probes of the paper matrix (default); future: fit on "
        "the models released before each quarter, predict the quarter's models from 5 probes",
    )
    parser.add_argument(
        "--source",
        choices=SOURCES,
        default="paper",
        help="matrix of --protocol future: the paper matrix (default) or a published snapshot",
    )
    parser.add_argument(
        "--version", default="latest", help="snapshot of --source snapshot (default: latest)"
    )
    parser.add_argument(
        "--data", default=str(DEFAULT_MATRIX_PATH), help="BenchPress data.json (default: in repo)"
    )
    parser.add_argument(
        "--folds", default=str(DEFAULT_FOLDS_PATH), help="fold file (default: benchmarks/data/)"
    )
    parser.add_argument(
        "--methods",
        default=",".join(DEFAULT_METHODS),
        help=f"comma-separated subset of {','.join(method_names())} (default: %(default)s)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"first {QUICK_FOLDS} folds only, probes for every {QUICK_PROBE_STRIDE}th model",
    )
    parser.add_argument("--no-probe", action="store_true", help="skip the probe protocol")
    parser.add_argument(
        "--level", type=interval_level, default=0.9, help="interval level (default 0.9)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random_state of our method")
    add_output_options(
        parser,
        json_help="print the results as JSON",
        csv_help="one row per method (held-out and probe figures) as CSV",
    )
    parser.add_argument("--out", help="also write the JSON results to this file")
    add_progress_option(parser)


def evaluate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__.splitlines()[0]
    add_arguments(parser)
    parser.set_defaults(func=cmd_evaluate)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `evaluate` to a parser's sub-commands."""
    add_commands(subparsers, EVALUATE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchpress evaluate", description=__doc__)
    add_arguments(parser)
    return cmd_evaluate(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
