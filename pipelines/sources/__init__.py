"""Registry of leaderboard sources: id -> Source (URLs, parser, licence, and the facts the
pipeline reads per source). Adding a source: its module, and one line here.

The views below are computed from the sources' own attributes (`Source` in `base.py`), so no
other module lists source ids: the matrix's order of preference (`SOURCE_PRIORITY`), the
identity gate's frontier (`FRONTIER_SOURCES`), which field names the model (`NAME_FIELD`,
`DISPLAY_FIELD`), whose unstated settings are headline ones (`HEADLINE_SOURCES`), which
report run costs (`RUN_COST_SOURCES`), which rank agent systems (`ONE_MODEL_AGENT`), whose
dates are upload days (`UPLOAD_DAY_SOURCES`) and which are a long tail (`LONG_TAIL`).

`registered(source)` adds a source for a block (a test's toy source)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

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

# The mapping views, filled by `_refresh_views` and refreshed in place by `registered`: the
# modules that imported them hold these very objects.
# Sources whose model is named by another field than `model_key` (`pipelines.identity.rules`).
NAME_FIELD: dict[str, str] = {}
DISPLAY_FIELD: dict[str, str] = {}
# Source -> the agent of its one-model rows (`pipelines.identity.resolve`).
ONE_MODEL_AGENT: dict[str, str] = {}
UPLOAD_DAY_SOURCES: set[str] = set()  # `pipelines.stages.side_information`
LONG_TAIL: dict[str, str] = {}  # source -> its name in `benchpress warehouse stats`


def _refresh_views() -> None:
    found = list(SOURCES.values())
    _fill(NAME_FIELD, {s.id: s.name_field for s in found if s.name_field != "model_key"})
    _fill(DISPLAY_FIELD, {s.id: s.display_field for s in found if s.display_field is not None})
    _fill(ONE_MODEL_AGENT, {s.id: s.one_model_agent for s in found if s.one_model_agent})
    _fill(LONG_TAIL, {s.id: s.long_tail for s in found if s.long_tail})
    UPLOAD_DAY_SOURCES.clear()
    UPLOAD_DAY_SOURCES.update(s.id for s in found if s.dates_are_uploads)


def _fill(view: dict[str, str], items: dict[str, str]) -> None:
    view.clear()
    view.update(items)


_refresh_views()


@contextmanager
def registered(source: Source) -> Iterator[Source]:
    """`source` registered for the block, then removed again: how a test adds a toy source
    without editing `SOURCES`. Its id and priority must be new (`registry`). `SOURCES` and the
    mapping views include it; the ordered ones (`SOURCE_PRIORITY`, `FRONTIER_SOURCES`,
    `HEADLINE_SOURCES`, `RUN_COST_SOURCES`) are fixed at import (the matrix ranks it last)."""
    registry([*SOURCES.values(), source])
    SOURCES[source.id] = source
    _refresh_views()
    try:
        yield source
    finally:
        del SOURCES[source.id]
        _refresh_views()


__all__ = [
    "DISPLAY_FIELD",
    "FRONTIER_SOURCES",
    "HEADLINE_SOURCES",
    "LONG_TAIL",
    "NAME_FIELD",
    "ONE_MODEL_AGENT",
    "RUN_COST_SOURCES",
    "SCORE_SCHEMA",
    "SOURCES",
    "SOURCE_PRIORITY",
    "UPLOAD_DAY_SOURCES",
    "ParseError",
    "Source",
    "registered",
]
