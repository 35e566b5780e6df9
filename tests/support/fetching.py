"""Fetch a source's payloads from the loopback mirror through the real fetch code path."""

from __future__ import annotations

from pipelines.fetch.plan import fetch_source, payload_map
from pipelines.fetch.transports import Fetcher
from pipelines.sources.base import Source


def fetch_via_mirror(source: Source, base_url: str) -> dict[str, bytes]:
    fetcher = Fetcher(mode="mirror", mirror=base_url, retries=0)
    return payload_map(fetch_source(fetcher, source))
