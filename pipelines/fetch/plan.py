"""Fetch every payload a source needs: its fixed URLs, then any URLs its listing step discovers."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from pipelines.fetch.budget import DeadlineExceeded, FetchBudget
from pipelines.fetch.transports import FetchedPayload, Fetcher, FetchError, Validators
from pipelines.sources.base import ParseError, Source

StoredContent = Callable[[str], bytes | None]
ValidatorsFor = Callable[[str], Validators | None]


def fetch_source(
    fetcher: Fetcher,
    source: Source,
    validators: ValidatorsFor | None = None,
    stored_content: StoredContent | None = None,
    budget: FetchBudget | None = None,
    concurrency: int = 1,
) -> list[FetchedPayload]:
    """All payloads of one source, in a deterministic order.

    `validators(url)` gives what the archived copy of a URL looked like, for conditional GET
    (discovered URLs included). A 304 answer carries no bytes; when the listing step needs
    them, `stored_content` supplies the archived copy, so discovery works the same whether or
    not the listing changed. `budget`: the source's and the run's deadlines; once one has
    passed, `DeadlineExceeded` says after how many of the source's files. `concurrency`: how
    many URLs are fetched at once (threads; llm_stats lists 336 files, and over the internet
    each costs a round trip); the result and the first error are those of the URL order.
    """
    budget = budget or FetchBudget()
    fetched: list[FetchedPayload] = []

    def fetch_one(url: str, done: int, total: int, more_to_list: bool) -> FetchedPayload:
        spent = budget.spent()
        if spent is not None:
            raise DeadlineExceeded(
                source.id, url, spent, done, total, more_to_list, started=done > 0
            )
        previous = validators(url) if validators else None
        try:
            return fetcher.fetch(source.id, url, source.max_bytes, previous, budget.first())
        except FetchError as exc:  # stopped by the source's or run's budget: say so
            if exc.deadline is None or exc.deadline not in budget.limits:
                raise
            raise DeadlineExceeded(
                source.id, url, exc.deadline, done, total, more_to_list
            ) from None

    def fetch_all(urls: list[str], total: int, more_to_list: bool) -> None:
        if concurrency <= 1 or len(urls) <= 1:
            for url in urls:
                fetched.append(fetch_one(url, len(fetched), total, more_to_list))
            return
        with ThreadPoolExecutor(max_workers=min(concurrency, len(urls))) as pool:
            first = len(fetched)
            futures = [
                pool.submit(fetch_one, url, first + i, total, more_to_list)
                for i, url in enumerate(urls)
            ]
            try:
                for future in futures:  # in URL order: the first failing URL is reported
                    fetched.append(future.result())
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    fetch_all(list(source.urls), len(source.urls), source.discover is not None)
    if source.discover is None:
        return fetched
    listing: dict[str, bytes] = {}
    for payload in fetched:
        content = payload.content
        if content is None and stored_content is not None:
            content = stored_content(payload.url)
        if content is None:
            raise FetchError(source.id, payload.url, "not modified, but no archived copy to list")
        listing[payload.url] = content
    try:
        discovered = source.discover(listing)
    except ParseError as exc:  # an unreadable listing is a failed fetch of the source
        detail = str(exc).split(exc.url, 1)[-1].lstrip(": ")
        raise FetchError(source.id, exc.url, f"listing unusable ({detail})") from None
    extra = sorted(set(discovered) - set(source.urls))
    if len(extra) > source.max_files:
        raise FetchError(
            source.id, source.urls[0], f"listing names {len(extra)} files, over {source.max_files}"
        )
    fetch_all(extra, len(source.urls) + len(extra), False)
    return fetched


def payload_map(payloads: list[FetchedPayload]) -> dict[str, bytes]:
    """URL -> bytes for a parser (payloads without content are left out)."""
    return {p.url: p.content for p in payloads if p.content is not None}
