"""Probe plans by cost: which benchmarks a harness runs, on how many items each, for a budget
of tokens.

A plan is a list of (benchmark, items) pairs: a benchmark's task run in full, or on a seeded
random subset of its items (`benchpress run --items`), whose score then carries the
sampling noise of the items left out. Its cost is items x tokens per item (the task facts,
`predictor/results/facts/tasks.csv`). Many benchmarks on a few hundred items each can predict
the others better than a few full ones at the same cost: 400 of MMLU's 14,042 items cost 3%
of the full run and measure its score to about 2 points.

The expected error of a plan is scored as `predictor.trust.probes` scores a probe set (every
fitted model folded in from its own cells of the plan's benchmarks, in-sample; the weighted
median absolute error over the targets' observed cells, leave-the-target-out), with the noise
a subset adds:

- a subset of n of a task's N items measures the full score p with variance
  p (1 - p) (1/n - 1/N) (the binomial rule of `predictor.results.noise` at n, less the one
  at N: no extra noise for a full run);
- the fold-in counts that variance in the cell's noise (as `BenchPress.predict` does with a
  probe's standard error), and the revealed score is drawn with it: fixed standard normal
  draws per (model, benchmark), over `NOISE_REPLICATES` copies of every model, so every
  candidate is judged on the same draws and the search is deterministic.

Rows weigh as `predictor.trust.target_weights` says (a source's single-source rows count as
one model together), so one leaderboard's own settings do not steer the choice.

The search is greedy by error per token: each step takes the move (a new benchmark on some
item count of `ITEM_STEPS` or in full, or more items for a benchmark already in the plan)
that lowers the expected error most per token it adds, among those within the budget; it
stops when no affordable move lowers it by `MIN_GAIN`. Near-duplicates are never both taken:
benchmarks whose tasks draw from one item pool (the task facts' `item_pool`: GPQA Diamond,
GPQA Main and the Open LLM Leaderboard's GPQA share questions) count as one, and a plan holds
at most one.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from predictor.fitted_matrix import FittedMatrix
from predictor.harnesses import get_harness
from predictor.methods.base import Completer
from predictor.methods.registry import default_completer
from predictor.results.noise import binomial_stderr
from predictor.trust.probes import (
    BUDGET,
    NO_GAIN,
    SELECTION_DRAWS,
    _allowed_columns,
    runnable_benchmarks,
    weighted_median,
)
from predictor.trust.profiles import resolve_targets
from predictor.trust.target_weights import source_row_weights

# Item counts a subset may take (below the task's own count; the full task is always a choice)
ITEM_STEPS = (100, 200, 400, 800, 1600, 3200, 6400)
# Tokens a plan may spend when none is given: what the default lm-eval probe set of the
# bundled snapshot (2026.12.07.3) cost before plans had budgets, five tasks run in full
# (GPQA Diamond, MMLU, AIME 2025, GPQA Main, AIME 2024: ~8.61M tokens)
DEFAULT_BUDGET_TOKENS = 8_600_000
NOISE_REPLICATES = 4  # copies of every model, each with its own noise draws
NOISE_SEED = 0
# A move must lower the expected MedAE by this much (points): below it the gain is within
# the noise draws' own spread, and the plan would grow a tail of tasks that buy nothing
MIN_GAIN = 0.05


@dataclass(frozen=True)
class Candidate:
    """A benchmark a plan may run: its column, the task that runs it, the task's item count,
    tokens per item and item pool."""

    benchmark: str
    column: int
    task: str
    total: int
    tokens_per_item: int
    pool: str = ""

    def options(self) -> list[int]:
        """Item counts this benchmark may run on: `ITEM_STEPS` below its own count, and all."""
        return [n for n in ITEM_STEPS if n < self.total] + [self.total]

    def tokens(self, items: int) -> int:
        return int(items) * self.tokens_per_item


@dataclass(frozen=True)
class PlannedProbe:
    """One row of a plan: a benchmark's task on `items` of its `total` items."""

    benchmark: str
    task: str
    items: int
    total: int
    tokens: int
    expected_medae: float  # of the plan's rows down to this one

    @property
    def subset(self) -> bool:
        return self.items < self.total


@dataclass(frozen=True)
class ProbePlan:
    """A probe plan (module docstring): its rows in the order the search took them, the
    expected MedAE with no probe and with the whole plan, the budget and why the search
    stopped (`BUDGET`: nothing else fits, `NO_GAIN`: nothing affordable lowers the error)."""

    probes: list[PlannedProbe]
    budget_tokens: float
    baseline_error: float
    expected_error: float
    harness: str | None = None
    stopped: str | None = None

    @property
    def benchmarks(self) -> list[str]:
        return [p.benchmark for p in self.probes]

    @property
    def items(self) -> dict[str, int]:
        """benchmark -> items to run (the task's own count when run in full)."""
        return {p.benchmark: p.items for p in self.probes}

    @property
    def tasks(self) -> dict[str, str]:
        return {p.benchmark: p.task for p in self.probes}

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.probes)

    def to_frame(self) -> pl.DataFrame:
        return pl.DataFrame(
            {
                "step": list(range(1, len(self.probes) + 1)),
                "benchmark": [p.benchmark for p in self.probes],
                "task": [p.task for p in self.probes],
                "items": [p.items for p in self.probes],
                "total_items": [p.total for p in self.probes],
                "tokens": [p.tokens for p in self.probes],
                "cumulative_tokens": list(np.cumsum([p.tokens for p in self.probes], dtype=int)),
                "expected_medae": [p.expected_medae for p in self.probes],
            },
            schema={
                "step": pl.Int64,
                "benchmark": pl.String,
                "task": pl.String,
                "items": pl.Int64,
                "total_items": pl.Int64,
                "tokens": pl.Int64,
                "cumulative_tokens": pl.Int64,
                "expected_medae": pl.Float64,
            },
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "harness": self.harness,
            "budget_tokens": self.budget_tokens,
            "tokens": self.tokens,
            "baseline_medae": self.baseline_error,
            "expected_medae": self.expected_error,
            "stopped": self.stopped,
            "probes": [
                {
                    "benchmark": p.benchmark,
                    "task": p.task,
                    "items": p.items,
                    "total_items": p.total,
                    "tokens": p.tokens,
                    "expected_medae": p.expected_medae,
                }
                for p in self.probes
            ],
        }


def subset_variance(score: np.ndarray, items: int, total: int) -> np.ndarray:
    """Variance (points^2) a subset of `items` of `total` adds to a percent `score`: the
    binomial rule at `items` less the one at `total` (0 for the full task)."""
    if items >= total:
        return np.zeros_like(np.asarray(score, dtype=float))
    flat = np.nan_to_num(np.asarray(score, dtype=float), nan=50.0)
    at = np.vectorize(binomial_stderr, otypes=[float])
    return np.maximum(at(flat, items) ** 2 - at(flat, total) ** 2, 0.0)


class _PlanScorer:
    """The expected error of plans (column -> items) over replicated, noisy rows.

    A row's system is the prior plus one rank-1 term per plan cell: weight w and residual r
    (z-space, per draw) with the design x of its column, w x x^T and w r x; a target in the
    plan is predicted with its own term taken out by the Sherman-Morrison identity."""

    def __init__(
        self,
        engine,
        targets: np.ndarray,
        candidates: Sequence[Candidate],
        row_weights: np.ndarray | None,
        replicates: int,
        seed: int,
    ):
        self.engine = engine
        self.targets = targets
        self.candidates = {c.column: c for c in candidates}
        obs = engine.observed[:, targets]
        base = np.flatnonzero(obs.any(axis=1))
        self.rows = np.tile(base, replicates)
        self.obs = obs[self.rows]
        self.actual = np.where(self.obs, engine.values[np.ix_(self.rows, targets)], np.nan)
        weights = np.ones(engine.values.shape[0]) if row_weights is None else row_weights
        self.cell_weight = (weights[self.rows, None] * self.obs)[self.obs]
        m = engine.values.shape[1]
        self.eps = np.random.default_rng(seed).standard_normal((len(self.rows), m))
        self._terms: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self.target_index = {int(c): t for t, c in enumerate(targets)}
        design = engine.design  # (S, m, d)
        self.n_draws, _, self.d = design.shape
        # targets' designs as one (S * d, T) matrix and their mean offsets: every target's
        # draw-averaged mean from the rows' parameters in one product
        self.target_design = design[:, targets].transpose(0, 2, 1).reshape(-1, len(targets))
        self.target_offset = engine.offset[:, targets].mean(axis=0)

    def terms(self, column: int, items: int) -> tuple[np.ndarray, np.ndarray]:
        """(weight, residual) (S, rows) of `column` on `items` items: the subset's noise in
        the weight and in the revealed score; weight 0 where the row lacks the column."""
        key = (column, items)
        if key not in self._terms:
            self._terms[key] = self._column_terms(column, items)
        return self._terms[key]

    def _column_terms(self, column: int, items: int) -> tuple[np.ndarray, np.ndarray]:
        e = self.engine
        known = e.observed[self.rows, column]
        values = e.values[self.rows, column]
        total = self.candidates[column].total
        se_z = np.zeros(len(self.rows))
        if items < total:
            se = np.sqrt(subset_variance(values, items, total))
            wide = np.full((len(self.rows), e.values.shape[1]), 50.0)
            wide_se = np.zeros_like(wide)
            wide[:, column] = np.where(known, values, 50.0)
            wide_se[:, column] = se
            se_z = e.completer.transform_.stderr_z(wide, wide_se)[:, column]
        w = e.weight[:, column][:, None]  # (S, 1): the cell's precision in z-space
        weight = known[None, :] / (1.0 / w + se_z[None, :] ** 2)  # (S, R)
        z = e.z[self.rows, column] + se_z * self.eps[:, column]
        resid = z[None, :] - e.offset[:, column][:, None]
        return weight, resid

    def added(self, prec, shift, rows, column: int, items: int, sign: float = 1.0):
        """`prec`, `shift` of `rows` with the column's term added (`sign` -1: taken out)."""
        w, r = self.terms(column, items)
        w, r = sign * w[:, rows], r[:, rows]
        x = self.engine.design[:, column]  # (S, d)
        outer = x[:, :, None] * x[:, None, :]
        return (
            prec + w[..., None, None] * outer[:, None],
            shift + (w * r)[..., None] * x[:, None, :],
        )

    def system(self, plan: Mapping[int, int]) -> tuple[np.ndarray, np.ndarray]:
        every = np.arange(len(self.rows))
        prec, shift = self.engine.system([], self.rows)
        for column, items in plan.items():
            prec, shift = self.added(prec, shift, every, column, items)
        return prec, shift

    def row_errors(self, prec, shift, rows: np.ndarray, plan: Mapping[int, int]) -> np.ndarray:
        """|error| of `rows`' target cells (NaN where unobserved) given their systems (`prec`,
        `shift`: those rows' only) with their `plan` cells in: a target in the plan is
        predicted without itself."""
        e = self.engine
        inverse = np.linalg.inv(prec)  # (S, n, d, d)
        theta = np.einsum("snde,sne->snd", inverse, shift)
        flat = theta.transpose(1, 0, 2).reshape(len(rows), -1)  # (n, S * d)
        z = flat @ self.target_design / self.n_draws + self.target_offset
        for column, items in plan.items():
            t = self.target_index.get(column)
            if t is None:
                continue
            w, r = self.terms(column, items)
            w, r = w[:, rows], r[:, rows]
            x = e.design[:, column]  # (S, d)
            u = np.einsum("snde,se->snd", inverse, x)
            q = np.einsum("snd,sd->sn", u, x)
            us = np.einsum("snd,snd->sn", u, shift)
            left_out = (us - w * r * q) / (1.0 - w * q)  # x . theta without this cell
            z[:, t] = (e.offset[:, column][:, None] + left_out).mean(axis=0)
        pred = e.to_units(z, self.targets)
        return np.abs(pred - self.actual[rows])

    def score(self, errors: np.ndarray) -> float:
        return weighted_median(errors[self.obs], self.cell_weight)


class _Search:
    """The greedy search by error per token, lazily: a move's last ratio bounds what it
    can offer later (adding probes seldom makes another one more useful), so only the move
    on top of the queue is scored again, until one stays on top after being scored at the
    current plan. Ties go to the earlier candidate and the smaller item count."""

    def __init__(self, scorer: _PlanScorer, candidates: Sequence[Candidate]):
        self.scorer = scorer
        self.candidates = list(candidates)
        self.order = {c.column: k for k, c in enumerate(self.candidates)}
        self.prec, self.shift = scorer.system({})
        self.every = np.arange(len(scorer.rows))
        self.errors = scorer.row_errors(self.prec, self.shift, self.every, {})
        self.current = scorer.score(self.errors)
        self.plan: dict[int, int] = {}
        self.spent = 0
        self.affected = {
            c.column: np.flatnonzero(scorer.engine.observed[scorer.rows, c.column])
            for c in self.candidates
        }
        self.looked_at = 0

    def extra(self, column: int, items: int) -> int:
        cand = self.scorer.candidates[column]
        return cand.tokens(items) - cand.tokens(self.plan.get(column, 0))

    def evaluate(self, column: int, items: int) -> tuple[float, np.ndarray]:
        """(gain in expected error, the cells' errors) of running `column` on `items`."""
        self.looked_at += 1
        rows, old = self.affected[column], self.plan.get(column, 0)
        if not len(rows):
            return 0.0, self.errors
        sc = self.scorer
        prec, shift = sc.added(self.prec[:, rows], self.shift[:, rows], rows, column, items)
        if old:
            prec, shift = sc.added(prec, shift, rows, column, old, -1.0)
        errors = self.errors.copy()
        errors[rows] = sc.row_errors(prec, shift, rows, {**self.plan, column: items})
        return self.current - sc.score(errors), errors

    def accept(self, column: int, items: int, errors: np.ndarray) -> None:
        old = self.plan.get(column, 0)
        self.prec, self.shift = self.scorer.added(self.prec, self.shift, self.every, column, items)
        if old:
            self.prec, self.shift = self.scorer.added(
                self.prec, self.shift, self.every, column, old, -1.0
            )
        self.spent += self.extra(column, items)
        self.plan[column] = items
        self.errors = errors
        self.current = self.scorer.score(errors)

    def allowed(self, column: int, items: int, budget: float) -> bool:
        """Still a move: more items than planned, a pool not taken by another benchmark,
        within the budget left."""
        if items <= self.plan.get(column, 0):
            return False
        pool = self.scorer.candidates[column].pool
        if column not in self.plan and pool:
            taken = {self.scorer.candidates[c].pool for c in self.plan}
            if pool in taken:
                return False
        return self.spent + self.extra(column, items) <= budget

    def run(
        self, budget: float, progress: Callable[[int, int], None] | None
    ) -> tuple[dict[int, int], str]:
        """The plan (column -> items, in the order taken) and why the search stopped."""
        moves = [(c.column, n) for c in self.candidates for n in c.options()]
        heap: list[tuple[float, int, int, int, int]] = []  # (-ratio, order, items, col, step)
        scored: dict[tuple[int, int], np.ndarray] = {}  # errors of moves scored at this step
        step = 0

        def push(column: int, items: int) -> None:
            gain, errors = self.evaluate(column, items)
            if progress is not None:
                progress(self.looked_at, max(len(moves), self.looked_at))
            if gain >= MIN_GAIN:
                ratio = gain / self.extra(column, items)
                heapq.heappush(heap, (-ratio, self.order[column], items, column, step))
                scored[column, items] = errors

        for column, items in moves:
            if self.allowed(column, items, budget):
                push(column, items)
        while heap:
            _, _, items, column, scored_at = heapq.heappop(heap)
            if not self.allowed(column, items, budget):
                continue
            if scored_at != step:  # scored at an earlier plan: score it again
                push(column, items)
                continue
            self.accept(column, items, scored[column, items])
            step += 1
            scored.clear()
            # more items for the benchmark just taken: scored afresh from its new count
            heap = [entry for entry in heap if entry[3] != column]
            heapq.heapify(heap)
            for more in self.scorer.candidates[column].options():
                if self.allowed(column, more, budget):
                    push(column, more)
        fits = any(self.allowed(c, n, budget) for c, n in moves)
        return self.plan, NO_GAIN if fits else BUDGET


def plan_probes_detailed(
    values: np.ndarray,
    scales: Sequence[str],
    candidates: Sequence[Candidate],
    budget_tokens: float,
    targets: Sequence[int] | None = None,
    completer: Completer | None = None,
    row_weights: Sequence[float] | None = None,
    n_draws: int | None = SELECTION_DRAWS,
    replicates: int = NOISE_REPLICATES,
    seed: int = NOISE_SEED,
    progress: Callable[[int, int], None] | None = None,
    harness: str | None = None,
) -> ProbePlan:
    """The greedy plan (module docstring) among `candidates` within `budget_tokens`.

    `values`: the fitted matrix (models x benchmarks, NaN where unobserved); `targets`:
    columns whose error counts (default: all); `completer`: one fitted on `values` (else one is
    fitted here); `row_weights`: each model's weight (default 1). `progress(done, total)`
    after each move looked at (`total`: an estimate)."""
    values = np.asarray(values, dtype=float)
    if not budget_tokens > 0:
        raise ValueError(f"the token budget must be > 0, got {budget_tokens}")
    cands = [c for c in candidates if c.total >= 1 and c.tokens_per_item >= 1]
    if not cands:
        raise ValueError("no candidate benchmark with known items and tokens per item")
    cheapest = min(cands, key=lambda c: c.tokens(c.options()[0]))
    if cheapest.tokens(cheapest.options()[0]) > budget_tokens:
        raise ValueError(
            f"a budget of {budget_tokens:,.0f} tokens is below the cheapest probe "
            f"({cheapest.benchmark} on {cheapest.options()[0]} items: "
            f"{cheapest.tokens(cheapest.options()[0]):,} tokens); raise the budget"
        )
    scorer = _scorer(
        values, scales, cands, targets, completer, row_weights, n_draws, replicates, seed
    )
    search = _Search(scorer, cands)
    baseline = search.current
    plan, stopped = search.run(budget_tokens, progress)
    return _plan(scorer, plan, baseline, budget_tokens, harness, stopped)


def score_plan(
    values: np.ndarray,
    scales: Sequence[str],
    candidates: Sequence[Candidate],
    items: Mapping[int, int],
    targets: Sequence[int] | None = None,
    completer: Completer | None = None,
    row_weights: Sequence[float] | None = None,
    n_draws: int | None = SELECTION_DRAWS,
    replicates: int = NOISE_REPLICATES,
    seed: int = NOISE_SEED,
    harness: str | None = None,
) -> ProbePlan:
    """A given plan (column -> items, in its order; every column one of `candidates`) scored
    as `plan_probes_detailed` scores its own: the same figures, no search."""
    values = np.asarray(values, dtype=float)
    by_column = {c.column: c for c in candidates}
    unknown = [c for c in items if c not in by_column]
    if unknown:
        raise ValueError(f"column {unknown[0]} is not a candidate")
    cands = [by_column[c] for c in items]
    scorer = _scorer(
        values, scales, cands, targets, completer, row_weights, n_draws, replicates, seed
    )
    baseline = scorer.score(scorer.row_errors(*scorer.system({}), np.arange(len(scorer.rows)), {}))
    plan = {c: min(int(n), by_column[c].total) for c, n in items.items()}
    tokens = sum(by_column[c].tokens(n) for c, n in plan.items())
    return _plan(scorer, plan, baseline, tokens, harness, None)


def _scorer(
    values, scales, cands, targets, completer, row_weights, n_draws, replicates, seed
) -> _PlanScorer:
    if completer is None:
        completer = default_completer().fit(values, scales)
    target_cols = np.arange(values.shape[1]) if targets is None else np.unique(targets)
    weights = None if row_weights is None else np.asarray(row_weights, dtype=float)
    return _PlanScorer(
        completer.batch_fold_in(values, n_draws=n_draws),
        np.asarray(target_cols, dtype=int),
        cands,
        weights,
        replicates,
        seed,
    )


def _plan(
    scorer: _PlanScorer,
    plan: Mapping[int, int],
    baseline: float,
    budget: float,
    harness: str | None,
    stopped: str | None,
) -> ProbePlan:
    """The plan's rows, each with the expected error of the rows down to it."""
    every = np.arange(len(scorer.rows))
    rows, error = [], baseline
    for k, col in enumerate(plan):
        prefix = {c: plan[c] for c in list(plan)[: k + 1]}
        prec, shift = scorer.system(prefix)
        error = scorer.score(scorer.row_errors(prec, shift, every, prefix))
        cand = scorer.candidates[col]
        rows.append(
            PlannedProbe(
                cand.benchmark, cand.task, plan[col], cand.total, cand.tokens(plan[col]), error
            )
        )
    return ProbePlan(
        probes=rows,
        budget_tokens=float(budget),
        baseline_error=baseline,
        expected_error=error,
        harness=harness,
        stopped=stopped,
    )


def runnable_candidates(
    bp: FittedMatrix, runnable: str, chat: bool = False, columns: Sequence[int] | None = None
) -> list[Candidate]:
    """The benchmarks harness `runnable` can run on `bp` (`runnable_benchmarks`) whose task
    the facts size, as plan candidates (`columns`: only these)."""
    harness = get_harness(runnable, "runnable")
    tasks = harness.runnable_tasks(chat)
    allowed = None if columns is None else set(columns)
    out = []
    for benchmark in runnable_benchmarks(bp, harness.id, chat):
        column = bp.fit_columns[benchmark]
        facts = harness.facts(tasks[benchmark])
        if allowed is not None and column not in allowed:
            continue
        if facts is None or not facts.items or not facts.tokens_per_item:
            continue  # unsized: no cost to weigh it by
        out.append(
            Candidate(
                benchmark,
                column,
                tasks[benchmark],
                facts.items,
                facts.tokens_per_item,
                facts.item_pool,
            )
        )
    return out


def plan_probes_for(
    bp: FittedMatrix,
    runnable: str,
    budget_tokens: float = DEFAULT_BUDGET_TOKENS,
    chat: bool = False,
    targets=None,
    allowlist: Sequence[str] | str | None = None,
    progress: Callable[[int, int], None] | None = None,
    row_weights: Sequence[float] | None = None,
) -> ProbePlan:
    """`BenchPress.plan_probes`: the plan harness `runnable` runs within `budget_tokens`
    on the snapshot's own fit (`targets`: a profile name, list or None for all;
    `allowlist`: benchmarks allowed as probes; `chat`: generative tasks only; `row_weights`:
    each fitted model's weight, default `target_weights.source_row_weights`)."""
    harness = get_harness(runnable, "runnable")
    names = bp.fit_benchmarks_
    chosen = resolve_targets(targets, names, bp.resolve_benchmark)
    target_cols = None if chosen is None else [bp.fit_columns[t] for t in chosen]
    allowed = _allowed_columns(bp, allowlist, harness.id, chat)
    return plan_probes_detailed(
        bp.observed_values(bp.fit_models_, names),
        [],
        runnable_candidates(bp, harness.id, chat, allowed),
        budget_tokens,
        targets=target_cols,
        completer=bp.completer_,
        row_weights=source_row_weights(bp) if row_weights is None else row_weights,
        progress=progress,
        harness=harness.id,
    )


def score_plan_for(
    bp: FittedMatrix,
    runnable: str,
    items: Mapping[str, int | None],
    chat: bool = False,
    targets=None,
) -> ProbePlan:
    """A given plan (benchmark name -> items, None: all of them) of harness `runnable`,
    scored on the snapshot's own fit as `plan_probes_for` scores its own."""
    harness = get_harness(runnable, "runnable")
    names = bp.fit_benchmarks_
    chosen = resolve_targets(targets, names, bp.resolve_benchmark)
    candidates = {c.benchmark: c for c in runnable_candidates(bp, harness.id, chat)}
    plan: dict[int, int] = {}
    for name, n in items.items():
        benchmark = bp.resolve_benchmark(name)
        if benchmark not in candidates:
            raise ValueError(f"{benchmark} has no sized {harness.label} task on {bp.version}")
        cand = candidates[benchmark]
        plan[cand.column] = cand.total if n is None else int(n)
    return score_plan(
        bp.observed_values(bp.fit_models_, names),
        [],
        list(candidates.values()),
        plan,
        targets=None if chosen is None else [bp.fit_columns[t] for t in chosen],
        completer=bp.completer_,
        row_weights=source_row_weights(bp),
        harness=harness.id,
    )
