"""Handler threads: the API's work (numpy fold-ins, probe searches, file reads) never runs
on the event loop, and never on more than `threads` threads at once.

A request waits for a free thread at most `wait` seconds (then `Saturated`: a 503) and for its
answer at most `deadline` seconds (then `TooSlow`: a 504). A thread cannot be stopped, so one
that outlives its deadline runs to its end, its result dropped, and keeps its slot until then:
slow handlers can never add threads beyond the bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

T = TypeVar("T")


class Saturated(Exception):
    """Every handler thread stayed busy for as long as the request could wait."""


class TooSlow(Exception):
    """The handler did not finish within the request's deadline."""


class HandlerPool:
    """At most `threads` handlers at once, first come first served."""

    def __init__(self, threads: int):
        self.threads = threads
        self._slots: anyio.CapacityLimiter | None = None  # made in the server's event loop
        self._workers: anyio.CapacityLimiter | None = None

    @property
    def busy(self) -> int:
        """Handlers running now (abandoned ones included)."""
        return 0 if self._slots is None else int(self._slots.borrowed_tokens)

    def _limiters(self) -> tuple[anyio.CapacityLimiter, anyio.CapacityLimiter]:
        if self._slots is None or self._workers is None:
            self._slots = anyio.CapacityLimiter(self.threads)
            self._workers = anyio.CapacityLimiter(self.threads)
        return self._slots, self._workers

    async def run(self, func: Callable[[], T], wait: float, deadline: float) -> T:
        """`func()` in a handler thread; Saturated or TooSlow instead of waiting longer."""
        slots, workers = self._limiters()
        borrower = object()
        acquired = False
        with anyio.move_on_after(wait):
            await slots.acquire_on_behalf_of(borrower)
            acquired = True
        if not acquired:
            raise Saturated
        loop = asyncio.get_running_loop()
        claim = threading.Lock()  # whoever takes it frees the slot: the thread, or we below

        def call() -> T:
            if not claim.acquire(blocking=False):  # given up on before it started
                raise TooSlow
            try:
                return func()
            finally:  # the slot frees when the work ends, not when the request stops waiting
                with contextlib.suppress(RuntimeError):  # the loop closed (server stopped)
                    loop.call_soon_threadsafe(slots.release_on_behalf_of, borrower)

        try:
            with anyio.move_on_after(deadline):
                return await anyio.to_thread.run_sync(call, abandon_on_cancel=True, limiter=workers)
            raise TooSlow
        finally:
            if claim.acquire(blocking=False):  # the thread never started
                slots.release_on_behalf_of(borrower)
