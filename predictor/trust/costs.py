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

import difflib
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from predictor.harnesses import get_harness
from predictor.names.resolve import UnknownNameError

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
# Benchmarks a team cannot run on its own model: indices a third party computes from other
# benchmarks, and public human-vote arenas (a model gets a score only once deployed and voted
# on there). Probe selection and what-to-run-next leave them out unless an allowlist names them.
NOT_RUNNABLE = frozenset(
    {
        "epoch_eci",  # Epoch Capabilities Index, re-fitted by Epoch on every export
        "aa_intelligence_index",  # Artificial Analysis's own blend of their evaluations
        "gdpval_aa_elo",  # Artificial Analysis's grader pool
        "chatbot_arena_elo",
        "lmarena_text",
        "lmarena_vision",
        "lmarena_image",
        "webdev_arena",
    }
)


def tool_runs(runnable: str, chat: bool = False) -> frozenset[str]:
    """Benchmarks tool `runnable` has a task for (`chat`: one that only generates, what a chat
    endpoint runs) that does not execute the model's code (`task_facts.RUNS_MODEL_CODE`):
    what `probes --runnable` and `next --runnable` choose among."""
    harness = get_harness(runnable, "runnable")
    tasks = harness.runnable_tasks(chat)
    return frozenset(b for b, task in tasks.items() if not harness.runs_model_code(task))


USD_PER_STANDARD_RUN = 10.0
MIN_COST, MAX_COST = 0.25, 50.0
MIN_COST_REPORTS = 10  # runs behind a source's median cost before it replaces the default
_AGENTIC_HINTS = ("swe_", "tau", "browsecomp", "osworld", "webarena", "gaia", "terminal", "mcp")
_CODING_HINTS = ("code", "coder", "humaneval", "mbpp", "aider", "livecodebench", "bigcodebench")


class BudgetError(ValueError):
    """A cost budget that cannot be met (below the cheapest candidate, not positive): the
    caller's input, so the CLI exits 2 as for any usage error."""


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


def _checked_cost(benchmark: str, value: object) -> float:
    """A user's cost as a float: a number, finite and > 0 (a free or negative run would make
    the budget meaningless)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise TypeError(f"cost of {benchmark!r} must be a number, got {value!r}")
    cost = float(value)
    if not (math.isfinite(cost) and cost > 0):
        raise ValueError(f"cost of {benchmark!r} must be finite and > 0, got {value!r}")
    return cost


def _exact(benchmarks: Sequence[str]) -> Callable[[str], str]:
    """Without a resolver, a cost key must be one of `benchmarks` as written."""
    known = set(benchmarks)

    def resolve(name: str) -> str:
        if name not in known:
            close = difflib.get_close_matches(str(name), sorted(known), n=5, cutoff=0.5)
            raise UnknownNameError("benchmark", name, close)
        return name

    return resolve


def _overrides(
    benchmarks: Sequence[str],
    costs: Mapping[str, float],
    resolve: Callable[[str], str] | None,
) -> dict[int, float]:
    """Column -> user's cost. Keys go through `resolve` like targets do; a known benchmark
    outside `benchmarks` (not fitted, never a probe) is checked and then has no effect."""
    column = {b: j for j, b in enumerate(benchmarks)}
    resolve = resolve or _exact(benchmarks)
    out: dict[int, float] = {}
    for name, value in costs.items():
        benchmark = resolve(name)
        cost = _checked_cost(benchmark, value)
        if benchmark not in column:
            continue
        if column[benchmark] in out:
            raise ValueError(f"cost of {benchmark!r} is given twice (as {name!r})")
        out[column[benchmark]] = cost
    return out


def resolve_costs(
    benchmarks: Sequence[str],
    costs: Mapping[str, float] | Sequence[float] | None = None,
    categories: Mapping[str, str | None] | None = None,
    run_cost_usd: Mapping[str, float | None] | None = None,
    resolve: Callable[[str], str] | None = None,
) -> np.ndarray:
    """Cost per column: source facts (`run_cost_usd`), else defaults; `costs` overrides both
    (a mapping by name, or one per column). Every given cost must be finite and > 0.

    Mapping keys are resolved with `resolve` (e.g. `BenchPress.resolve_benchmark`, so
    "MMLU Pro" sets `mmlu_pro`); without it a key must be one of `benchmarks`. An unknown
    name raises `UnknownNameError` rather than being ignored."""
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
        for j, cost in _overrides(benchmarks, costs, resolve).items():
            out[j] = cost
        return out
    given = list(costs)
    if len(given) != len(benchmarks):
        raise ValueError(f"costs must have {len(benchmarks)} entries, got {len(given)}")
    return np.array([_checked_cost(b, c) for b, c in zip(benchmarks, given, strict=True)])
