"""`benchpress` cold start: how long a command takes from the shell, beside a bare Python.

Each command runs `--runs` times (default 5) as a subprocess in a temporary BENCHPRESS_HOME
and the median wall time of each is printed:

    python -c pass                                          (the interpreter alone)
    benchpress --version
    benchpress --help
    benchpress predict --scores gpqa_diamond=80,hle=20,...  (the bundled snapshot)
    benchpress models list                                  (a store of one model)

One unmeasured run of each comes first: it writes the bytecode caches an installed package
has (PYTHONDONTWRITEBYTECODE is left out of the commands' environment for that reason).

`--refresh` adds the pipeline's figure (about a minute): `benchpress refresh --mode replay`
into an empty home, then again in the same home with nothing changed, and their ratio
(`unchanged_rerun_seconds`).

    python benchmarks/cli_latency.py [--runs 5] [--refresh] [--out latency.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PREDICT_SCORES = "gpqa_diamond=80,hle=20,mmlu_pro=80"
PRIVATE_SCORES = "model,benchmark,score\nbench-model,gpqa_diamond,70\nbench-model,mmlu_pro,75\n"


def benchpress_command() -> list[str]:
    """The installed `benchpress` script beside this Python, else the module."""
    script = Path(sys.executable).parent / "benchpress"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "predictor.cli"]


def environment(home: Path) -> dict[str, str]:
    """This environment without BENCHPRESS_* settings (but the home) and without
    PYTHONDONTWRITEBYTECODE, so the warm-up run leaves the bytecode caches users have."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("BENCHPRESS_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    return {**env, "BENCHPRESS_HOME": str(home)}


def run(argv: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one run; a failing command stops the benchmark (its stderr shown)."""
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    return seconds


def median_seconds(argv: list[str], env: dict[str, str], runs: int) -> float:
    run(argv, env)  # warm-up: bytecode caches, the OS's file cache
    return statistics.median(run(argv, env) for _ in range(runs))


def prepare_home(home: Path, env: dict[str, str]) -> None:
    """A home whose private store holds one model, so `models list` opens a store."""
    home.mkdir(parents=True, exist_ok=True)
    scores = home.parent / "bench-model.csv"
    scores.write_text(PRIVATE_SCORES)
    run([*benchpress_command(), "models", "add", "bench-model", "--from", str(scores)], env)


def cold_start(runs: int) -> list[dict[str, object]]:
    """One row per command: its label and median seconds."""
    bp = benchpress_command()
    cases = [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("benchpress --version", [*bp, "--version"]),
        ("benchpress --help", [*bp, "--help"]),
        (f"benchpress predict --scores {PREDICT_SCORES}", [*bp, "predict", "--scores", PREDICT_SCORES]),  # noqa: E501
        ("benchpress models list", [*bp, "models", "list"]),
    ]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="cli-latency-") as folder:
        env = environment(Path(folder) / "home")
        prepare_home(Path(folder) / "home", env)
        return [
            {"command": label, "median_s": median_seconds(argv, env, runs)} for label, argv in cases
        ]


def unchanged_rerun_seconds() -> tuple[float, float]:
    """(a fresh `refresh --mode replay` into an empty home, the same refresh again in that
    home with nothing changed), in wall seconds."""
    argv = [*benchpress_command(), "refresh", "--mode", "replay"]
    with tempfile.TemporaryDirectory(prefix="cli-latency-refresh-") as folder:
        env = environment(Path(folder) / "home")
        return run(argv, env), run(argv, env)


def print_table(rows: list[dict[str, object]]) -> None:
    width = max(len(str(r["command"])) for r in rows)
    print(f"{'command':<{width}}  median_s")
    for row in rows:
        print(f"{row['command']:<{width}}  {row['median_s']:8.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per command (median)")
    parser.add_argument(
        "--refresh",
        action="store_true",
        help="also time a fresh and an unchanged `refresh --mode replay` (about a minute)",
    )
    parser.add_argument("--out", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args()
    rows = cold_start(args.runs)
    print_table(rows)
    figures: dict[str, object] = {"runs": args.runs, "cold_start": rows}
    if args.refresh:
        fresh, unchanged = unchanged_rerun_seconds()
        print(
            f"\nrefresh --mode replay: fresh {fresh:.1f} s, unchanged rerun {unchanged:.1f} s "
            f"(ratio {unchanged / fresh:.2f})"
        )
        figures["refresh"] = {"fresh_s": fresh, "unchanged_s": unchanged}
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
