"""`benchpress evaluate`: our method, the BenchPress recipe and a baseline, side by side.

Our default method, the BenchPress reference recipe and a column-mean baseline, run on the
BenchPress paper matrix and its fold file.

Wired into `benchpress` by `register(subparsers)`. The reference recipe is the plain loop port in
`benchmarks/reference_recipe.py` when the repository checkout has it (the yardstick for the
speed comparison), else the vectorised `LowRankCompleter` with the same recipe.
`--csv` prints `summary_frame(results)`: one row per method with its held-out and probe figures.
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

from predictor.cli_output import (
    TABLE,
    CommandError,
    add_output_options,
    add_progress_option,
    emit,
    interval_level,
    json_text,
    output_format,
    progress_bar,
)
from predictor.completion import complete_matrix
from predictor.evaluation import (
    DEFAULT_FOLDS_PATH,
    DEFAULT_MATRIX_PATH,
    PAPER_PROBES,
    REPO_ROOT,
    Method,
    column_mean_baseline,
    evaluate_methods,
    format_table,
    load_folds,
    load_paper_matrix,
    load_paper_models,
)

REFERENCE_SCRIPT = REPO_ROOT / "benchmarks" / "reference_recipe.py"
METHOD_NAMES = ("ours", "ours_date", "reference", "column_mean")
DEFAULT_METHODS = ("ours", "ours_date", "reference", "column_mean")
QUICK_FOLDS = 3  # the first seed's three folds
QUICK_PROBE_STRIDE = 4  # every 4th model in the probe protocol

# Figures BenchPress published for its recipe (logit bias ALS, rank 2) on the same matrix and
# protocol (arXiv:2606.24020): the peer every run is shown beside.
PUBLISHED = {
    "held-out MedAE": 4.60,
    "probe MedAE (5 probes)": 3.93,
    "ranking accuracy": 0.921,
    "90% coverage": 0.899,
    "90% median width": 27.2,
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


def build_methods(names: list[str], data_path: Path, level: float, seed: int = 0) -> list[Method]:
    methods = []
    for name in names:
        if name == "ours":
            fp = partial(complete_matrix, level=level, random_state=seed)
            methods.append(Method(name, "ours: robust Bayesian MF", fp))
        elif name == "ours_date":
            years = load_paper_models(data_path)["release_year"].to_numpy().astype(float)
            fp = partial(complete_matrix, level=level, random_state=seed, row_features=years)
            methods.append(Method(name, "ours + release date", fp))
        elif name == "reference":
            fp, label = load_reference_recipe()
            methods.append(Method(name, label, fp))
        elif name == "column_mean":
            methods.append(Method(name, "column mean", partial(column_mean_baseline, level=level)))
        else:
            raise CommandError(
                f"--methods: unknown method {name!r}; choose from {', '.join(METHOD_NAMES)}"
            )
    return methods


def peer_figures(results: dict, ours: str = "ours", reference: str = "reference") -> list[dict]:
    """Our method's figures beside the BenchPress recipe's, as published and as run here."""
    methods = results["methods"]
    if ours not in methods:
        return []
    h = methods[ours]["holdout"]
    ref = methods.get(reference, {}).get("holdout", {})
    rows = [
        ("held-out MedAE", h["medae"], ref.get("medae")),
        ("ranking accuracy", h["ranking_accuracy"], ref.get("ranking_accuracy")),
    ]
    if np.isfinite(h.get("coverage_90", float("nan"))):
        rows += [
            ("90% coverage", h["coverage_90"], None),  # the recipe has no intervals
            ("90% median width", h["median_width_90"], None),
        ]
    if "probe" in methods[ours]:
        ref_probe = methods.get(reference, {}).get("probe", {}).get("medae_hidden")
        rows.append(("probe MedAE (5 probes)", methods[ours]["probe"]["medae_hidden"], ref_probe))
    figures = [
        {
            "figure": name,
            "ours": float(value),
            "recipe_here": None if here is None else float(here),
            "benchpress_published": PUBLISHED.get(name),
        }
        for name, value, here in rows
    ]
    if ref.get("seconds") and h["seconds"] > 0:
        speed = ref["seconds"] / h["seconds"]
        figures.append(
            {
                "figure": "speed vs recipe (x)",
                "ours": speed,
                "recipe_here": 1.0,
                "benchpress_published": None,
            }
        )
    return figures


def format_peers(figures: list[dict], ours_label: str) -> str:
    """The comparison table under the per-method table: ours, the recipe run here, published."""

    def cell(value: float | None) -> str:
        return "" if value is None else f"{value:.4g}"

    lines = [
        f"{ours_label} beside the BenchPress recipe (same matrix and folds):",
        f"  {'figure':<26} {'ours':>9} {'recipe here':>12} {'published':>10}",
    ]
    for f in figures:
        lines.append(
            f"  {f['figure']:<26} {cell(f['ours']):>9} {cell(f['recipe_here']):>12} "
            f"{cell(f['benchpress_published']):>10}"
        )
    lines.append("  published: BenchPress, logit bias ALS rank 2 (arXiv:2606.24020)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict:
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
        raise CommandError(f"--methods needs at least one of {', '.join(METHOD_NAMES)}")
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
    results["environment"] = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "wall_seconds": time.perf_counter() - start,
    }
    return results


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
        "--data", default=str(DEFAULT_MATRIX_PATH), help="BenchPress data.json (default: in repo)"
    )
    parser.add_argument(
        "--folds", default=str(DEFAULT_FOLDS_PATH), help="fold file (default: benchmarks/data/)"
    )
    parser.add_argument(
        "--methods",
        default=",".join(DEFAULT_METHODS),
        help=f"comma-separated subset of {','.join(METHOD_NAMES)} (default: %(default)s)",
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


def register(subparsers: Any) -> None:
    """Add `evaluate` to the `benchpress` sub-commands."""
    parser = subparsers.add_parser(
        "evaluate",
        help="compare our method, the BenchPress recipe and a baseline on the paper matrix",
        description=__doc__.splitlines()[0],
    )
    add_arguments(parser)
    parser.set_defaults(func=cmd_evaluate)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchpress evaluate", description=__doc__)
    add_arguments(parser)
    return cmd_evaluate(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
