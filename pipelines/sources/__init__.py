"""Registry of leaderboard sources: id -> Source (URLs, parser, licence, and the facts the
pipeline reads per source). Adding a source: its module, and one line here.

The views below are computed from the sources' own attributes (`Source` in `base.py`), so no
other module lists source ids: the matrix's order of preference (`SOURCE_PRIORITY`), the
identity gate's frontier (`FRONTIER_SOURCES`), which field names the model (`NAME_FIELD`,
`DISPLAY_FIELD`), whose unstated settings are headline ones (`HEADLINE_SOURCES`) and which
report run costs (`RUN_COST_SOURCES`)."""

from __future__ import annotations

from collections.abc import Iterable

from pipelines.sources import (
    aider,
    arc_prize,
    benchpress_matrix,
    epoch_ai,
    evalplus,
    livebench,
    livecodebench,
    llm_stats,
    lmarena,
    open_llm_leaderboard,
    swebench,
)
from pipelines.sources.base import SCORE_SCHEMA, ParseError, Source


def registry(sources: Iterable[Source]) -> dict[str, Source]:
    """id -> source in the order given; a repeated id or priority is an error (the matrix's
    choice between two sources must never depend on the order they are listed in)."""
    found: dict[str, Source] = {}
    ranks: dict[int, str] = {}
    for source in sources:
        if source.id in found:
            raise ValueError(f"source {source.id!r} is registered twice")
        if source.priority in ranks:
            raise ValueError(
                f"sources {ranks[source.priority]!r} and {source.id!r} have the same priority "
                f"{source.priority}; give each its own"
            )
        found[source.id] = source
        ranks[source.priority] = source.id
    return found


SOURCES: dict[str, Source] = registry(
    module.SOURCE
    for module in (
        benchpress_matrix,
        livebench,
        epoch_ai,
        aider,
        swebench,
        llm_stats,
        arc_prize,
        lmarena,
        evalplus,
        open_llm_leaderboard,
        livecodebench,
    )
)

# Most preferred first (`pipelines.transforms.matrix`).
SOURCE_PRIORITY: tuple[str, ...] = tuple(
    s.id for s in sorted(SOURCES.values(), key=lambda s: s.priority)
)
# In registry order (`pipelines.identity.checks`).
FRONTIER_SOURCES: tuple[str, ...] = tuple(s.id for s in SOURCES.values() if s.frontier)
HEADLINE_SOURCES: frozenset[str] = frozenset(s.id for s in SOURCES.values() if s.headline)
RUN_COST_SOURCES: tuple[str, ...] = tuple(s.id for s in SOURCES.values() if s.run_costs)
# Sources whose model is named by another field than `model_key` (`pipelines.identity.rules`).
NAME_FIELD: dict[str, str] = {
    s.id: s.name_field for s in SOURCES.values() if s.name_field != "model_key"
}
DISPLAY_FIELD: dict[str, str] = {
    s.id: s.display_field for s in SOURCES.values() if s.display_field is not None
}

__all__ = [
    "DISPLAY_FIELD",
    "FRONTIER_SOURCES",
    "HEADLINE_SOURCES",
    "NAME_FIELD",
    "RUN_COST_SOURCES",
    "SCORE_SCHEMA",
    "SOURCES",
    "SOURCE_PRIORITY",
    "ParseError",
    "Source",
]
