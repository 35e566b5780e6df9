"""HTTP plumbing for `benchpress app`: the standard library's ThreadingHTTPServer.

It routes `/api/...` to `predictor.web.api`, serves the page from the files in `static/` (read
once at start-up into a fixed table, so no request path ever becomes a file path), and sets the
headers that keep a page full of leaderboard strings safe: a strict Content-Security-Policy
(no inline script), nosniff, no framing. Request bodies are capped; when bound to loopback,
requests must name a loopback host (a DNS-rebinding page cannot read the API).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import socket
import sys
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from predictor.snapshots import SnapshotError
from predictor.stores import StoreUnreachable
from predictor.web import api
from predictor.web.catalog import Catalog
from predictor.web.errors import ApiError
from predictor.web.params import MAX_PARAMS, collect

STATIC_DIR = Path(__file__).parent / "static"
MAX_BODY_BYTES = 64 * 1024
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
LOOPBACK_NAMES = frozenset({"localhost", "localhost."})

log = logging.getLogger("benchpress.app")


def load_static(directory: Path = STATIC_DIR) -> dict[str, tuple[bytes, str]]:
    """`/static/<name>` -> (bytes, content type) for the known file types in `directory`."""
    files = {}
    for path in sorted(directory.iterdir()):
        kind = CONTENT_TYPES.get(path.suffix)
        if path.is_file() and kind and not path.name.startswith("."):
            files[f"/static/{path.name}"] = (path.read_bytes(), kind)
    return files


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_name(header: str) -> str:
    """`127.0.0.1:8765` -> `127.0.0.1`; `[::1]:8765` -> `::1`."""
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class AppServer(ThreadingHTTPServer):
    """One catalog of snapshots, the static files, and whether Host headers are checked."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], catalog: Catalog, quiet: bool = False):
        self.catalog = catalog
        self.static = load_static()
        self.quiet = quiet
        self.check_host = is_loopback(address[0])
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else str(host)
        return f"http://{shown}:{port}/"


class Handler(BaseHTTPRequestHandler):
    server: AppServer
    protocol_version = "HTTP/1.1"
    server_version = "benchpress-app"

    def version_string(self) -> str:
        return self.server_version

    # ------------------------------------------------------------------------ responses
    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in {**SECURITY_HEADERS, **extra}.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> None:
        body = json.dumps(payload, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
        headers = {"Cache-Control": "no-store", **(extra or {})}
        self._send(status, body.encode("utf-8"), "application/json; charset=utf-8", headers)

    def _error(self, status: int, message: str, extra: dict[str, str] | None = None) -> None:
        self._json(status, {"error": message}, extra)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The base class's HTML error pages (bad request lines, ...) become JSON too."""
        self.close_connection = True
        with contextlib.suppress(OSError, ValueError):  # the client may be gone already
            self._error(code, message or HTTPStatus(code).phrase)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (base signature)
        if not self.server.quiet:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")

    # ------------------------------------------------------------------------- requests
    def do_GET(self) -> None:
        self._dispatch()

    def do_HEAD(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def _other(self) -> None:
        self.close_connection = True
        self._error(405, f"method {self.command} is not allowed", {"Allow": "GET, HEAD, POST"})

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _other  # noqa: N815 (http.server naming)

    def _dispatch(self) -> None:
        try:
            if self.server.check_host and not self._host_ok():
                self.close_connection = True
                self._error(400, "unexpected Host header: this app answers on loopback names only")
                return
            parts = urlsplit(self.path)
            path = parts.path
            if path.startswith("/api/"):
                self._api(unquote(path), parts.query)
            else:
                self._static(path)
        except Exception:  # never leave a request without an answer
            log.error("%s %s failed:\n%s", self.command, self.path, traceback.format_exc())
            self.close_connection = True
            self._error(500, "internal error (see the server log)")

    def _host_ok(self) -> bool:
        header = self.headers.get("Host")
        return header is not None and is_loopback(_host_name(header.strip()))

    def _static(self, path: str) -> None:
        if self.command == "POST":
            self._discard_body()
            self._error(405, f"{path} accepts GET only", {"Allow": "GET, HEAD"})
            return
        key = "/static/index.html" if path in ("/", "/index.html") else path
        found = self.server.static.get(key)
        if found is None:
            self._error(404, f"not found: {path}")
            return
        body, kind = found
        self._send(200, body, kind, {"Cache-Control": "no-cache"})

    def _api(self, path: str, query_string: str) -> None:
        try:
            pairs: list[tuple[str, object]] = list(
                parse_qsl(query_string, keep_blank_values=True, max_num_fields=MAX_PARAMS)
            )
        except ValueError:
            self._discard_body()
            self._error(400, f"more than {MAX_PARAMS} query parameters")
            return
        try:
            if self.command == "POST":
                pairs += self._body_params()
            payload = api.handle(self.server.catalog, path, collect(pairs), self.command)
        except ApiError as exc:
            extra = {"Allow": api.allowed_methods(path)} if exc.status == 405 else None
            self._error(exc.status, exc.message, extra)
            return
        except StoreUnreachable as exc:
            self._error(502, str(exc))
            return
        except SnapshotError as exc:  # e.g. a file modified after publishing
            self._error(500, str(exc))
            return
        self._json(200, payload)

    # ---------------------------------------------------------------------------- bodies
    def _content_length(self) -> int:
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise ApiError(411, "chunked request bodies are not accepted; send Content-Length")
        raw = self.headers.get("Content-Length")
        if raw is None:
            return 0
        if not raw.strip().isdigit():
            self.close_connection = True
            raise ApiError(400, f"invalid Content-Length {raw!r}")
        length = int(raw)
        if length > MAX_BODY_BYTES:
            self.close_connection = True  # the body stays unread: the connection cannot be reused
            raise ApiError(413, f"request body over {MAX_BODY_BYTES} bytes")
        return length

    def _discard_body(self) -> None:
        try:
            length = self._content_length()
        except ApiError:
            return
        if length:
            self.rfile.read(length)

    def _body_params(self) -> list[tuple[str, object]]:
        """A JSON object or a urlencoded form; its fields join the query parameters."""
        length = self._content_length()
        data = self.rfile.read(length) if length else b""
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if not data:
            return []
        if kind == "application/json":
            try:
                body = json.loads(data.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ApiError(400, f"request body is not valid JSON ({exc})") from None
            if not isinstance(body, dict):
                raise ApiError(400, "request body must be a JSON object")
            return list(body.items())
        if kind == "application/x-www-form-urlencoded":
            try:
                return list(
                    parse_qsl(
                        data.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_PARAMS
                    )
                )
            except (UnicodeDecodeError, ValueError):
                raise ApiError(400, "request body is not a valid form") from None
        raise ApiError(415, "send application/json or application/x-www-form-urlencoded")


def make_server(
    host: str = "127.0.0.1",
    port: int = 0,
    catalog: Catalog | None = None,
    store: str | Path | None = None,
    quiet: bool = False,
) -> AppServer:
    """A bound, not yet serving, app server (port 0: any free port; see `.url`)."""
    return AppServer((host, port), catalog or Catalog(store=store), quiet=quiet)
