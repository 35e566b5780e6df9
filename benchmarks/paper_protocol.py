"""Our default method vs the same without side information vs the BenchPress reference recipe
vs a column-mean baseline, on the BenchPress paper matrix with the paper's protocols, side by
side in one run (what `benchpress evaluate` runs).

(a) held-out cells: the 30 folds of `benchmarks/data/folds_s10_f3_bs42_ms1.json` (10 seeds x
    3 per-model folds): median over folds of MedAE, MedAPE, share within 5 points, 90% interval
    coverage and width, and pairwise ranking accuracy (gap >= 5, median over benchmarks);
(b) probes: leave one model out with gpqa_diamond, hle, codeforces_rating, mmlu_pro, arc_agi_1
    revealed: MedAE of the hidden cells, and counting the revealed cells as exact (paper style);
(c) seconds spent inside each completer (the reference is a plain loop port of the recipe,
    `benchmarks/reference_recipe.py`).

Methods: `ours` (the default method given the matrix's side information: release dates,
model families, benchmark categories), `ours_plain` (`complete_matrix(values,
scales)`: no side information), `reference`, `column_mean`. Below the tables: the headline
figures side by side (held-out MedAE, 5-probe MedAE of the hidden cells, ranking accuracy,
90% width and coverage, seconds for the 30 folds) for ours, ours without side information,
the recipe run here and as BenchPress published it.

With `--peers`, also the peers a practitioner could pick instead that install from the
package index (`benchmarks/peers.py`: scikit-learn's IterativeImputer with ExtraTrees in logit
space and KNNImputer) beside ours on the same held-out folds, and per benchmark with at least
30 held-out cells pooled over the folds our MedAE against ExtraTrees' (where the low-rank
model bends least well). ExtraTrees takes about 25 s a fold on 2 cores.

With `--user-path [SEED ...]`, also (b) through the path users take (`benchmarks/user_path.py`):
each model left out, `BenchPress.fit` on the others' cells and `BenchPress.predict(probes,
model=ID, release_date=DATE)`, MedAE of the hidden cells (mean over the seeds, default 0;
about 6 minutes a seed on 2 cores).

    python benchmarks/paper_protocol.py --out paper_protocol.json     # about 4 minutes
    python benchmarks/paper_protocol.py --quick                        # 3 folds, 21 models
    python benchmarks/paper_protocol.py --peers --no-probe             # + peers, ~15 minutes
    python benchmarks/paper_protocol.py --peers --user-path 0 1 2      # the whole comparison
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.peers import format_peer_report, peer_report  # noqa: E402
from benchmarks.user_path import user_path_figures  # noqa: E402
from predictor.cli.evaluate import QUICK_FOLDS, add_arguments, format_peers, run  # noqa: E402
from predictor.evaluation.protocols import (  # noqa: E402
    DEFAULT_REGISTRY_PATH,
    format_table,
    load_folds,
    load_paper_matrix,
)
from predictor.side_information import paper_side_information  # noqa: E402


def peers(args) -> dict:
    """Ours beside the scikit-learn peers on the held-out folds of the run."""
    values, _, benchmark_ids, scales = load_paper_matrix(Path(args.data))
    side = paper_side_information(Path(args.data), DEFAULT_REGISTRY_PATH, benchmark_ids)
    folds = load_folds(Path(args.folds))
    if args.quick:
        folds = folds[:QUICK_FOLDS]
    return peer_report(values, scales, benchmark_ids, folds, side, args.level, args.seed)


def format_user_path(figures: dict) -> str:
    """Two lines: the 5-probe MedAE through `BenchPress.fit` + `predict`, named and not."""
    seeds = ", ".join(map(str, figures["seeds"]))
    lines = [
        f"5-probe protocol through BenchPress.fit + predict ({figures['models']} models left out "
        f"in turn; seeds {seeds}): MedAE of the hidden cells"
    ]
    for key, label in (("named", "with the model's name and date"), ("no_name_or_date", "without")):
        row = figures[key]
        by_seed = ", ".join(f"{v:.2f}" for v in row["medae_by_seed"])
        cells = row["n_hidden"]
        lines.append(f"  {label:<32} {row['medae_hidden']:.2f} ({by_seed}; {cells} cells)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--peers", action="store_true", help="also the scikit-learn peers")
    parser.add_argument(
        "--user-path",
        type=int,
        nargs="*",
        default=None,
        metavar="SEED",
        help="also the 5-probe protocol through BenchPress.fit + predict (seeds; default 0)",
    )
    args = parser.parse_args(argv)
    results = run(args)
    if args.peers:
        results["sklearn_peers"] = peers(args)
    if args.user_path is not None:
        results["user_path"] = user_path_figures(
            Path(args.data), args.user_path or [0], quick=args.quick
        )
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(format_table(results))
        ours = results["methods"].get("ours")
        if ours is not None and results["peers"]:
            print()
            print(format_peers(results["peers"], ours["label"]))
        if args.peers:
            print("\nheld-out folds, ours beside the scikit-learn peers:")
            print(format_peer_report(results["sklearn_peers"]))
        if args.user_path is not None:
            print()
            print(format_user_path(results["user_path"]))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n")
        if not args.json:
            print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
