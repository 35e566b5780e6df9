"""Shared fixtures: the replay root served by a real loopback HTTP server, temp state dirs."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
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


def pytest_configure(config: pytest.Config) -> None:
    """Tests never touch the developer's own state: without BENCHPRESS_HOME the default is the
    user's data directory, so the whole session gets a throwaway home unless a test sets one."""
    # pytest-xdist workers inherit the controller's environment: each gets a home of its own
    if not os.environ.get("BENCHPRESS_HOME") or os.environ.get(_AUTO_HOME):
        os.environ["BENCHPRESS_HOME"] = tempfile.mkdtemp(prefix="benchpress-test-home-")
        os.environ[_AUTO_HOME] = "1"


_AUTO_HOME = "BENCHPRESS_TEST_HOME_IS_THROWAWAY"
