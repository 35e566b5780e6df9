"""Time budgets over a whole source and a whole refresh run, above the per-URL deadline.

A mirror answering each of llm_stats' 336 files just inside the per-URL deadline (120 s) would
hold the refresh, and its lock, for hours. A `FetchBudget` bounds one source's fetch by the
earlier of BENCHPRESS_SOURCE_DEADLINE (counted from when the source starts) and
BENCHPRESS_RUN_DEADLINE (counted from when the run started). A source that spends it fails
like any other failed fetch (`DeadlineExceeded` is a `FetchError`): stale, its last good data
kept, and the run goes on with the next source, which gets a budget of its own (and whatever
is left of the run's).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from pipelines.fetch.transports import Deadline, FetchError

SOURCE, RUN = "source", "run"
SOURCE_DEADLINE_ENV = "BENCHPRESS_SOURCE_DEADLINE"
RUN_DEADLINE_ENV = "BENCHPRESS_RUN_DEADLINE"


@dataclass(frozen=True)
class FetchDeadlines:
    """Time budgets above the per-URL one (BENCHPRESS_FETCH_DEADLINE, 120 s): a mirror that
    answers each of a source's hundreds of files just in time must not hold the refresh (and
    its lock) for hours. A source that spends one fails stale; the run goes on."""

    source: float = 600.0  # one source's fetch, every URL and retry included
    run: float = 1800.0  # every source's fetch in one refresh run, from the run's start


class DeadlineExceeded(FetchError):
    """A source's or the run's budget ran out: how many of the source's files were fetched
    by then (`started=False`: none was even tried), and which setting to raise."""

    def __init__(
        self,
        source: str,
        url: str,
        deadline: Deadline,
        done: int,
        total: int,
        more_to_list: bool = False,
        started: bool = True,
    ):
        if not started:
            when = "before the source started"
        else:
            known = " known so far" if more_to_list else ""
            when = f"after {done} of {total} files{known}"
        reason = f"{deadline.scope} deadline of {deadline.seconds:g}s exceeded {when}"
        RuntimeError.__init__(self, f"{source}: {reason} ({deadline.setting})")
        self.source, self.url, self.reason, self.deadline = source, url, reason, deadline
        self.done, self.total = done, total


@dataclass(frozen=True)
class FetchBudget:
    """The deadlines one source's fetch must keep (`time.monotonic()` clock)."""

    limits: tuple[Deadline, ...] = ()

    @classmethod
    def start(
        cls,
        deadlines: FetchDeadlines,
        run_started_at: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> FetchBudget:
        """The budget of a source starting now. `run_started_at`: the run's start on the wall
        clock (epoch seconds; None outside a run: no run deadline)."""
        now = clock()
        limits = [Deadline(now + deadlines.source, deadlines.source, SOURCE, SOURCE_DEADLINE_ENV)]
        if run_started_at is not None:
            left = deadlines.run - max(0.0, wall() - run_started_at)
            limits.append(Deadline(now + left, deadlines.run, RUN, RUN_DEADLINE_ENV))
        return cls(tuple(limits))

    def first(self) -> Deadline | None:
        """The deadline that comes first (None: no budget)."""
        return min(self.limits, key=lambda d: d.at, default=None)

    def spent(self, clock: Callable[[], float] = time.monotonic) -> Deadline | None:
        """The first deadline if it has passed, else None."""
        first = self.first()
        return first if first is not None and clock() >= first.at else None


def run_started_at(context: object) -> float | None:
    """When the Dagster run of `context` (an asset's execution context) started, in epoch
    seconds: the run deadline counts from there, whoever launched the run (CLI, UI,
    schedule). None when the instance does not know (e.g. a direct invocation)."""
    try:
        run_id = context.run.run_id  # type: ignore[attr-defined]
        record = context.instance.get_run_record_by_id(run_id)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - no run record: no run deadline, never a failed fetch
        return None
    start = getattr(record, "start_time", None) if record is not None else None
    return float(start) if start is not None else None
