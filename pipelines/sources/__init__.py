"""Registry of leaderboard sources: id -> Source (URLs, parser, licence)."""

from __future__ import annotations

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

SOURCES: dict[str, Source] = {
    module.SOURCE.id: module.SOURCE
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
}

__all__ = ["SCORE_SCHEMA", "SOURCES", "ParseError", "Source"]
