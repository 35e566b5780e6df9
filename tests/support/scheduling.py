"""`make test` (`pytest -n auto --dist loadfile`): the longest test files start first, and files
that share a session fixture which cannot be shared between workers run on the same worker.

pytest-xdist hands out whole files, those with the most tests first. The longest files have few
tests (each stands on refreshes of minutes against real servers), so they would start late and
the run would end waiting for one of them while the other workers have nothing left to do. A
session fixture is made once per worker: when its files land on two workers, it is made twice.
Measure with `pytest -q --durations=30 FILE` when a file grows long."""

from __future__ import annotations

from typing import Any

import pytest

LONG_FILES = (  # longest first
    "tests/team/test_ducklake_warehouse.py",  # two homes refreshing one lake, a lost catalog
    "tests/team/test_team_refresh.py",  # the team profile's refreshes on PostgreSQL
)
TOGETHER = (  # files using one session fixture that holds live processes
    # `uninterrupted` (tests/faults/conftest.py): a refresh, a rival refresh, `benchpress app`
    ("tests/faults/test_crash_safety.py", "tests/faults/test_concurrency.py"),
)


def long_files_first(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's file scheduling with LONG_FILES at the head of its queue and each group
    of TOGETHER given to one worker."""
    from xdist.scheduler import LoadFileScheduling

    partners = {name: group for group in TOGETHER for name in group}

    class LongFilesFirst(LoadFileScheduling):
        def _assign_work_unit(self, node: Any) -> None:
            for scope in reversed(LONG_FILES):
                if scope in self.workqueue:
                    self.workqueue.move_to_end(scope, last=False)
            scope = next(iter(self.workqueue))
            super()._assign_work_unit(node)
            for partner in partners.get(scope, ()):
                if partner in self.workqueue:
                    self.workqueue.move_to_end(partner, last=False)
                    super()._assign_work_unit(node)

    return LongFilesFirst(config, log)
