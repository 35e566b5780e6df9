"""Use-case profiles: named target sets usable wherever `targets=` is accepted.

`resolve_targets("coding_assistant", available)` gives the profile's benchmarks that exist in
`available` (the snapshot's fitted benchmarks), in profile order. Unknown profile names raise;
a list of benchmark ids passes through (filtered the same way, unknown ids raise).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

PROFILES: dict[str, tuple[str, ...]] = {
    "coding_assistant": (
        "humaneval",
        "mbpp_plus",
        "swe_bench_verified",
        "livecodebench",
        "aider_polyglot_diff",
    ),
    "chat": ("chatbot_arena_elo", "arena_hard", "ifeval", "alpacaeval_2"),
    "reasoning": ("gsm8k", "math", "gpqa_diamond", "arc_agi_1", "bigbench_hard", "aime_2025"),
    "general_assistant": (
        "mmlu_pro",
        "gpqa_diamond",
        "ifeval",
        "chatbot_arena_elo",
        "swe_bench_verified",
    ),
}


def profile(name: str, available: Sequence[str] | None = None) -> list[str]:
    """The benchmarks of profile `name`, filtered to `available` when given."""
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; known profiles: {', '.join(sorted(PROFILES))}")
    keep = None if available is None else set(available)
    return [b for b in PROFILES[name] if keep is None or b in keep]


def resolve_targets(
    targets: str | Sequence[str] | None,
    available: Sequence[str],
    resolve: Callable[[str], str] | None = None,
) -> list[str] | None:
    """Profile name, list of benchmark names, or None (= every available benchmark -> None).

    Names in a list are passed through `resolve` (e.g. `BenchPress.resolve_benchmark`); ids
    that resolve but are not in `available` raise. An empty result raises.
    """
    if targets is None:
        return None
    if isinstance(targets, str):
        if targets in PROFILES:
            out = profile(targets, available)
            if not out:
                raise ValueError(f"profile {targets!r} has no benchmark in this snapshot")
            return out
        targets = [targets]
    avail = set(available)
    out: list[str] = []
    for name in targets:
        bid = resolve(name) if resolve is not None else name
        if bid not in avail:
            raise ValueError(f"benchmark {bid!r} cannot be used as a target here")
        if bid not in out:
            out.append(bid)
    if not out:
        raise ValueError("targets is empty")
    return out
