"""A real HTTP server on loopback serving a directory in the mirror layout (`/<host>/<path>`).

Used instead of the live leaderboards, which this test machine cannot reach: the fetch code runs
unchanged (requests over TCP), only the base URL differs. Supports ETag / If-None-Match so
conditional GET is exercised, per-path fault injection for the fault tests, and per-prefix
delays (a slow mirror that answers every file correctly, just late) for the deadline tests.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from tests.support.quiet_server import QuietThreadingHTTPServer

# A fault takes the handler and the file bytes and fully answers the request itself.
Fault = Callable[[BaseHTTPRequestHandler, bytes], None]


@dataclass
class MirrorServer:
    root: Path
    faults: dict[str, Fault] = field(default_factory=dict)  # "/host/path" -> fault
    # "/host/path-prefix" -> seconds to wait before answering any request under it
    delays: dict[str, float] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, status)
    # the most requests at once in their `delays` wait so far (the client had sent them all
    # before any got its answer: how many it fetches at a time)
    max_in_flight: int = 0
    _in_flight: int = 0
    _count_lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> MirrorServer:
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                # the same mapping as pipelines.fetch.transports.replay_relpath: path kept as
                # sent (percent-escapes included), query quoted into the file name
                path = urlsplit(self.path).path
                for prefix, seconds in list(mirror.delays.items()):
                    if path.startswith(prefix):
                        mirror._wait(seconds)
                        break
                rel = path.lstrip("/")
                query = urlsplit(self.path).query
                if query:
                    rel += "__" + quote(unquote(query), safe="")
                target = (mirror.root / rel).resolve()
                if mirror.root.resolve() not in target.parents or not target.is_file():
                    mirror.requests.append((path, "404"))
                    self.send_error(404)
                    return
                data = target.read_bytes()
                fault = mirror.faults.get(path)
                if fault is not None:
                    mirror.requests.append((path, "fault"))
                    fault(self, data)
                    return
                etag = '"' + hashlib.sha256(data).hexdigest()[:32] + '"'
                if self.headers.get("If-None-Match") == etag:
                    mirror.requests.append((path, "304"))
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                mirror.requests.append((path, "200"))
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("ETag", etag)
                self.end_headers()
                self.wfile.write(data)

        self._server = QuietThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def _wait(self, seconds: float) -> None:
        with self._count_lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            time.sleep(seconds)
        finally:
            with self._count_lock:
                self._in_flight -= 1

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def serve_status(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> Fault:
    def fault(handler: BaseHTTPRequestHandler, _data: bytes) -> None:
        handler.send_response(status)
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return fault


def serve_truncated(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data[: len(data) // 2])
    handler.wfile.flush()
    handler.close_connection = True


def serve_slowly(delay: float) -> Fault:
    def fault(handler: BaseHTTPRequestHandler, data: bytes) -> None:
        time.sleep(delay)
        serve_status(200, data)(handler, data)

    return fault


def serve_trickle(step: bytes = b" " * 10, every: float = 0.05, limit: float = 10.0) -> Fault:
    """200 with an honest Content-Length, then a few bytes at a time: each chunk arrives well
    within the read timeout, so only an overall deadline ends the download."""

    def fault(handler: BaseHTTPRequestHandler, data: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        sent, started = 0, time.monotonic()
        try:
            while sent < len(data) and time.monotonic() - started < limit:
                piece = data[sent : sent + len(step)]
                handler.wfile.write(piece)
                handler.wfile.flush()
                sent += len(piece)
                time.sleep(every)
        except OSError:  # the client gave up: that is the point
            pass
        handler.close_connection = True

    return fault
