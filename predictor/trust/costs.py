"""Cost of running one benchmark, in "standard benchmark runs" (1.0 = a typical
multiple-choice or short-answer suite). Every function taking `costs` accepts a mapping
benchmark -> cost (or a sequence per column) that overrides everything below.

Where a leaderboard publishes what its runs cost (Aider, SWE-bench, ARC Prize; the snapshot's
benchmark table carries the median USD per full run as `run_cost_usd`), that fact decides:
cost = run_cost_usd / USD_PER_STANDARD_RUN, kept within [MIN_COST, MAX_COST]. Otherwise the
documented defaults apply (agentic and coding suites need tool use, sandboxes or many long
generations):

| kind (first that applies)                    | cost                               |
|----------------------------------------------|------------------------------------|
| source reports USD per run (>= 10 runs)      | run_cost_usd / 10, within 0.25-50  |
| explicit entries in `DEFAULT_COSTS`          | as listed                          |
| category `agentic` or an agentic-looking id  | 3.0                                |
| category `coding` or a coding-looking id     | 2.0                                |
| any other benchmark                          | 1.0                                |

USD_PER_STANDARD_RUN is our assumption, not a measurement: about what one pass over a
1,000-2,000 question multiple-choice suite costs on a frontier API in 2026.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

# Explicit costs for well-known expensive suites (agent loops in sandboxes, human-vote Elo).
DEFAULT_COSTS: dict[str, float] = {
    "swe_bench_verified": 4.0,
    "swe_bench_pro": 4.0,
    "terminal_bench": 4.0,
    "terminal_bench_2": 4.0,
    "osworld": 4.0,
    "codeforces_rating": 3.0,
    "chatbot_arena_elo": 5.0,  # needs a public arena deployment and votes
    "gdpval_aa_elo": 4.0,
    "vending_bench_2": 4.0,
    "swelancer_freelance_dollars": 4.0,
    "aider_polyglot": 2.0,
    "aider_polyglot_diff": 2.0,
}
CATEGORY_COSTS: dict[str, float] = {"agentic": 3.0, "coding": 2.0}
USD_PER_STANDARD_RUN = 10.0
MIN_COST, MAX_COST = 0.25, 50.0
MIN_COST_REPORTS = 10  # runs behind a source's median cost before it replaces the default
_AGENTIC_HINTS = ("swe_", "tau", "browsecomp", "osworld", "webarena", "gaia", "terminal", "mcp")
_CODING_HINTS = ("code", "coder", "humaneval", "mbpp", "aider", "livecodebench", "bigcodebench")


def default_cost(benchmark: str, category: str | None = None) -> float:
    """Documented default cost of one benchmark (see the module table)."""
    if benchmark in DEFAULT_COSTS:
        return DEFAULT_COSTS[benchmark]
    if category in CATEGORY_COSTS:
        return CATEGORY_COSTS[category]
    name = benchmark.lower()
    if any(h in name for h in _AGENTIC_HINTS):
        return CATEGORY_COSTS["agentic"]
    if any(h in name for h in _CODING_HINTS):
        return CATEGORY_COSTS["coding"]
    return 1.0


def cost_from_usd(run_cost_usd: float) -> float:
    """Standard runs for a benchmark whose source reports `run_cost_usd` per full run."""
    return float(np.clip(run_cost_usd / USD_PER_STANDARD_RUN, MIN_COST, MAX_COST))


def resolve_costs(
    benchmarks: Sequence[str],
    costs: Mapping[str, float] | Sequence[float] | None = None,
    categories: Mapping[str, str | None] | None = None,
    run_cost_usd: Mapping[str, float | None] | None = None,
) -> np.ndarray:
    """Cost per column: source facts (`run_cost_usd`), else defaults; `costs` overrides both
    (mapping by id or one per column)."""
    categories = categories or {}
    measured = {b: v for b, v in (run_cost_usd or {}).items() if v is not None and v > 0}
    out = np.array(
        [
            cost_from_usd(measured[b]) if b in measured else default_cost(b, categories.get(b))
            for b in benchmarks
        ],
        dtype=float,
    )
    if costs is None:
        return out
    if isinstance(costs, Mapping):
        for b, c in costs.items():
            if b in benchmarks:
                out[list(benchmarks).index(b)] = float(c)
    else:
        arr = np.asarray(costs, dtype=float)
        if arr.shape != (len(benchmarks),):
            raise ValueError(f"costs must have {len(benchmarks)} entries, got {arr.shape}")
        out = arr.copy()
    if not (np.isfinite(out).all() and (out > 0).all()):
        raise ValueError("costs must be finite and positive")
    return out
