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
scales)`: no side information), `reference`, `column_mean`. Below the tables: the figures of
issue 18 side by side (held-out MedAE, 5-probe MedAE of the hidden cells, ranking accuracy,
90% width and coverage, seconds for the 30 folds) for ours, ours without side information,
the recipe run here and as BenchPress published it.

    python benchmarks/paper_protocol.py --out paper_protocol.json     # about 4 minutes
    python benchmarks/paper_protocol.py --quick                        # 3 folds, 21 models
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from predictor.cli.evaluate import add_arguments, format_peers, run  # noqa: E402
from predictor.evaluation import format_table  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    results = run(args)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(format_table(results))
        ours = results["methods"].get("ours")
        if ours is not None and results["peers"]:
            print()
            print(format_peers(results["peers"], ours["label"]))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n")
        if not args.json:
            print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
