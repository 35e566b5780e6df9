"""Shared fixtures: the replay root served by a real loopback HTTP server, temp state dirs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT
from tests.support.mirror_server import MirrorServer
from tests.support.shared_home import (
    CALIBRATION_CACHE,
    CLI_REFRESH,
    CliRefreshed,
    built_once,
    clean_environment,
    copy_home,
    subprocess_environment,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent / "benchpress"


@pytest.fixture(scope="session")
def replay_root() -> Path:
    return DEFAULT_REPLAY_ROOT


@pytest.fixture
def mirror_server(replay_root: Path) -> Iterator[MirrorServer]:
    """The bundled recorded payloads served over HTTP on 127.0.0.1 in the mirror layout."""
    server = MirrorServer(replay_root).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def benchpress_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("BENCHPRESS_HOME", str(home))
    return home


@dataclass(frozen=True)
class Refreshed:
    home: Path
    outcome: object  # pipelines.run.RefreshOutcome of the first refresh


def _mirror_refresh(folder: Path) -> object:
    from pipelines.run import run_refresh

    home = folder / "home"
    server = MirrorServer(DEFAULT_REPLAY_ROOT).start()
    try:
        with clean_environment(BENCHPRESS_HOME=str(home), BENCHPRESS_HTTP_MIRROR=server.base_url):
            return run_refresh(mode="mirror", home=home)
    finally:
        server.stop()


@pytest.fixture(scope="session")
def refreshed_template(tmp_path_factory: pytest.TempPathFactory) -> Refreshed:
    """One full refresh of the recorded payloads over the loopback mirror, made once per test
    session (whichever worker asks first): a refresh costs about a minute of CPU, and many
    tests start from its result. Never written: tests take `refreshed_home`."""
    folder, outcome = built_once(tmp_path_factory, "mirror-refresh", _mirror_refresh)
    assert outcome.success and outcome.published, outcome
    return Refreshed(folder / "home", outcome)


@pytest.fixture
def refreshed_home(
    refreshed_template: Refreshed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Refreshed:
    """A home of this test's own in the state one mirror refresh of the recorded payloads left
    (a copy of the session's template: the warehouse, the published snapshot, Dagster's runs)."""
    home = copy_home(refreshed_template.home, tmp_path / "home")
    monkeypatch.setenv("BENCHPRESS_HOME", str(home))
    return Refreshed(home, refreshed_template.outcome)


def _cli_refresh(folder: Path) -> subprocess.CompletedProcess[str]:
    home = folder / "home"
    return subprocess.run(
        [str(BIN), *CLI_REFRESH],
        capture_output=True,
        text=True,
        env=subprocess_environment(BENCHPRESS_HOME=str(home)),
        timeout=900,
        check=False,
    )


@pytest.fixture(scope="session")
def cli_refreshed_template(tmp_path_factory: pytest.TempPathFactory) -> CliRefreshed:
    """`benchpress refresh --mode replay --progress` as a user runs it (the installed script in
    a process of its own, the embedded default, the full fit) in a new home, once per test
    session. Tests assert on its exit code and output themselves; never written: tests that
    write take `cli_refreshed_home`."""
    folder, done = built_once(tmp_path_factory, "cli-refresh", _cli_refresh)
    return CliRefreshed(folder / "home", done)


@pytest.fixture
def cli_refreshed_home(cli_refreshed_template: CliRefreshed, tmp_path: Path) -> CliRefreshed:
    """A copy of the session's `benchpress refresh` home for this test to write."""
    home = copy_home(cli_refreshed_template.home, tmp_path / "home")
    return CliRefreshed(home, cli_refreshed_template.done)


def pytest_configure(config: pytest.Config) -> None:
    """Tests never touch the developer's own state: without BENCHPRESS_HOME the default is the
    user's data directory, so the whole session gets a throwaway home unless a test sets one."""
    # pytest-xdist workers inherit the controller's environment: each gets a home of its own
    if not os.environ.get("BENCHPRESS_HOME") or os.environ.get(_AUTO_HOME):
        os.environ["BENCHPRESS_HOME"] = tempfile.mkdtemp(prefix="benchpress-test-home-")
        os.environ[_AUTO_HOME] = "1"
        _CREATED.append(Path(os.environ["BENCHPRESS_HOME"]))
    # One BLAS thread per process: `make test` runs a worker per core, and OpenBLAS threads of
    # two workers that wait on each other spin (a refresh took 2.6x the CPU time).
    # Set before NumPy loads in any worker or subprocess; a value already set is kept.
    for variable in _BLAS_THREADS:
        os.environ.setdefault(variable, "1")
    # Many tests refresh the same recorded payloads in homes of their own: each distinct fit's
    # new-model calibration (12 of its 13 fits) is computed once for the whole session, by
    # every worker and subprocess (`predictor.fit.calibration_cache`; kept by `clean_environment`)
    if not os.environ.get(CALIBRATION_CACHE):
        os.environ[CALIBRATION_CACHE] = tempfile.mkdtemp(prefix="benchpress-test-calibrations-")
        _CREATED.append(Path(os.environ[CALIBRATION_CACHE]))


def pytest_unconfigure(config: pytest.Config) -> None:
    """The throwaway folders this process made (its home; the controller's calibration cache,
    which the workers share and are done with by now) go when it ends."""
    while _CREATED:
        shutil.rmtree(_CREATED.pop(), ignore_errors=True)


_CREATED: list[Path] = []  # temporary folders made by this process's `pytest_configure`


_AUTO_HOME = "BENCHPRESS_TEST_HOME_IS_THROWAWAY"
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """`--dist loadfile` (make test) starts the longest files first (tests/support/scheduling)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from tests.support.scheduling import long_files_first

    return long_files_first(config, log)
