"""Use-case profiles: named target sets usable wherever `targets=` is accepted.

`resolve_targets("coding_assistant", available)` gives the profile's benchmarks that exist in
`available` (the snapshot's fitted benchmarks), in profile order. Unknown profile names raise;
a list of benchmark ids passes through (filtered the same way, unknown ids raise).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

from predictor.names.resolve import AmbiguousNameError, UnknownNameError

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


def _profile_key(text: str) -> str:
    return "_".join(text.strip().lower().replace("-", " ").replace("_", " ").split())


def profile_name(text: str) -> str | None:
    """`coding_assistant`, `Coding assistant` or `coding-assistant` -> `coding_assistant`."""
    key = _profile_key(text)
    return key if key in PROFILES else None


def close_profiles(text: str) -> list[str]:
    """Profiles a typo may mean: `coding` or `codng` -> coding_assistant."""
    key = _profile_key(text)

    def close(name: str) -> bool:
        words = [name, *name.split("_")]
        return key in name or bool(difflib.get_close_matches(key, words, n=1, cutoff=0.75))

    return [name for name in PROFILES if key and close(name)]


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
    """Profile name, list of benchmark names, or None or "all" (= every available benchmark ->
    None).

    A profile is recognised in any spelling (`Coding assistant`, `coding-assistant`); one
    unknown word is reported as an unknown profile or benchmark, with close matches of both.

    Names in a list are passed through `resolve` (e.g. `BenchPress.resolve_benchmark`); ids
    that resolve but are not in `available` raise. An empty result raises.
    """
    if targets is None or (isinstance(targets, str) and targets.strip().lower() == "all"):
        return None
    one_word = isinstance(targets, str)
    if isinstance(targets, str):
        if (found := profile_name(targets)) is not None:
            out = profile(found, available)
            if not out:
                raise ValueError(f"profile {found!r} has no benchmark in this snapshot")
            return out
        targets = [targets]
    avail = set(available)
    out: list[str] = []
    for name in targets:
        try:
            bid = resolve(name) if resolve is not None else name
        except AmbiguousNameError:
            raise
        except UnknownNameError as exc:
            if not one_word:
                raise
            raise UnknownNameError(  # one word: a misspelt profile is as likely
                "profile or benchmark",
                name,
                [*close_profiles(name), *exc.suggestions],
                f"profiles: {', '.join(PROFILES)}",
            ) from None
        if bid not in avail:
            raise ValueError(f"benchmark {bid!r} cannot be used as a target here")
        if bid not in out:
            out.append(bid)
    if not out:
        raise ValueError("targets is empty")
    return out
