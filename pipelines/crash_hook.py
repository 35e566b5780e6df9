"""Test-only crash points: `BENCHPRESS_CRASH_AFTER=<point>` kills the process at that point.

The crash-safety tests (tests/faults/test_crash_safety.py) run `benchpress refresh` with this
variable set, so the process dies by SIGKILL exactly after a stage has written its results and
before Dagster records them, then re-run the refresh and compare with an uninterrupted one.
Points are the asset keys (`<source>_payloads`, `<source>_source_scores`, `normalized_scores`,
`score_matrix`, `factorization`, `published_snapshot`); each asset calls `crash_point(<key>)`
as the last step of its body. Several points may be given, comma-separated.

Unset (always, outside those tests) it does nothing: one environment lookup per asset.
"""

from __future__ import annotations

import os
import signal

CRASH_ENV = "BENCHPRESS_CRASH_AFTER"


def crash_point(name: str) -> None:
    """SIGKILL this process if `name` is one of the points in BENCHPRESS_CRASH_AFTER."""
    wanted = os.environ.get(CRASH_ENV)
    if wanted and name in {part.strip() for part in wanted.split(",")}:
        os.kill(os.getpid(), signal.SIGKILL)
