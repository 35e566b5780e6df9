"""Default cost of running one benchmark, in "standard benchmark runs" (1.0 = a typical
multiple-choice or short-answer suite). Agentic and coding benchmarks that need tool use,
sandboxes or many long generations cost more. Every function taking `costs` accepts a
mapping benchmark -> cost (or a sequence per column) that overrides these defaults.

| kind                                         | default cost |
|----------------------------------------------|--------------|
| any benchmark                                | 1.0          |
| category `coding` or a coding-looking id     | 2.0          |
| category `agentic` or an agentic-looking id  | 3.0          |
| explicit entries in `DEFAULT_COSTS`          | as listed    |
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


def resolve_costs(
    benchmarks: Sequence[str],
    costs: Mapping[str, float] | Sequence[float] | None = None,
    categories: Mapping[str, str | None] | None = None,
) -> np.ndarray:
    """Cost per column: defaults, overridden by `costs` (mapping by id or one per column)."""
    categories = categories or {}
    out = np.array([default_cost(b, categories.get(b)) for b in benchmarks], dtype=float)
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
