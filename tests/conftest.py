"""Shared fixtures: the replay root served by a real loopback HTTP server, temp state dirs."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT
from tests.support.mirror_server import MirrorServer

REPO_ROOT = Path(__file__).resolve().parent.parent


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


@pytest.fixture(scope="session")
def refreshed_template(tmp_path_factory: pytest.TempPathFactory, replay_root: Path) -> Refreshed:
    """One full refresh of the recorded payloads over the loopback mirror, made once per test
    worker: a refresh costs about a minute of CPU, and many tests start from its result."""
    from pipelines.run import run_refresh

    home = tmp_path_factory.mktemp("refreshed-template") / "home"
    server = MirrorServer(replay_root).start()
    patch = pytest.MonkeyPatch()
    try:
        patch.setenv("BENCHPRESS_HOME", str(home))
        patch.setenv("BENCHPRESS_HTTP_MIRROR", server.base_url)
        outcome = run_refresh(mode="mirror", home=home)
    finally:
        patch.undo()
        server.stop()
    assert outcome.success and outcome.published, outcome
    return Refreshed(home, outcome)


@pytest.fixture
def refreshed_home(
    refreshed_template: Refreshed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Refreshed:
    """A home of this test's own in the state one mirror refresh of the recorded payloads left
    (a copy of the worker's template: the warehouse, the published snapshot, Dagster's runs)."""
    home = tmp_path / "home"
    shutil.copytree(refreshed_template.home, home, symlinks=True)
    monkeypatch.setenv("BENCHPRESS_HOME", str(home))
    return Refreshed(home, refreshed_template.outcome)


def pytest_configure(config: pytest.Config) -> None:
    """Tests never touch the developer's own state: without BENCHPRESS_HOME the default is the
    user's data directory, so the whole session gets a throwaway home unless a test sets one."""
    # pytest-xdist workers inherit the controller's environment: each gets a home of its own
    if not os.environ.get("BENCHPRESS_HOME") or os.environ.get(_AUTO_HOME):
        os.environ["BENCHPRESS_HOME"] = tempfile.mkdtemp(prefix="benchpress-test-home-")
        os.environ[_AUTO_HOME] = "1"


_AUTO_HOME = "BENCHPRESS_TEST_HOME_IS_THROWAWAY"
