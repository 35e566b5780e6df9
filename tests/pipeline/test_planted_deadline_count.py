"""The count a spent deadline reports when a source that discovers URLs (a listing naming
further files, as llm_stats does) stops mid-way through the discovered files: "after N of M
files" names exactly how many of ALL the source's files were fetched (the listing included)
out of all it has, one at a time or several at once, whether the budget was found spent
before a URL or ran out during its download.

`pipelines.fetch.plan.fetch_source` over a stand-in fetcher that answers instantly and spends
the budget at a chosen URL (the real-HTTP version of this, with its timing slack, is in
test_fetch_budget.py)."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from pipelines.fetch.budget import SOURCE, SOURCE_DEADLINE_ENV, DeadlineExceeded, FetchBudget
from pipelines.fetch.plan import fetch_source
from pipelines.fetch.transports import Deadline, FetchedPayload, FetchError
from pipelines.sources import SOURCES

LISTING = "https://example.org/listing.json"
FILES = [f"https://example.org/files/{n:02d}.json" for n in range(1, 13)]  # 12 discovered
TOTAL = 1 + len(FILES)  # 13: the listing and the files it names


def source():
    """A real source's terms with a listing that names 12 further files."""
    return dataclasses.replace(
        SOURCES["llm_stats"],
        id="listed",
        urls=[LISTING],
        discover=lambda listing: json.loads(listing[LISTING]),
        max_files=100,
    )


@dataclasses.dataclass(frozen=True)
class SteppedBudget(FetchBudget):
    """A budget read on a clock the fetcher moves: the deadline passes at the URL the test
    chooses, however slowly a loaded machine gets there."""

    clock: Callable[[], float] = time.monotonic

    def spent(self, clock: Callable[[], float] | None = None) -> Deadline | None:
        return super().spent(self.clock)


class SpendingFetcher:
    """Answers every URL at once, except `stop_at`: there the budget runs out, either while
    its download runs (`during`: a FetchError naming the deadline, as the transport raises
    it) or just after it was fetched (the clock moved past the deadline)."""

    def __init__(self, budget_seconds: float, stop_at: str, during: bool) -> None:
        self.now = 0.0  # the budget's clock, moved by `fetch` only
        self.deadline = Deadline(self.now + budget_seconds, 7.0, SOURCE, SOURCE_DEADLINE_ENV)
        self.budget = SteppedBudget((self.deadline,), clock=lambda: self.now)
        self.stop_at, self.during = stop_at, during
        self.asked: list[str] = []

    def fetch(self, source_id, url, max_bytes, previous, deadline) -> FetchedPayload:
        self.asked.append(url)
        if url == self.stop_at:
            if self.during:
                raise FetchError(source_id, url, self.deadline.text(), self.deadline)
            self.now = self.deadline.at + 0.05  # the download took past the deadline
        content = json.dumps(FILES).encode() if url == LISTING else b"{}"
        return FetchedPayload(source_id, url, "mirror", 200, datetime.now(UTC), content)


def expected(done: int, total: int = TOTAL, known: bool = False) -> str:
    so_far = " known so far" if known else ""
    return (
        f"listed: source deadline of 7s exceeded after {done} of {total} files{so_far} "
        f"({SOURCE_DEADLINE_ENV})"
    )


@pytest.mark.parametrize(
    ("concurrency", "during"),
    [(1, True), (4, True), (1, False)],  # several at once, every URL starts before the clock
    ids=["one-at-a-time-during-download", "four-at-once-during-download", "between-urls"],
)
def test_a_deadline_mid_way_through_discovered_files_counts_every_file_fetched(
    concurrency: int, during: bool
) -> None:
    # the listing and files 01-04 arrive; the budget runs out at 05 (during) or after it
    stop_at = FILES[4]
    fetcher = SpendingFetcher(0.4 if not during else 600.0, stop_at, during)
    with pytest.raises(DeadlineExceeded) as caught:
        fetch_source(fetcher, source(), budget=fetcher.budget, concurrency=concurrency)
    done = 5 if during else 6  # listing + 01-04, or listing + 01-05 (05 arrived in time)
    assert str(caught.value) == expected(done)
    assert (caught.value.done, caught.value.total) == (done, TOTAL)
    assert isinstance(caught.value, FetchError)


def test_concurrent_discovered_files_count_from_the_listing() -> None:
    """With several files at once, the first discovered file failing is `after 1 of 13`: the
    listing is counted, the files after the failing one are not."""
    fetcher = SpendingFetcher(600.0, FILES[0], during=True)
    with pytest.raises(DeadlineExceeded) as caught:
        fetch_source(fetcher, source(), budget=fetcher.budget, concurrency=4)
    assert str(caught.value) == expected(1)
    assert (caught.value.done, caught.value.total) == (1, TOTAL)


def test_a_deadline_on_the_listing_counts_what_is_known_so_far() -> None:
    fetcher = SpendingFetcher(600.0, LISTING, during=True)
    with pytest.raises(DeadlineExceeded) as caught:
        fetch_source(fetcher, source(), budget=fetcher.budget)
    assert str(caught.value) == expected(0, total=1, known=True)
    assert (caught.value.done, caught.value.total) == (0, 1)


def test_the_last_discovered_file_counts_all_but_one() -> None:
    fetcher = SpendingFetcher(600.0, FILES[-1], during=True)
    with pytest.raises(DeadlineExceeded) as caught:
        fetch_source(fetcher, source(), budget=fetcher.budget)
    assert str(caught.value) == expected(TOTAL - 1)
    assert fetcher.asked == [LISTING, *FILES]
