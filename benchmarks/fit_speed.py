"""How long `BenchPress.fit` takes on a team's own long frame, by phase.

A synthetic but realistic tidy frame per size: hub-style model names (`org/line-3.1-8b-instruct`
and their fine-tunes), 50 benchmarks (45 registry ids such as `mmlu_pro` and `gpqa_diamond`,
one unbounded Elo column, 4 of a team's own), scores whose logits are a benchmark offset + a
rank-3 product + a small date trend + N(0, 0.3^2) noise, 10% of the cells missing at random
and a release date for 90% of the models; the number of models is chosen so the frame has the
given number of rows. Each size is fitted through the public path, `BenchPress.fit(frame)`
with its defaults (the default method, side information and the new-model interval
calibration), in a fresh process; the phases are timed from the fit's `progress` reports
(`predictor.util.progress`): checking the frame, the fit, the calibration's held-out fits and
fold-ins, and building the predictor. Timings on a shared machine are noisy: the load
average before and after each size is printed with it.

    python benchmarks/fit_speed.py                       # 12.5k, 50k and 200k rows
    python benchmarks/fit_speed.py --sizes 12500 --out fit_speed.json
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import polars as pl

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

N_BENCHMARKS = 50
FILL = 0.9  # share of the model x benchmark cells scored
DATED = 0.9  # share of the models with a release date
RANK = 3
NOISE = 0.3  # logit sd of the cell noise
DEFAULT_SIZES = "12500,50000,200000"

_REGISTRY_IDS = (  # noqa: SIM905
    "mmlu_pro gpqa_diamond hle aime_2025 aime_2024 math_500 livecodebench humaneval mbpp "
    "ifeval bigbench_hard gsm8k arc_challenge hellaswag mmlu mmlu_redux drop simpleqa "
    "swe_bench_verified aider_polyglot bfcl_v3 arena_hard mmmu mathvista chartqa docvqa "
    "frames browsecomp livebench tau_bench_retail tau_bench_airline terminal_bench "
    "multichallenge ifbench global_mmlu mgsm winogrande boolq truthfulqa gpqa_main math_level_5 "
    "bigcodebench humaneval_plus mbpp_plus c_eval"
).split()
_ELO = "chatbot_arena_elo"
_OWN = ("acme_support_tickets", "acme_sql_agent", "acme_doc_qa", "acme_refusals")
_ORGS = (  # noqa: SIM905
    "meta-llama qwen mistralai google microsoft deepseek-ai allenai nvidia 01-ai tiiuae "
    "ibm-granite internlm openchat nousresearch teknium upstage abacusai cohere"
).split()
_LINES = (  # noqa: SIM905
    "llama-3.1 llama-3.2 llama-3.3 qwen2.5 qwen3 mistral mixtral gemma-2 gemma-3 phi-3.5 "
    "phi-4 deepseek-r1-distill olmo-2 nemotron yi-1.5 falcon3 granite-3.1 internlm2.5 "
    "openchat-3.6 hermes-3 solar command-r"
).split()
_SIZES = ("0.5b", "1b", "1.5b", "3b", "7b", "8b", "9b", "14b", "27b", "32b", "70b", "72b")
_TUNES = ("", "-instruct", "-chat", "-it", "-base")
_ADAPTERS = ("sft", "dpo", "orpo", "merge", "ties", "slerp", "v0.1", "v2", "math", "coder")


def benchmark_ids() -> list[str]:
    ids = [*_REGISTRY_IDS[: N_BENCHMARKS - 1 - len(_OWN)], _ELO, *_OWN]
    assert len(ids) == N_BENCHMARKS and len(set(ids)) == N_BENCHMARKS
    return ids


def model_names(n: int, rng: np.random.Generator) -> list[str]:
    """n distinct hub-style names: base models and community fine-tunes of them."""
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < n:
        line = _LINES[rng.integers(len(_LINES))]
        size = _SIZES[rng.integers(len(_SIZES))]
        tune = _TUNES[rng.integers(len(_TUNES))]
        if rng.random() < 0.15:  # a base model under its maker's org
            name = f"{_ORGS[rng.integers(len(_ORGS))]}/{line}-{size}{tune}"
        else:  # a community fine-tune, merge or quantisation
            user = f"user{int(rng.integers(1, 900)):03d}"
            extra = "-".join(_ADAPTERS[i] for i in rng.choice(len(_ADAPTERS), 2, replace=False))
            name = f"{user}/{line}-{size}{tune}-{extra}-{int(rng.integers(1, 99))}"
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def synthetic_frame(rows: int, seed: int = 0) -> pl.DataFrame:
    """A tidy frame of about `rows` rows (model, benchmark, score, scale, release_date)."""
    rng = np.random.default_rng(seed)
    m = N_BENCHMARKS
    n = max(10, round(rows / (m * FILL)))
    models, benchmarks = model_names(n, rng), benchmark_ids()
    years = rng.uniform(0.0, 3.0, n)  # released over three years
    offsets = rng.normal(0.0, 0.8, m)
    u, v = rng.normal(0.0, 0.7, (n, RANK)), rng.normal(0.0, 0.7, (RANK, m))
    trend = rng.normal(0.3, 0.1, m)
    logits = offsets + u @ v + np.outer(years - 1.5, trend) + rng.normal(0.0, NOISE, (n, m))
    observed = np.zeros(n * m, dtype=bool)
    observed[rng.choice(n * m, size=min(rows, n * m), replace=False)] = True
    observed = observed.reshape(n, m)
    i, j = np.nonzero(observed)
    elo = benchmarks.index(_ELO)
    scores = np.where(
        j == elo, 1200.0 + 150.0 * logits[i, j], 100.0 / (1.0 + np.exp(-logits[i, j]))
    )
    start = date(2023, 1, 1)
    release = [
        (start + timedelta(days=int(y * 365.25))).isoformat() if rng.random() < DATED else None
        for y in years
    ]
    return pl.DataFrame(
        {
            "model": [models[k] for k in i],
            "benchmark": [benchmarks[k] for k in j],
            "score": np.round(scores, 2),
            "scale": ["unbounded" if k == elo else "percent" for k in j],
            "release_date": [release[k] for k in i],
        },
        schema_overrides={"release_date": pl.String},
    )


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def child(rows: int, seed: int) -> dict:
    from predictor.api import BenchPress

    frame = synthetic_frame(rows, seed)
    phases: dict[str, float] = {}
    last = [time.perf_counter()]

    def progress(phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        phases[phase] = phases.get(phase, 0.0) + now - last[0]
        last[0] = now
        print(f"  {phase} {done}/{total}", file=sys.stderr, flush=True)

    load_before = load_average()
    start = time.perf_counter()
    last[0] = start
    if "progress" in inspect.signature(BenchPress.fit).parameters:
        bp = BenchPress.fit(frame, progress=progress)
    else:  # a predictor from before progress reports: the total only
        bp = BenchPress.fit(frame)
    total = time.perf_counter() - start
    return {
        "rows": frame.height,
        "models": len(bp.fit_models_),
        "benchmarks": len(bp.fit_benchmarks_),
        "seconds": total,
        "phases": phases,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "load_before": load_before,
        "load_after": load_average(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default=DEFAULT_SIZES, help="rows of each frame, comma-separated"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic frames")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.seed)))
        return 0

    results = []
    for rows in (int(float(s)) for s in args.sizes.split(",")):
        proc = subprocess.run(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--child",
                str(rows),
                "--seed",
                str(args.seed),
            ],
            stdout=subprocess.PIPE,
            text=True,
            check=True,
        )
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(result)
        phases = ", ".join(f"{k} {v:.1f} s" for k, v in result["phases"].items())
        print(
            f"{result['rows']:>7} rows = {result['models']} models x {result['benchmarks']} "
            f"benchmarks: {result['seconds']:.1f} s"
            f"{f' ({phases})' if phases else ''}; peak {result['peak_rss_mb']:.0f} MB; "
            f"load {result['load_before']:.1f} -> {result['load_after']:.1f}",
            flush=True,
        )
    print(f"{os.cpu_count()} CPUs, Python {platform.python_version()}, NumPy {np.__version__}")
    if args.out:
        payload = {
            "results": results,
            "benchmarks": N_BENCHMARKS,
            "fill": FILL,
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "polars": pl.__version__,
        }
        Path(args.out).write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
