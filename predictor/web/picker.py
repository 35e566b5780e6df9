"""Probe picking for the page: `BenchPress.select_probes` behind request validation and a cache.

Targets are a use-case profile (`predictor.trust.profiles`) or benchmark names; every name is
resolved (close matches on a typo) and checked against the fitted benchmarks here, so an error
names the parameter and the benchmark. A budget below the cheapest allowed probe is an error
rather than an empty answer.

The greedy search is deterministic and its first k picks do not depend on how many more would
follow (with or without a budget), so one cached run for k answers every smaller k exactly.
A search with every fitted benchmark as a target takes seconds per probe on the bundled
snapshot (a profile: about a second for five), so repeated questions are served from memory,
identical questions asked at once share one search, and at most MAX_SEARCHES searches run at a
time (a request waits up to SEARCH_WAIT_SECONDS for its turn, then gets a 503 with Retry-After):
questions that miss the cache (budget 9.31, 9.32, ...) cannot take every core.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from predictor.api import BenchPress
from predictor.names.resolve import UnknownNameError
from predictor.trust.costs import CATEGORY_COSTS, DEFAULT_COSTS, USD_PER_STANDARD_RUN
from predictor.trust.next_benchmark import benchmark_costs
from predictor.trust.probes import ProbeSelection
from predictor.trust.profiles import PROFILES, close_profiles, profile, profile_name
from predictor.web import params
from predictor.web.errors import ApiError, bad_request
from predictor.web.params import Params

DEFAULT_K = 5
DEFAULT_PROFILE = "general_assistant"  # what the page searches for unless told otherwise
EVERY = "all"  # targets=all: every fitted benchmark, as when targets is left out
MAX_ALLOWLIST = 250
CACHE_SIZE = 64
MAX_SEARCHES = 2  # greedy searches running at once; more requests wait for a turn
SEARCH_WAIT_SECONDS = 30.0
RETRY_AFTER_SECONDS = 10

# The unit of `predictor.trust.costs`: 1.0 = one typical multiple-choice or short-answer suite.
COST_UNIT = "standard benchmark runs"
COST_NOTE = (
    "1 = one typical multiple-choice or short-answer suite; "
    f"coding suites cost {CATEGORY_COSTS['coding']:g}, agentic ones "
    f"{CATEGORY_COSTS['agentic']:g}, and some suites (sandboxed agents, human-vote Elo) up to "
    f"{max(DEFAULT_COSTS.values()):g}; where a leaderboard reports what runs cost (Aider, "
    f"SWE-bench, ARC Prize), the median USD per run / {USD_PER_STANDARD_RUN:g}"
)


@dataclass(frozen=True)
class ProbeRequest:
    """A validated `/api/probes` request, every name resolved to a fitted benchmark id."""

    k: int
    budget: float | None
    profile: str | None
    targets: tuple[str, ...] | None  # None: every fitted benchmark (the Python default)
    allowlist: tuple[str, ...] | None  # None: every fitted benchmark may be a probe


def _fitted(bench: BenchPress, parameter: str, name: str, role: str) -> str:
    """A benchmark name resolved to a fitted id; errors name the parameter."""
    try:
        benchmark = bench.resolve_benchmark(name)
    except UnknownNameError as exc:
        raise bad_request(f"{parameter}: {exc}") from None
    if benchmark not in bench.fit_benchmarks_:
        raise bad_request(
            f"{parameter}: benchmark {benchmark!r} has too few observations in snapshot "
            f"{bench.version} to be used as a {role}"
        )
    return benchmark


def parse_targets(bench: BenchPress, query: Params) -> tuple[str | None, tuple[str, ...] | None]:
    """(profile, None), (None, fitted benchmark ids) or (None, None) for every fitted one, from
    the `targets` parameter; errors name it (and close profiles or benchmarks on a typo)."""
    names = params.names(query, "targets")
    if not names or (len(names) == 1 and names[0].lower() == EVERY):
        return None, None
    if len(names) == 1 and (found := profile_name(names[0])) is not None:
        if not profile(found, bench.fit_benchmarks_):
            raise bad_request(f"targets: profile {found!r} has no benchmark in this snapshot")
        return found, None
    known = ", ".join(PROFILES)
    chosen: list[str] = []
    for name in names:
        if profile_name(name) is not None:
            raise bad_request(
                f"targets: give a profile ({name!r}) alone, not in a list of benchmarks"
            )
        if len(names) == 1:
            try:
                bench.resolve_benchmark(name)
            except UnknownNameError as exc:
                close = [*close_profiles(name), *exc.suggestions]
                hint = f"; did you mean: {', '.join(close)}?" if close else ""
                raise bad_request(
                    f"targets: unknown profile or benchmark {name!r}; profiles: {known}{hint}"
                ) from None
        benchmark = _fitted(bench, "targets", name, "target")
        if benchmark not in chosen:
            chosen.append(benchmark)
    return None, tuple(chosen)


def request(bench: BenchPress, query: Params) -> ProbeRequest:
    """Validate `k`, `budget`, `targets` and `allowlist` against a loaded snapshot."""
    k = params.count(query, "k", DEFAULT_K, params.MAX_K)
    budget = params.budget(query)
    chosen_profile, targets = parse_targets(bench, query)
    allowed = params.names(query, "allowlist", limit=MAX_ALLOWLIST)
    allowlist = None
    if allowed:
        ids = [_fitted(bench, "allowlist", name, "probe") for name in allowed]
        allowlist = tuple(dict.fromkeys(ids))
    return ProbeRequest(k, budget, chosen_profile, targets, allowlist)


def costs(bench: BenchPress) -> dict[str, float]:
    """Cost of every fitted benchmark as `select_probes` charges it."""
    return {b: float(c) for b, c in zip(bench.fit_benchmarks_, benchmark_costs(bench), strict=True)}


def cost_words(cost: float) -> str:
    """`1 standard benchmark run`, `2.5 standard benchmark runs`."""
    unit = COST_UNIT[:-1] if cost == 1 else COST_UNIT
    return f"{cost:g} {unit}"


def check_budget(bench: BenchPress, wanted: ProbeRequest) -> None:
    """A budget below the cheapest allowed probe would pick nothing: say so instead."""
    if wanted.budget is None:
        return
    cost = costs(bench)
    pool = wanted.allowlist or tuple(bench.fit_benchmarks_)
    cheapest = min(pool, key=lambda b: (cost[b], pool.index(b)))
    if wanted.budget < cost[cheapest] - 1e-12:
        raise bad_request(
            f"budget {wanted.budget:g} is too small: the cheapest allowed probe costs "
            f"{cost_words(cost[cheapest])} (e.g. {cheapest})"
        )


def target_ids(bench: BenchPress, wanted: ProbeRequest) -> list[str]:
    """The benchmarks the selection predicts (what `resolve_targets` makes of the request)."""
    if wanted.profile is not None:
        return profile(wanted.profile, bench.fit_benchmarks_)
    return list(wanted.targets) if wanted.targets is not None else list(bench.fit_benchmarks_)


# ------------------------------------------------------------------------------ the cache
Key = tuple[object, ...]
_lock = threading.Lock()
_runs: OrderedDict[Key, tuple[int, ProbeSelection]] = OrderedDict()
_flights: dict[Key, threading.Event] = {}  # searches running now, set when each ends
_searches = threading.BoundedSemaphore(MAX_SEARCHES)


def _prefix(selection: ProbeSelection, k: int) -> ProbeSelection:
    """The first k picks, as a search for k would have found them (and stopped, or not)."""
    return ProbeSelection(
        columns=selection.columns[:k],
        errors=selection.errors[:k],
        costs=selection.costs[:k],
        baseline_error=selection.baseline_error,
        benchmarks=None if selection.benchmarks is None else selection.benchmarks[:k],
        requested=k,
        budget=selection.budget,
        stopped=selection.stopped if k > len(selection.columns) else None,
    )


def _cached(key: Key, k: int) -> ProbeSelection | None:
    """The first k picks of a cached run that covers them (call with `_lock` held)."""
    cached = _runs.get(key)
    if cached is None:
        return None
    ran_for, selection = cached
    # a run that stopped short (nothing else fits) answers every larger k as well
    if k > ran_for and len(selection.columns) >= ran_for:
        return None
    _runs.move_to_end(key)
    return _prefix(selection, k)


def _store(key: Key, k: int, selection: ProbeSelection) -> None:
    with _lock:
        previous = _runs.get(key)
        if previous is None or previous[0] < k:
            _runs[key] = (k, selection)
        _runs.move_to_end(key)
        while len(_runs) > CACHE_SIZE:
            _runs.popitem(last=False)


def _search(
    bench: BenchPress, wanted: ProbeRequest, run: Callable[..., ProbeSelection] | None
) -> ProbeSelection:
    """One greedy search, once one of the MAX_SEARCHES turns is free (503 after waiting)."""
    if not _searches.acquire(timeout=SEARCH_WAIT_SECONDS):
        raise ApiError(
            503,
            "the server is busy picking probes for other requests; try again in a few seconds",
            {"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    try:
        return (run or bench.select_probes)(
            k=wanted.k,
            budget=wanted.budget,
            targets=wanted.profile if wanted.profile is not None else _list(wanted.targets),
            allowlist=_list(wanted.allowlist),
        )
    finally:
        _searches.release()


def select(
    bench: BenchPress,
    wanted: ProbeRequest,
    run: Callable[..., ProbeSelection] | None = None,
) -> ProbeSelection:
    """`bench.select_probes(...)` for the request, from the cache when an earlier run covers it.

    Snapshots are content-addressed, so (version, content hash) identifies the answer. While a
    search for the same key runs, others wait for it and then look in the cache again (as
    `Catalog.load` does for versions): four identical requests cost one search."""
    key = (
        bench.version,
        bench.manifest.get("content_hash"),
        wanted.budget,
        wanted.profile,
        wanted.targets,
        wanted.allowlist,
    )
    while True:
        with _lock:
            found = _cached(key, wanted.k)
            if found is not None:
                return found
            running = _flights.get(key)
            if running is None:
                done = _flights[key] = threading.Event()
                break
        running.wait()
    try:
        selection = _search(bench, wanted, run)
        _store(key, wanted.k, selection)
    finally:
        with _lock:
            del _flights[key]
        done.set()
    return selection


def _list(names: tuple[str, ...] | None) -> list[str] | None:
    return None if names is None else list(names)


def clear_cache() -> None:
    with _lock:
        _runs.clear()
