"""Registry of leaderboard sources: id -> Source (URLs, parser, licence)."""

from __future__ import annotations

from pipelines.sources import aider, arc_prize, benchpress_matrix, epoch_ai, livebench, swebench
from pipelines.sources.base import SCORE_SCHEMA, ParseError, Source

SOURCES: dict[str, Source] = {
    module.SOURCE.id: module.SOURCE
    for module in (benchpress_matrix, livebench, epoch_ai, aider, swebench, arc_prize)
}

__all__ = ["SCORE_SCHEMA", "SOURCES", "ParseError", "Source"]
