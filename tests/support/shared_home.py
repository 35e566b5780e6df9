"""Homes built once per test session and shared by every pytest-xdist worker.

`make test` keeps each test file on one worker (`--dist loadfile`), so a session fixture is
built once per worker, and a full refresh costs about a minute of CPU. `built_once` builds
under a file lock in the temp directory the workers share: the first worker to ask builds, the
others wait for it and reuse the result. Nobody writes a shared home: tests take their own copy
(`copy_home`), so one test's writes never reach another test's assertions.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")
CLI_REFRESH = ("refresh", "--mode", "replay", "--progress")  # tests/conftest.py


@dataclass(frozen=True)
class CliRefreshed:
    """A home after `benchpress refresh` (tests/conftest.py: `cli_refreshed_template`)."""

    home: Path
    done: subprocess.CompletedProcess[str]  # what the refresh printed and returned


def session_root(factory: pytest.TempPathFactory) -> Path:
    """The temp directory of this session that every worker sees (each worker's own basetemp
    is a folder in the controller's)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(
    factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]
) -> tuple[Path, T]:
    """(folder, value): `build(folder)` run once per session for `name`; its value is pickled
    so that the other workers get the same one. A build that raised is retried by the next
    caller (in an empty folder), so each caller reports the failure itself."""
    root = session_root(factory)
    folder = root / f"shared-{name}"
    done = folder / "built.pickle"
    with (root / f"shared-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not done.is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            value = build(folder)
            done.write_bytes(pickle.dumps(value))
        return folder, pickle.loads(done.read_bytes())


def copy_home(template: Path, target: Path) -> Path:
    """A copy of a shared home that a test may write (warehouse, snapshots, Dagster's runs)."""
    shutil.copytree(template, target, symlinks=True)
    return target


# the suite's own settings (tests/conftest.py), kept when a test clears the machine's
CALIBRATION_CACHE = "BENCHPRESS_CALIBRATION_CACHE"  # predictor.fit.calibration_cache.CACHE_ENV
SUITE_SETTINGS = frozenset({CALIBRATION_CACHE})


def is_machine_setting(name: str) -> bool:
    """A `BENCHPRESS_*` variable a test environment starts without (not the suite's own)."""
    return name.startswith("BENCHPRESS_") and name not in SUITE_SETTINGS


@contextmanager
def clean_environment(**settings: str) -> Iterator[None]:
    """os.environ without any BENCHPRESS_* setting but `settings`, for an in-process build that
    must not depend on the fixtures of whichever test asked for it first."""
    patch = pytest.MonkeyPatch()
    try:
        for key in [k for k in os.environ if is_machine_setting(k)]:
            patch.delenv(key)
        for key, value in settings.items():
            patch.setenv(key, value)
        yield
    finally:
        patch.undo()


def subprocess_environment(**settings: str) -> dict[str, str]:
    """The environment of a `benchpress` subprocess: this one without BENCHPRESS_* settings,
    plus `settings`."""
    env = {k: v for k, v in os.environ.items() if not is_machine_setting(k)}
    return {**env, **settings}
