"""Probe selection: which k benchmarks to run so the others are predicted best.

Greedy forward selection against one completer fitted on the whole matrix. A candidate probe
set P is scored by how well every model's observed target cells are predicted from its
observed cells in P: each model is folded in (per-draw Gaussian posterior,
`Completer.batch_fold_in`) from its P cells only, and the score is the median absolute
error, in original units, pooled over all (model, target) cells. A target that is itself
in P is predicted from P without it (leave-the-target-out), so picking a target as a probe
does not score it as exact.

Ties are broken by column order, the completer has a fixed seed: the result is deterministic.
Costs (see `predictor.trust.costs`) only matter with a `budget`: candidates that no longer fit
the remaining budget are skipped. The search stops before k when no remaining affordable
candidate lowers the expected error (another probe would only spend budget).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from predictor.fit.calibration import held_out_models
from predictor.fitted_matrix import FittedMatrix
from predictor.harnesses import get_harness, harnesses, task_columns
from predictor.methods.base import Completer
from predictor.methods.registry import default_completer
from predictor.trust.costs import NOT_RUNNABLE, BudgetError, resolve_costs, tool_runs
from predictor.trust.next_benchmark import benchmark_costs
from predictor.trust.profiles import resolve_targets
from predictor.trust.target_weights import source_row_weights

# Draws used for scoring candidate sets (of the completer's 40 kept draws): the ranking of
# candidates is stable with fewer, and the search is ~2x faster.
SELECTION_DRAWS = 20


# why a greedy search stopped before k (`ProbeSelection.stopped`)
BUDGET = "budget"  # no remaining candidate fits the budget left
NO_GAIN = "no_gain"  # affordable candidates remain, but none lowers the expected error
NO_CANDIDATE = "no_candidate"  # every allowed candidate is already chosen


@dataclass(frozen=True)
class ProbeSelection:
    """Greedy selection result: columns in the order picked and the score after each one."""

    columns: list[int]
    errors: list[float]  # expected MedAE (original units) after each addition
    costs: list[float]
    baseline_error: float  # with no probe at all (every model predicted from the prior)
    benchmarks: list[str] | None = None
    requested: int | None = None  # the k asked for
    budget: float | None = None
    # why the search stopped before `requested`: BUDGET, NO_GAIN or NO_CANDIDATE (None: not)
    stopped: str | None = None

    @property
    def total_cost(self) -> float:
        return float(sum(self.costs))

    def to_frame(self, chat: bool = False) -> pl.DataFrame:
        """One row per probe; a column per harness (`lm_eval_task`, `inspect_task`,
        `predictor.harnesses`) names the task that runs it (None when none is known),
        `chat`: the task a chat endpoint runs (the generative one, as `benchpress run`
        chooses)."""
        names = self.benchmarks or [str(c) for c in self.columns]
        return pl.DataFrame(
            {
                "step": list(range(1, len(self.columns) + 1)),
                "benchmark": names,
                "column": self.columns,
                "expected_medae": self.errors,
                "cost": self.costs,
                "cumulative_cost": list(np.cumsum(self.costs, dtype=float)) if self.costs else [],
                **task_columns(self.benchmarks or [None] * len(self.columns), chat),
            },
            schema={
                "step": pl.Int64,
                "benchmark": pl.String,
                "column": pl.Int64,
                "expected_medae": pl.Float64,
                "cost": pl.Float64,
                "cumulative_cost": pl.Float64,
                **dict.fromkeys((h.task_column for h in harnesses()), pl.String),
            },
        )

    def shortfall(self) -> str | None:
        """Why fewer probes than asked for, in one line; None when `requested` were found."""
        if self.stopped is None or self.requested is None:
            return None
        head = f"{len(self.columns)} of the {self.requested} probes asked for: "
        if self.stopped == BUDGET:
            left = (self.budget or 0.0) - self.total_cost
            return head + (
                f"the budget {self.budget:g} stopped the search ({self.total_cost:.2f} spent; "
                f"every other candidate costs more than the {max(left, 0.0):.2f} left); "
                "raise the budget for more"
            )
        if self.stopped == NO_GAIN:
            within = " within the budget" if self.budget is not None else ""
            return head + f"no other probe{within} lowers the expected error of the targets"
        return head + "no other candidate is allowed"

    def as_dict(self) -> dict[str, object]:
        return {
            "benchmarks": self.benchmarks,
            "columns": self.columns,
            "expected_medae": self.errors,
            "costs": self.costs,
            "total_cost": self.total_cost,
            "baseline_medae": self.baseline_error,
        }


def weighted_median(values: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The median of `values` with each counted `weights` times (None: once each): the
    smallest value with at least half the total weight at or below it."""
    if weights is None:
        return float(np.median(values))
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cumulative, 0.5 * cumulative[-1])])


class _Scorer:
    def __init__(self, engine: Any, targets: np.ndarray, row_weights: np.ndarray | None = None):
        self.engine = engine
        self.targets = targets
        obs = engine.observed[:, targets]
        self.rows = np.flatnonzero(obs.any(axis=1))
        self.actual = engine.values[np.ix_(self.rows, targets)]
        self.obs = obs[self.rows]
        # each cell counts its row's weight in the median (None: every cell once)
        self.cell_weight = (
            None
            if row_weights is None
            else np.broadcast_to(np.asarray(row_weights, float)[self.rows, None], self.obs.shape)
        )
        self._terms: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def terms(self, j: int):
        if j not in self._terms:
            self._terms[j] = self.engine.column_terms(j, self.rows)
        return self._terms[j]

    def errors(self, prec, shift, chosen: Sequence[int]) -> np.ndarray:
        """Abs errors of every observed (row, target) cell given the rows' `chosen` cells."""
        return self.weighted_errors(prec, shift, chosen)[0]

    def weighted_errors(
        self, prec, shift, chosen: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """`errors` and each cell's weight (None when every cell counts once)."""
        e = self.engine
        in_set = np.isin(self.targets, list(chosen))
        parts, weights = [], []
        hidden = np.flatnonzero(~in_set)
        if len(hidden):
            cols = self.targets[hidden]
            pred = e.to_units(e.predict_z(prec, shift, cols), cols)
            mask = self.obs[:, hidden]
            parts.append(np.abs(pred - self.actual[:, hidden])[mask])
            if self.cell_weight is not None:
                weights.append(self.cell_weight[:, hidden][mask])
        for t in np.flatnonzero(in_set):  # leave the target out of its own probe set
            col = self.targets[t]
            p, s = self.terms(int(col))
            pred = e.to_units(e.predict_z(prec - p, shift - s, [col]), [col])[:, 0]
            parts.append(np.abs(pred - self.actual[:, t])[self.obs[:, t]])
            if self.cell_weight is not None:
                weights.append(self.cell_weight[:, t][self.obs[:, t]])
        if not parts:
            return np.empty(0), None
        return np.concatenate(parts), np.concatenate(weights) if weights else None


class _Pooled:
    """Greedy state over one or more scorers; the score is the median over all their cells.

    One scorer: every model scored against the completer fitted on the whole matrix
    (in-sample). Several: models split into groups, each group's models scored against a
    completer fitted without them (cross-fitted, what a new model would see)."""

    def __init__(self, scorers: list[_Scorer]):
        self.scorers = scorers
        self.state = [sc.engine.system([], sc.rows) for sc in scorers]

    def score_with(self, chosen: Sequence[int], extra: int | None = None) -> float:
        columns = [*chosen] if extra is None else [*chosen, extra]
        parts, weights = [], []
        for sc, (prec, shift) in zip(self.scorers, self.state, strict=True):
            if extra is not None:
                p, s = sc.terms(extra)
                prec, shift = prec + p, shift + s
            err, weight = sc.weighted_errors(prec, shift, columns)
            parts.append(err)
            weights.append(weight)
        err = np.concatenate(parts) if parts else np.empty(0)
        if not len(err):
            return float("inf")
        weighted = any(w is not None for w in weights)
        return weighted_median(err, np.concatenate(weights) if weighted else None)

    def add(self, column: int) -> None:
        for g, sc in enumerate(self.scorers):
            p, s = sc.terms(column)
            prec, shift = self.state[g]
            self.state[g] = (prec + p, shift + s)


def _cross_fitted_scorers(
    values: np.ndarray,
    scales: Sequence[str],
    targets: np.ndarray,
    n_splits: int,
    random_state: int,
    n_draws: int | None,
    row_weights: np.ndarray | None = None,
) -> list[_Scorer]:
    """One scorer per group of models, against a completer fitted with the group hidden."""
    groups = held_out_models(
        values,
        scales,
        lambda: default_completer(random_state=random_state),
        n_splits,
        np.random.default_rng(random_state),
    )
    return [
        _Scorer(
            completer.batch_fold_in(np.where(inside[:, None], values, np.nan), n_draws),
            targets,
            row_weights,
        )
        for inside, completer in groups
    ]


def select_probes_detailed(
    values: np.ndarray,
    scales: Sequence[str],
    k: int = 5,
    costs: Mapping[str, float] | Sequence[float] | None = None,
    targets: Sequence[int] | None = None,
    budget: float | None = None,
    candidates: Sequence[int] | None = None,
    benchmarks: Sequence[str] | None = None,
    completer: Completer | None = None,
    n_draws: int | None = SELECTION_DRAWS,
    random_state: int = 0,
    min_coverage: float = 0.0,
    progress: Callable[[int, int], None] | None = None,
    n_splits: int = 1,
    row_weights: Sequence[float] | None = None,
    pools: Mapping[int, str] | None = None,
) -> ProbeSelection:
    """Greedy forward selection of up to `k` probe columns (see the module doc).

    `targets`/`candidates` are column indices (default: every column). `costs` is one cost per
    column or a mapping by benchmark id (needs `benchmarks`); default costs come from
    `predictor.trust.costs` when `benchmarks` is given, else 1.0 each. `completer` may be a
    completer (`Completer`) already fitted on `values` (else one is fitted here).
    `min_coverage`: only columns observed for at least this share of the models are
    candidates (a probe few models ran helps few models; a new model is unlikely to have it).
    `progress(done, total)` is called after each candidate of each greedy step is looked at;
    `total` counts every step's candidates (fewer are looked at when the pool or budget runs
    out first). `n_splits` > 1 scores cross-fitted: models in `n_splits` seeded groups, each
    predicted by a completer fitted without its group (`completer` is then not used).
    `row_weights`: what each model's cells count in the median (default: 1 each;
    `predictor.trust.target_weights`). `pools`: column -> the item pool its task draws from
    (`predictor.trust.near_duplicates`); a candidate whose pool a chosen probe already has is
    a near-duplicate and is skipped.
    """
    values = np.asarray(values, dtype=float)
    n, m = values.shape
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    names = list(benchmarks) if benchmarks is not None else None
    if names is not None and len(names) != m:
        raise ValueError(f"benchmarks has {len(names)} entries, values has {m} columns")
    if isinstance(costs, Mapping) and names is None:
        raise ValueError("costs given by benchmark id need `benchmarks`")
    cost = (
        resolve_costs(names, costs)
        if names is not None
        else (np.ones(m) if costs is None else resolve_costs([str(j) for j in range(m)], costs))
    )
    target_cols = np.arange(m) if targets is None else np.unique(np.asarray(targets, dtype=int))
    if len(target_cols) == 0:
        raise ValueError("targets is empty")
    pool = list(range(m)) if candidates is None else sorted({int(c) for c in candidates})
    observed = np.isfinite(values)
    pool = [c for c in pool if observed[:, c].sum() >= max(2, min_coverage * n - 1e-9)]
    if budget is not None:
        if not budget > 0:
            raise BudgetError(f"budget must be > 0, got {budget}")
        if pool and min(cost[c] for c in pool) > budget + 1e-12:
            cheapest = min(pool, key=lambda c: cost[c])
            label = names[cheapest] if names is not None else f"column {cheapest}"
            raise BudgetError(
                f"budget {budget:g} is below the cheapest allowed probe ({label}, cost "
                f"{cost[cheapest]:g}); raise the budget or allow cheaper benchmarks"
            )
    if n_splits < 1:
        raise ValueError(f"n_splits must be >= 1, got {n_splits}")
    weights = None if row_weights is None else np.asarray(row_weights, dtype=float)
    if weights is not None and weights.shape != (n,):
        raise ValueError(f"row_weights has {weights.shape} entries, values has {n} rows")
    pool_of = dict(pools or {})
    if n_splits > 1:
        scorers = _cross_fitted_scorers(
            values, scales, target_cols, n_splits, random_state, n_draws, weights
        )
    else:
        if completer is None:
            completer = default_completer(random_state=random_state).fit(values, scales)
        engine = completer.batch_fold_in(values, n_draws=n_draws)
        scorers = [_Scorer(engine, target_cols, weights)]
    pooled = _Pooled(scorers)
    baseline = pooled.score_with([])
    chosen: list[int] = []
    errors: list[float] = []
    spent = 0.0
    total, looked_at = sum(len(pool) - step for step in range(min(k, len(pool)))), 0
    stopped = None
    while len(chosen) < k:
        best, best_score, left = None, np.inf, 0
        taken = {pool_of[c] for c in chosen if c in pool_of}
        for c in pool:
            if c in chosen or pool_of.get(c) in taken:
                continue
            left += 1
            if budget is None or spent + cost[c] <= budget + 1e-12:
                score = pooled.score_with(chosen, c)
                if score < best_score - 1e-12:
                    best, best_score = c, score
            looked_at += 1
            if progress is not None:
                progress(looked_at, total)
        if best is None or best_score >= (errors[-1] if errors else baseline) - 1e-12:
            # nothing affordable lowers the expected error: more probes only cost
            stopped = NO_CANDIDATE if not left else BUDGET if best is None else NO_GAIN
            break
        pooled.add(best)
        chosen.append(best)
        errors.append(best_score)
        spent += float(cost[best])
    return ProbeSelection(
        columns=chosen,
        errors=errors,
        costs=[float(cost[c]) for c in chosen],
        baseline_error=baseline,
        benchmarks=[names[c] for c in chosen] if names is not None else None,
        requested=k,
        budget=budget,
        stopped=stopped,
    )


def select_probes(
    values: np.ndarray,
    scales: Sequence[str],
    k: int = 5,
    costs: Mapping[str, float] | Sequence[float] | None = None,
    targets: Sequence[int] | None = None,
    budget: float | None = None,
    **kwargs,
) -> list[int]:
    """Column indices of the greedy probe set (see `select_probes_detailed`)."""
    return select_probes_detailed(
        values, scales, k=k, costs=costs, targets=targets, budget=budget, **kwargs
    ).columns


def probe_set_error(
    values: np.ndarray,
    scales: Sequence[str],
    probes: Sequence[int],
    targets: Sequence[int] | None = None,
    completer: Completer | None = None,
    n_draws: int | None = SELECTION_DRAWS,
) -> float:
    """The selection score of a given probe set (in-sample MedAE of the targets)."""
    values = np.asarray(values, dtype=float)
    if completer is None:
        completer = default_completer().fit(values, scales)
    target_cols = np.arange(values.shape[1]) if targets is None else np.asarray(targets, int)
    pooled = _Pooled([_Scorer(completer.batch_fold_in(values, n_draws), np.unique(target_cols))])
    for column in probes:
        pooled.add(int(column))
    return pooled.score_with(list(probes))


def runnable_tool(runnable: str | None) -> str | None:
    """The id of the harness `runnable` names (`lm_eval`, also spelled as its command
    `lm-eval`; `inspect`; `predictor.harnesses`), or None."""
    if runnable is None:
        return None
    return get_harness(runnable, "runnable").id


def runnable_benchmarks(bp: FittedMatrix, runnable: str, chat: bool = False) -> list[str]:
    """Fitted benchmarks with a mapped task of tool `runnable` (`chat`: a task that only
    generates, the kind a chat endpoint runs), in the snapshot's column order; not those
    whose task executes the model's code (`task_facts.RUNS_MODEL_CODE`)."""
    runs = tool_runs(runnable, chat)
    return [b for b in bp.fit_benchmarks_ if b in runs and b not in NOT_RUNNABLE]


def runnable_pools(bp: FittedMatrix, runnable: str, chat: bool = False) -> dict[int, str]:
    """column -> the item pool (task facts' `item_pool`) of the task `runnable` runs it
    with: benchmarks of one pool are near-duplicates (GPQA Diamond, GPQA Main and the Open
    LLM Leaderboard's GPQA share questions)."""
    harness = get_harness(runnable, "runnable")
    tasks = harness.runnable_tasks(chat)
    out = {}
    for benchmark in runnable_benchmarks(bp, harness.id, chat):
        facts = harness.facts(tasks[benchmark])
        if facts is not None and facts.item_pool:
            out[bp.fit_columns[benchmark]] = facts.item_pool
    return out


def _allowed_columns(
    bp: FittedMatrix,
    allowlist: Sequence[str] | str | None,
    runnable: str | None = None,
    chat: bool = False,
) -> list[int] | None:
    """Columns the allowlist lets be probes (None: every fitted one a team can run itself,
    i.e. not in `costs.NOT_RUNNABLE`). A str is one name, not its letters; an empty allowlist
    would allow nothing, so it is an error, not a default. `runnable` (a tool) keeps only the
    benchmarks that tool has a task for."""
    if runnable is not None:
        tool_columns = [bp.fit_columns[b] for b in runnable_benchmarks(bp, runnable, chat)]
        if not tool_columns:
            raise ValueError(f"snapshot {bp.version} has no benchmark {runnable} can run")
        if allowlist is None:
            return tool_columns
        allowed = _allowed_columns(bp, allowlist)
        kept = [c for c in allowed if c in tool_columns]
        if not kept:
            raise ValueError(f"no benchmark of the allowlist has a task {runnable} can run")
        return kept
    if allowlist is None:
        return [c for c, name in enumerate(bp.fit_benchmarks_) if name not in NOT_RUNNABLE]
    names = [allowlist] if isinstance(allowlist, str) else list(allowlist)
    if not names:
        raise ValueError(
            "allowlist is empty: give the benchmarks that may be probes, or None for all"
        )
    columns: list[int] = []
    for name in names:
        benchmark = bp.resolve_benchmark(name)
        if benchmark not in bp.fit_columns:
            raise ValueError(
                f"allowlist: benchmark {benchmark!r} has too few observations in snapshot "
                f"{bp.version} to be used as a probe"
            )
        if bp.fit_columns[benchmark] not in columns:
            columns.append(bp.fit_columns[benchmark])
    return columns


def select_probes_for(
    bp: FittedMatrix,
    k: int = 5,
    budget: float | None = None,
    targets=None,
    allowlist: Sequence[str] | str | None = None,
    costs: Mapping[str, float] | None = None,
    progress: Callable[[int, int], None] | None = None,
    runnable: str | None = None,
    chat: bool = False,
) -> ProbeSelection:
    """`BenchPress.select_probes`: greedy probes on the snapshot's fitted matrix, scored with
    the snapshot's own completer (no refit). `targets`: profile name, list or None (all);
    `allowlist`: benchmarks allowed as probes (names, or one name; default: every fitted
    benchmark); `costs`: benchmark name -> cost overrides (`predictor.trust.costs`);
    `progress`: see `select_probes_detailed`; `runnable` (`"lm_eval"`, `"inspect"`): only
    benchmarks that tool has a mapped task for, `chat` only tasks a chat endpoint can run;
    a runnable set takes at most one benchmark of an item pool (`runnable_pools`: no GPQA
    Main beside GPQA Diamond) and weighs rows by `target_weights.source_row_weights`."""
    names = bp.fit_benchmarks_
    chosen = resolve_targets(targets, names, bp.resolve_benchmark)
    target_cols = None if chosen is None else [bp.fit_columns[t] for t in chosen]
    candidates = _allowed_columns(bp, allowlist, runnable, chat)
    values = bp.observed_values(bp.fit_models_, names)
    return select_probes_detailed(
        values,
        [],
        k=k,
        costs=benchmark_costs(bp, costs),
        targets=target_cols,
        budget=budget,
        candidates=candidates,
        benchmarks=names,
        completer=bp.completer_,
        progress=progress,
        row_weights=None if runnable is None else source_row_weights(bp),
        pools=None if runnable is None else runnable_pools(bp, runnable, chat),
    )
