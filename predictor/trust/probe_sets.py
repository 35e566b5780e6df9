"""Recommended probe sets: which benchmarks to run on a new model before `BenchPress.predict`.

Each set is what the probe selection of this package (`BenchPress.select_probes`,
`predictor.trust.probes`: greedy, scored on the snapshot's own fit, deterministic) picks on a
snapshot; nothing is chosen by hand:

- `default`: `bp.select_probes(k=5)`, the five probes that predict the other benchmarks best,
  among every fitted benchmark a team can run itself (no arenas or third-party indices).
- `low_cost`: `bp.select_probes(k=5, allowlist=...)` among the fitted benchmarks costing at
  most one standard run (`predictor.trust.costs`: no agentic, coding or priced suites), so
  the five together cost about five standard runs.

`ProbeBenchmarks.DEFAULT` and `.LOW_COST` are the sets of `microsoft/benchpress-v1`, the
snapshot of the BenchPress article. The sets of every snapshot bundled with the package are
pinned here by content hash (`ProbeBenchmarks.pinned(bp)`; a test re-runs the selection and
compares), and `ProbeBenchmarks.for_snapshot(bp)` runs the selection for any other snapshot
(about half a minute for the paper matrix; cached per content hash in this process).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from predictor.trust.costs import NOT_RUNNABLE
from predictor.trust.next_benchmark import benchmark_costs

K = 5
LOW_COST_MAX = 1.0  # standard runs per probe (predictor.trust.costs)


@dataclass(frozen=True)
class ProbeSet:
    """The two recommended probe sets of one snapshot, in the order selection picked them."""

    default: tuple[str, ...]
    low_cost: tuple[str, ...]


def low_cost_allowlist(bp) -> list[str]:
    """Fitted benchmarks a team can run that cost at most one standard run."""
    costs = benchmark_costs(bp)
    return [
        name
        for name, cost in zip(bp.fit_benchmarks_, costs, strict=True)
        if cost <= LOW_COST_MAX and name not in NOT_RUNNABLE
    ]


def select_probe_sets(bp, progress=None) -> ProbeSet:
    """Run the selection (module docstring) on `bp`: slow, see `ProbeBenchmarks.for_snapshot`."""
    default = bp.select_probes(k=K, progress=progress)
    cheap = bp.select_probes(k=K, allowlist=low_cost_allowlist(bp), progress=progress)
    return ProbeSet(tuple(default.benchmarks), tuple(cheap.benchmarks))


# content hash of a bundled snapshot -> its sets (tests/predictor/test_pretrained.py re-runs
# the selection on each and compares; rebuild a bundled snapshot, re-pin its sets)
PINNED: dict[str, ProbeSet] = {
    # microsoft/benchpress-v1
    "0e5bac8c344c985e829f9992719b99b31e5e7ae16867091adbb987d8252b8f32": ProbeSet(
        default=("gpqa_diamond", "mcpatlas", "livecodebench", "bullshit_pushback", "hmmt_feb_2025"),
        low_cost=("gpqa_diamond", "hle", "aime_2025", "bullshit_pushback", "erqa"),
    ),
    # 2026.12.02.2, the main bundled snapshot (`BenchPress.load()`)
    "eb7bdde182d69f91a3c146e6a4ce726179c9a0b0f544591ee7664cf3033009c3": ProbeSet(
        default=(
            "gpqa_diamond",
            "livebench_paraphrase",
            "mmlu",
            "livebench_python",
            "arc_agi_2",
        ),
        low_cost=(
            "gpqa_diamond",
            "livebench_paraphrase",
            "mmlu",
            "livebench_olympiad",
            "livebench_story_generation",
        ),
    ),
}
BENCHPRESS_V1_HASH = "0e5bac8c344c985e829f9992719b99b31e5e7ae16867091adbb987d8252b8f32"
_computed: dict[str, ProbeSet] = {}


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
    def for_snapshot(bp, progress=None) -> ProbeSet:
        """The sets of `bp`: pinned when bundled, else selected now (and kept for the
        process)."""
        found = ProbeBenchmarks.pinned(bp)
        if found is not None:
            return found
        sets = select_probe_sets(bp, progress)
        _computed[str(bp.manifest.get("content_hash", ""))] = sets
        return sets
