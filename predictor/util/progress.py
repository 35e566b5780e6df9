"""Progress of a long fit: a callback and INFO lines on the `predictor.fit` logger.

A fit of thousands of models takes a minute or more: the factorisation, then the new-model
interval calibration's held-out fits and fold-ins (`predictor.fit.calibration`).
`BenchPress.fit(frame, progress=callback)` calls `callback(phase, done, total)` as each step
ends, in this order:

- ("checks", 1, 1): the frame checked, the matrix and its side information built;
- ("fit", 1, 1): the factorisation;
- ("calibration fits", g, G) and ("calibration fold-ins", g, G) for each held-out group g of
  G (none when the calibration comes from `BENCHPRESS_CALIBRATION_CACHE`, or for a method
  without a predictive distribution);
- ("snapshot", 1, 1): the fitted state exported;
- ("predictor", 1, 1): the `BenchPress` ready.

Each step is also logged at INFO with its seconds and the time so far
(`logging.basicConfig(level=logging.INFO)` shows them). An exception raised by the callback
stops the fit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

Progress = Callable[[str, int, int], None]

LOGGER = logging.getLogger("predictor.fit")


def no_progress(phase: str, done: int, total: int) -> None:
    """A `Progress` that reports nothing."""
    del phase, done, total


class FitProgress:
    """A `Progress` that logs each step with its duration, then calls `callback`."""

    def __init__(self, callback: Progress | None = None) -> None:
        if callback is not None and not callable(callback):
            kind = type(callback).__name__
            raise TypeError(f"progress must be a callable (phase, done, total), got {kind}")
        self.callback = callback
        self.start = self.last = time.perf_counter()

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        step, so_far = now - self.last, now - self.start
        LOGGER.info("%s %d/%d in %.1f s (%.1f s so far)", phase, done, total, step, so_far)
        self.last = now
        if self.callback is not None:
            self.callback(phase, done, total)
