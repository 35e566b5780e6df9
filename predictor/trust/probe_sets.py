"""Recommended probe sets: which benchmarks to run on a new model before `BenchPress.predict`.

Each set is what the probe selection of this package (`BenchPress.select_probes`,
`predictor.trust.probes`: greedy, scored on the snapshot's own fit, deterministic) picks on a
snapshot; nothing is chosen by hand:

- `default`: `bp.select_probes(k=5)`, the five probes that predict the other benchmarks best,
  among every fitted benchmark a team can run itself (no arenas or third-party indices).
- `low_cost`: `bp.select_probes(k=5, allowlist=...)` among the fitted benchmarks costing at
  most one standard run (`predictor.trust.costs`: no agentic, coding or priced suites), so
  the five together cost about five standard runs.
- `lm_eval`, `lm_eval_chat`, `inspect`: the runnable plans, `bp.plan_probes(tool,
  DEFAULT_BUDGET_TOKENS)` among the benchmarks that tool has a mapped, sized task for
  (`lm_eval_chat`: only generative tasks, what a chat endpoint can run): benchmarks and the
  items each runs on (a seeded subset, or all), chosen by expected error per token within
  the tokens the default lm-eval set cost before plans (`predictor.trust.probe_plan`). They are
  what `benchpress run` runs by default: one per harness and probe-set key of
  `predictor.harnesses` (`ProbeSet.runnable_sets`, `ProbeSet.runnable_items`). A harness
  whose tasks the task facts do not size gets `bp.select_probes(k=5, runnable=tool)`.

`ProbeBenchmarks.DEFAULT` and `.LOW_COST` are the sets of `microsoft/benchpress-v1`, the
snapshot of the BenchPress article. The sets of every snapshot bundled with the package are
pinned here by content hash (`ProbeBenchmarks.pinned(bp)`; a test re-runs the selection and
compares), and `ProbeBenchmarks.for_snapshot(bp)` runs the selection for any other snapshot
(about half a minute for the paper matrix; cached per content hash in this process).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from predictor.harnesses import get_harness, harnesses
from predictor.trust.costs import NOT_RUNNABLE
from predictor.trust.next_benchmark import benchmark_costs
from predictor.trust.probe_plan import DEFAULT_BUDGET_TOKENS, runnable_candidates

K = 5
LOW_COST_MAX = 1.0  # standard runs per probe (predictor.trust.costs)


@dataclass(frozen=True, init=False)
class ProbeSet:
    """The recommended probe sets of one snapshot, in the order selection picked them.

    `runnable_sets`: probe-set key (`Harness.probe_sets`: `lm_eval`, `lm_eval_chat`,
    `inspect`) -> the set that harness runs by default, given as keywords
    (`ProbeSet(default=..., low_cost=..., lm_eval=...)`) or as the mapping; an empty set is
    the same as none. `.lm_eval`, `.lm_eval_chat` and `.inspect` read the built-in ones.
    `items`: probe-set key -> benchmark -> the items its plan runs it on (a benchmark not in
    it runs in full)."""

    default: tuple[str, ...]
    low_cost: tuple[str, ...]
    runnable_sets: Mapping[str, tuple[str, ...]] = field(hash=False)
    items: Mapping[str, Mapping[str, int]] = field(hash=False)

    def __init__(
        self,
        default: Iterable[str],
        low_cost: Iterable[str],
        runnable_sets: Mapping[str, Iterable[str]] | None = None,
        items: Mapping[str, Mapping[str, int]] | None = None,
        **sets: Iterable[str],
    ) -> None:
        given = {**(runnable_sets or {}), **sets}
        known = {key for h in harnesses() for key, _ in h.probe_sets}
        unknown = sorted(set(given) - known)
        if unknown:
            raise TypeError(f"ProbeSet() got an unexpected keyword argument {unknown[0]!r}")
        sets_given = {key: tuple(names) for key, names in given.items()}
        kept = {key: names for key, names in sets_given.items() if names}
        object.__setattr__(self, "default", tuple(default))
        object.__setattr__(self, "low_cost", tuple(low_cost))
        object.__setattr__(self, "runnable_sets", kept)
        object.__setattr__(
            self, "items", {key: dict(v) for key, v in (items or {}).items() if key in kept}
        )

    @property
    def lm_eval(self) -> tuple[str, ...]:
        return self.runnable_sets.get("lm_eval", ())

    @property
    def lm_eval_chat(self) -> tuple[str, ...]:
        return self.runnable_sets.get("lm_eval_chat", ())

    @property
    def inspect(self) -> tuple[str, ...]:
        return self.runnable_sets.get("inspect", ())

    def runnable(self, tool: str, chat: bool = False) -> tuple[str, ...]:
        """The default set a tool (`lm_eval`, `inspect`) runs; `chat`: generative only."""
        return self.runnable_sets.get(get_harness(tool).probe_set_for(chat), ())

    def runnable_items(self, tool: str, chat: bool = False) -> dict[str, int]:
        """benchmark -> the items the default set of `tool` runs it on (those run in full are
        left out)."""
        return dict(self.items.get(get_harness(tool).probe_set_for(chat), {}))


def low_cost_allowlist(bp) -> list[str]:
    """Fitted benchmarks a team can run that cost at most one standard run."""
    costs = benchmark_costs(bp)
    return [
        name
        for name, cost in zip(bp.fit_benchmarks_, costs, strict=True)
        if cost <= LOW_COST_MAX and name not in NOT_RUNNABLE
    ]


def runnable_plan(bp, tool: str, chat: bool = False, progress=None) -> tuple[tuple[str, ...], dict]:
    """(benchmarks, benchmark -> items of those run on a subset) of the default set `tool`
    runs on `bp`: the plan within `DEFAULT_BUDGET_TOKENS` when its tasks are sized, else the
    five probes `bp.select_probes` picks (each in full)."""
    if runnable_candidates(bp, tool, chat):
        plan = bp.plan_probes(tool, DEFAULT_BUDGET_TOKENS, chat=chat, progress=progress)
        subsets = {p.benchmark: p.items for p in plan.probes if p.subset}
        return tuple(plan.benchmarks), subsets
    selection = bp.select_probes(k=K, progress=progress, runnable=tool, chat=chat)
    return tuple(selection.benchmarks), {}


def select_probe_sets(bp, progress=None) -> ProbeSet:
    """Run the selection (module docstring) on `bp`: slow, see `ProbeBenchmarks.for_snapshot`."""

    def chosen(**kwargs) -> tuple[str, ...]:
        return tuple(bp.select_probes(k=K, progress=progress, **kwargs).benchmarks)

    default, low_cost = chosen(), chosen(allowlist=low_cost_allowlist(bp))
    plans = {
        key: runnable_plan(bp, harness.id, chat, progress)
        for harness in harnesses()
        for key, chat in harness.probe_sets
    }
    return ProbeSet(
        default=default,
        low_cost=low_cost,
        runnable_sets={key: names for key, (names, _) in plans.items()},
        items={key: items for key, (_, items) in plans.items()},
    )


# content hash of a bundled snapshot -> its sets (tests/predictor/test_pretrained.py re-runs
# the selection on each and compares; rebuild a bundled snapshot or change the selection,
# re-pin its sets: print `select_probe_sets(bp)` for each)
PINNED: dict[str, ProbeSet] = {
    # microsoft/benchpress-v1
    "de73b5b45851e08023ce77ca9b5ea531473ad3cde8e18727704a2bdcf466ef2c": ProbeSet(
        default=("gpqa_diamond", "browsecomp", "codeforces_rating", "hmmt_feb_2025", "hle"),
        low_cost=("gpqa_diamond", "hle", "hmmt_feb_2025", "charxiv_reasoning", "gpqa_main"),
        lm_eval=(
            "aime_2025",
            "gpqa_diamond",
            "aime_2024",
            "math",
            "mmlu_pro",
            "c_eval",
            "ifeval",
            "drop",
        ),
        lm_eval_chat=(
            "aime_2025",
            "gpqa_diamond",
            "aime_2024",
            "math",
            "mmlu_pro",
            "ifeval",
            "drop",
            "bigbench_hard",
        ),
        inspect=("gpqa_diamond", "mmlu_pro", "math", "ifeval", "gsm8k"),
        items={
            "lm_eval": {"math": 100, "mmlu_pro": 100, "c_eval": 400, "ifeval": 200, "drop": 400},
            "lm_eval_chat": {
                "math": 100,
                "mmlu_pro": 100,
                "ifeval": 200,
                "drop": 400,
                "bigbench_hard": 400,
            },
            "inspect": {"mmlu_pro": 400, "math": 100, "ifeval": 100, "gsm8k": 400},
        },
    ),
    # 2026.12.07.3, the main bundled snapshot (`BenchPress.load()`)
    "d9790fadc1d8df7ddcf1e3753a3c88194a5058690248dc3c531e01493df7801f": ProbeSet(
        default=("gpqa_diamond", "livebench_summarize", "arc_agi_1", "mmlu", "livebench_python"),
        low_cost=("gpqa_diamond", "livebench_summarize", "mmlu", "livebench_olympiad", "hle"),
        lm_eval=(
            "triviaqa",
            "arc_challenge",
            "aime_2025",
            "mmlu",
            "gpqa_diamond",
            "math",
            "aime_2024",
            "gsm8k",
            "ifeval",
        ),
        lm_eval_chat=(
            "triviaqa",
            "aime_2025",
            "arc_challenge",
            "gpqa_diamond",
            "math",
            "aime_2024",
            "open_llm_ifeval",
            "bigbench_hard",
            "mmlu_pro",
        ),
        inspect=("mmlu", "gpqa_diamond", "hellaswag", "mmlu_pro", "math", "gsm8k", "ifeval"),
        items={
            "lm_eval": {
                "triviaqa": 100,
                "arc_challenge": 100,
                "mmlu": 800,
                "math": 100,
                "gsm8k": 400,
            },
            "lm_eval_chat": {
                "triviaqa": 100,
                "arc_challenge": 100,
                "math": 100,
                "open_llm_ifeval": 100,
                "bigbench_hard": 100,
                "mmlu_pro": 400,
            },
            "inspect": {
                "mmlu": 400,
                "hellaswag": 100,
                "mmlu_pro": 3200,
                "math": 200,
                "ifeval": 200,
            },
        },
    ),
}
BENCHPRESS_V1_HASH = "de73b5b45851e08023ce77ca9b5ea531473ad3cde8e18727704a2bdcf466ef2c"
_computed: dict[str, ProbeSet] = {}
_runnable: dict[tuple[str, str, bool], tuple[tuple[str, ...], dict[str, int]]] = {}


class ProbeBenchmarks:
    """Probe sets to run on a new model (module docstring for how they are chosen).

    `DEFAULT` / `LOW_COST`: those of `microsoft/benchpress-v1`; `for_snapshot(bp)`: those of
    any snapshot, e.g. `bp.predict({b: my_scores[b] for b in ProbeBenchmarks.for_snapshot(
    bp).default})`."""

    DEFAULT: ClassVar[tuple[str, ...]] = PINNED[BENCHPRESS_V1_HASH].default
    LOW_COST: ClassVar[tuple[str, ...]] = PINNED[BENCHPRESS_V1_HASH].low_cost

    @staticmethod
    def pinned(bp) -> ProbeSet | None:
        """The sets of a bundled snapshot, without running anything (None for others)."""
        digest = str(bp.manifest.get("content_hash", ""))
        return PINNED.get(digest) or _computed.get(digest)

    @staticmethod
    def runnable(bp, tool: str, chat: bool = False, progress=None) -> tuple[str, ...]:
        """The default set `tool` runs on `bp` (`ProbeSet.runnable`): pinned when bundled,
        else this one selection alone (seconds; `runnable_plan`), kept for the process."""
        return ProbeBenchmarks.runnable_plan(bp, tool, chat, progress)[0]

    @staticmethod
    def runnable_plan(
        bp, tool: str, chat: bool = False, progress=None
    ) -> tuple[tuple[str, ...], dict[str, int]]:
        """(benchmarks, benchmark -> items of those run on a subset) of the default set
        `tool` runs on `bp`: pinned when bundled, else selected now and kept."""
        found = ProbeBenchmarks.pinned(bp)
        if found is not None and found.runnable(tool, chat):
            return found.runnable(tool, chat), found.runnable_items(tool, chat)
        key = (str(bp.manifest.get("content_hash", "")), tool, chat)
        if key not in _runnable:
            _runnable[key] = runnable_plan(bp, tool, chat, progress)
        names, items = _runnable[key]
        return names, dict(items)

    @staticmethod
    def for_snapshot(bp, progress=None) -> ProbeSet:
        """The sets of `bp`: pinned when bundled, else selected now (and kept for the
        process)."""
        found = ProbeBenchmarks.pinned(bp)
        if found is not None:
            return found
        sets = select_probe_sets(bp, progress)
        _computed[str(bp.manifest.get("content_hash", ""))] = sets
        return sets
