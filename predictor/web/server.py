"""Serving `benchpress app`: the ASGI app (`predictor.web.asgi`) on uvicorn.

`make_server` binds the listening socket at once (so a port in use is an error before anything
is printed, and port 0 has its number) with a real backlog (`Limits.backlog`, 2048: a burst of
clients waits in the kernel's queue instead of retrying dropped connections for seconds), and
configures uvicorn for a machine's own page: the h11 protocol with header and flush deadlines,
checked heads and a connection cap (`predictor.web.protocol`; the body and answer deadline is
the app's), keep-alive `Limits.keep_alive_seconds`,
h11's head size limit above the app's own, no lifespan, no websockets, the asyncio loop, and
uvicorn's logging left alone (the app logs its requests itself, escaped). uvicorn's own
`limit_concurrency` is not used: it counts idle and half-sent connections alike and answers a
plain-text 503 only once a whole head has arrived; the protocol's cap answers JSON at once and
makes room by closing the slowest waiting connection.

starlette and uvicorn come with the `web` extra (and the `pipeline` and `dev` ones); without
them `make_server` says how to install them.
"""

from __future__ import annotations

import socket
import threading
from functools import partial
from pathlib import Path
from typing import Any

from predictor.util.extras import MissingExtraError
from predictor.web.catalog import Catalog
from predictor.web.guards import is_loopback
from predictor.web.limits import DEFAULT_LIMITS, Limits
from predictor.web.logs import RequestLog

WEB_EXTRA = "pip install 'benchpress-llm[web]'"


class WebStackMissing(MissingExtraError):
    """starlette or uvicorn is not installed (the CLI prints it as one line, exit 2)."""


def require_web_stack() -> None:
    """Import what serving needs, or say in one line how to install it."""
    try:
        # deferred: the optional `web` extra; a missing one is said in one line
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401  # deferred: the optional `web` extra
    except ImportError as exc:
        raise WebStackMissing(
            f"the web page needs the `web` extra ({exc.name or 'starlette/uvicorn'} is "
            f"missing): {WEB_EXTRA}"
        ) from None


def listening_socket(host: str, port: int, backlog: int) -> socket.socket:
    """A bound TCP socket listening with `backlog` (SO_REUSEADDR; IPv6 only for an IPv6 host).
    A bind error is the OSError of bind itself (`Address already in use`)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    return sock


class AppServer:
    """One catalog of snapshots served on one socket until `shutdown`."""

    def __init__(
        self,
        address: tuple[str, int],
        catalog: Catalog,
        quiet: bool = False,
        limits: Limits = DEFAULT_LIMITS,
    ):
        require_web_stack()
        import uvicorn  # deferred: the optional `web` extra, checked just above

        # deferred: the ASGI app needs starlette (the `web` extra)
        from predictor.web.asgi import create_app
        from predictor.web.protocol import AppProtocol  # deferred: needs uvicorn

        self.catalog = catalog
        self.limits = limits
        self.check_host = is_loopback(address[0])
        requests = RequestLog(quiet)
        self.app = create_app(catalog, limits, check_host=self.check_host, requests=requests)
        self.socket = listening_socket(address[0], address[1], limits.backlog)
        self.server_address: tuple[Any, ...] = self.socket.getsockname()
        config = uvicorn.Config(
            self.app,
            http=partial(AppProtocol, limits=limits, requests=requests),  # type: ignore[arg-type]
            loop="asyncio",
            ws="none",
            lifespan="off",
            interface="asgi3",
            log_config=None,
            access_log=False,
            server_header=False,
            proxy_headers=False,
            backlog=limits.backlog,
            timeout_keep_alive=limits.keep_alive_seconds,  # type: ignore[arg-type]
            timeout_graceful_shutdown=limits.shutdown_seconds,  # type: ignore[arg-type]
            h11_max_incomplete_event_size=limits.max_head_bytes + 1,
        )
        self._server = uvicorn.Server(config)
        self._stopped = threading.Event()
        self._serving = False

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else str(host)
        return f"http://{shown}:{port}/"

    @property
    def busy_handlers(self) -> int:
        """Handler threads at work now (for tests and benchmarks)."""
        return int(self.app.state.endpoints.pool.busy)

    def serve_forever(self) -> None:
        """Serve until `shutdown` (from another thread) or, in the main thread, Ctrl-C or
        SIGTERM (uvicorn stops gracefully, then the signal takes its usual effect)."""
        self._serving = True
        try:
            self._server.run(sockets=[self.socket])
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop serving and wait until `serve_forever` has returned."""
        self._server.should_exit = True
        if self._serving:
            self._stopped.wait()

    def server_close(self) -> None:
        self.socket.close()


def make_server(
    host: str = "127.0.0.1",
    port: int = 0,
    catalog: Catalog | None = None,
    store: str | Path | None = None,
    quiet: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> AppServer:
    """A bound, not yet serving, app server (port 0: any free port; see `.url`)."""
    require_web_stack()
    return AppServer((host, port), catalog or Catalog(store=store), quiet=quiet, limits=limits)
