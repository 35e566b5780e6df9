"""The per-source facts live on each `Source`; the views the pipeline reads are computed from the
registry. Pinned here as they were when each module listed them by hand, so moving them onto
the sources changed no matrix choice, identity gate or name rule. Only the sources pinned here
are compared: a new source states its own facts and is tested by its own test."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pipelines import sources
from pipelines.identity import checks
from pipelines.sources import SOURCES, registry
from pipelines.transforms import matrix

PINNED = (
    "benchpress_matrix",
    "livebench",
    "epoch_ai",
    "aider",
    "swebench",
    "llm_stats",
    "arc_prize",
    "lmarena",
    "evalplus",
    "open_llm_leaderboard",
    "livecodebench",
)


def pinned(view):
    """`view` (ids, or a mapping by id) cut to the pinned sources, in its own order."""
    if isinstance(view, dict):
        return {k: v for k, v in view.items() if k in PINNED}
    return type(view)(s for s in view if s in PINNED)


def test_registry_order_is_unchanged() -> None:
    assert pinned(list(SOURCES)) == list(PINNED)


def test_matrix_priority_is_unchanged() -> None:
    expected = (
        "benchpress_matrix",  # audited citations, thinking-on headline numbers, pass@1
        "llm_stats",  # first-party: vendor-reported headline numbers
        "livebench",
        "arc_prize",
        "swebench",
        "aider",
        "lmarena",
        "livecodebench",
        "evalplus",
        "open_llm_leaderboard",
        "epoch_ai",  # aggregator: many numbers re-published from elsewhere
    )
    assert expected == pinned(sources.SOURCE_PRIORITY)
    assert expected == pinned(matrix.SOURCE_PRIORITY)  # what build_matrix ranks by default
    assert set(sources.SOURCE_PRIORITY) == set(SOURCES)  # no source left out of the ranking


def test_identity_facts_are_unchanged() -> None:
    assert pinned(checks.FRONTIER_SOURCES) == (
        "benchpress_matrix",
        "livebench",
        "epoch_ai",
        "aider",
        "swebench",
        "llm_stats",
        "arc_prize",
        "lmarena",
    )
    assert pinned(sources.NAME_FIELD) == {
        "aider": "model_name",
        "open_llm_leaderboard": "model_name",
        "lmarena": "model_name",
    }
    assert pinned(sources.DISPLAY_FIELD) == {"livecodebench": "model_name"}
    assert frozenset({"benchpress_matrix", "llm_stats"}) == pinned(sources.HEADLINE_SOURCES)
    assert set(pinned(sources.RUN_COST_SOURCES)) == {"aider", "swebench", "arc_prize"}
    # what `resolve`, the release dates and `warehouse stats` special-cased by id
    assert pinned(sources.ONE_MODEL_AGENT) == {"swebench": "mini-swe-agent"}
    assert pinned(sources.UPLOAD_DAY_SOURCES) == {"open_llm_leaderboard"}
    assert pinned(sources.LONG_TAIL) == {"open_llm_leaderboard": "the Open LLM Leaderboard"}


def test_a_source_without_its_own_priority_is_refused() -> None:
    aider, lmarena = SOURCES["aider"], SOURCES["lmarena"]
    with pytest.raises(ValueError, match="same priority"):
        registry([aider, replace(lmarena, priority=aider.priority)])
    with pytest.raises(ValueError, match="registered twice"):
        registry([aider, aider])
    with pytest.raises(TypeError, match="priority"):
        sources.Source(  # type: ignore[call-arg]
            id="new",
            title="New",
            homepage="https://example.org",
            urls=(),
            parse=lambda payloads: None,  # type: ignore[arg-type,return-value]
            licence="",
            attribution="",
        )
