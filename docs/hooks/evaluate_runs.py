"""Rerun the evaluations the method page's figures are drawn from (docs/assets/data/).

(Not an MkDocs hook: a script kept beside them, outside the built site.) The figures hook
(`docs/hooks/figures.py`) draws from the files this writes and never runs an evaluation itself:
even the paper protocol's `--quick` run (its first 3 folds, probes for every 4th model) takes
minutes, too long for `make docs`. So each file is
stored with what produced it, in `docs/assets/data/provenance.json`: the command, the day it
ran, the package commit, and the SHA-256 of its data (the paper matrix, its fold file). The
hook prints the command, the matrix and the run's day and commit under each figure, and fails a
strict build when the data changed since the run, so the page cannot show stale numbers
silently. (Code changes are not detected: the caption's day and commit say what ran.)

    python docs/hooks/evaluate_runs.py                 # every run (about 10 min on 2 quiet cores)
    python docs/hooks/evaluate_runs.py --only probes   # one of: paper, future, probes
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "docs" / "assets" / "data"
PROVENANCE = DATA / "provenance.json"
MATRIX = "pipelines/replay/microsoft.github.io/benchpress/data.json"
FOLDS = "benchmarks/data/folds_s10_f3_bs42_ms1.json"
PROBE_COUNTS = (1, 2, 3, 5, 8, 12)
PROBE_METHODS = ("ours", "reference", "column_mean")

# name -> (output file, the command a reader reruns, the inputs whose change makes it stale)
RUNS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "paper": (
        "evaluate_paper.json",
        "benchpress evaluate --quick --json --out evaluate_paper.json",
        (MATRIX, FOLDS),
    ),
    "future": (
        "evaluate_future.json",
        "benchpress evaluate --protocol future --json --out evaluate_future.json",
        (MATRIX,),
    ),
    "probes": (
        "probes_future.json",
        "python docs/hooks/evaluate_runs.py --only probes",
        (MATRIX,),
    ),
}


def sha256(relpath: str) -> str:
    return hashlib.sha256((ROOT / relpath).read_bytes()).hexdigest()


def fingerprints(inputs: tuple[str, ...]) -> dict[str, str]:
    """Input path (repository-relative) -> SHA-256 of its bytes now."""
    return {path: sha256(path) for path in inputs}


def commit() -> str | None:
    """The checkout's commit, with "+changes" when the tree differs from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return None
    return (head + "+changes" if dirty else head) or None


def run_evaluate(argv: list[str], out: Path) -> None:
    """`benchpress evaluate ARGV --json --out OUT`, as a reader would type it."""
    command = [sys.executable, "-m", "predictor.cli", "evaluate", *argv, "--json"]
    command += ["--no-progress", "--out", str(out)]
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def fitted_once(method):
    """The method with its fits kept: the cuts are the same for every number of probes, so
    each quarter's fit is made once and only the fold-ins are repeated."""
    from dataclasses import replace

    import numpy as np

    kept: dict[tuple, object] = {}

    def fit(values, scales, side, level):
        key = (np.asarray(values).tobytes(), np.asarray(values).shape, tuple(scales), level)
        if key not in kept:
            kept[key] = method.fit(values, scales, side, level)
        return kept[key]

    return replace(method, fit=fit)


def probe_sweep(out: Path) -> None:
    """The time-honest protocol of `benchpress evaluate --protocol future` on the paper matrix,
    once per number of probes (the CLI fixes it at 5): the same cuts, methods and code."""
    from predictor.cli.evaluate import build_future_methods, future_matrix
    from predictor.cli.output import json_text
    from predictor.evaluation.future import run_future_protocol

    args = argparse.Namespace(source="paper", data=str(ROOT / MATRIX))
    values, scales, side, where = future_matrix(args)
    methods = [fitted_once(m) for m in build_future_methods(list(PROBE_METHODS))]
    rows = []
    for k in PROBE_COUNTS:
        results = run_future_protocol(values, scales, side, methods, n_probes=k)
        for row in results["pooled"].to_dicts():
            rows.append({"n_probes": k, **row})
        print(f"{k} probes done", file=sys.stderr, flush=True)
    payload = {"protocol": {"name": "future", "n_probes": list(PROBE_COUNTS), **where}}
    out.write_text(json_text({**payload, "pooled": rows}) + "\n")


def record(name: str) -> None:
    """Note in provenance.json what produced the run's file: its bytes, the command, when,
    the commit and its inputs' checksums."""
    filename, command, inputs = RUNS[name]
    provenance = json.loads(PROVENANCE.read_text()) if PROVENANCE.exists() else {}
    provenance[filename] = {
        "sha256": sha256(str((DATA / filename).relative_to(ROOT))),
        "command": command,
        "run_on": dt.date.today().isoformat(),
        "commit": commit(),
        "inputs": fingerprints(inputs),
    }
    PROVENANCE.write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(RUNS), action="append", help="run only these")
    args = parser.parse_args(argv)
    DATA.mkdir(parents=True, exist_ok=True)
    for name in args.only or list(RUNS):
        out = DATA / RUNS[name][0]
        if name == "paper":
            run_evaluate(["--quick"], out)
        elif name == "future":
            run_evaluate(["--protocol", "future"], out)
        else:
            probe_sweep(out)
        record(name)
        print(f"wrote {out.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
