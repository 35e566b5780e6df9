"""Fetching leaderboard payloads over three transports (live, mirror, replay), one code path."""

from pipelines.fetch.transports import (
    FetchedPayload,
    Fetcher,
    FetchError,
    Validators,
    mirror_url,
    replay_relpath,
)

__all__ = ["FetchError", "FetchedPayload", "Fetcher", "Validators", "mirror_url", "replay_relpath"]
