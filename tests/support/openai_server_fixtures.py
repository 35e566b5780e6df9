"""Pytest fixtures of the loopback OpenAI-compatible test server (tests/support/openai_server.py).

Import them where needed (or from a conftest.py):

    from tests.support.openai_server_fixtures import openai_server  # noqa: F401

- `openai_server`: one plain server for the session (the default arithmetic model, no key).
  Shared: read its log as a slice (`server.requests[before:]`), never `reset()` it.
- `make_openai_server`: starts servers with options of the test's own (a key, stall_after,
  fail_after, an answer function...), stopped when the test ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.openai_server import OpenAIServer


@pytest.fixture(scope="session")
def openai_server() -> Iterator[OpenAIServer]:
    """A started server with the defaults, on a free loopback port, for the whole session."""
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def make_openai_server() -> Iterator[Callable[..., OpenAIServer]]:
    """`make_openai_server(**options)`: a started `OpenAIServer(**options)`, stopped when the
    test ends."""
    started: list[OpenAIServer] = []

    def make(*args: Any, **options: Any) -> OpenAIServer:
        server = OpenAIServer(*args, **options).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()
