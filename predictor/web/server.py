"""HTTP plumbing for `benchpress app`: the standard library's ThreadingHTTPServer.

It routes `/api/...` to `predictor.web.api`, serves the page from the files in `static/` (read
once at start-up into a fixed table, so no request path ever becomes a file path), and sets the
headers that keep a page full of leaderboard strings safe: a strict Content-Security-Policy
(no inline script), nosniff, no framing. Request bodies are capped and always read (whatever the
method), so a body is never taken for the next request on a keep-alive connection; when bound to
loopback, requests must name a loopback host (a DNS-rebinding page cannot read the API), and
the API refuses requests another site's page makes (an `<img>` or a form aimed at it cannot
make this machine search probes). Idle connections time out, and the log escapes control
characters, so a request line cannot rewrite the terminal that shows it.

One endpoint takes a larger body: `POST /api/results` (a results file dropped on the page) with
the file's raw bytes as `application/octet-stream` (a type another site's page cannot send
without a preflight this server refuses), up to `uploads.MAX_UPLOAD_BYTES`, and only from this
app's own page or a plain client; any other request keeps the small cap.
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
from predictor.web.uploads import MAX_UPLOAD_BYTES

STATIC_DIR = Path(__file__).parent / "static"
MAX_BODY_BYTES = 64 * 1024
UPLOAD_TYPE = "application/octet-stream"
REQUEST_TIMEOUT_SECONDS = 30.0  # an idle or stalled connection frees its thread after this
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
# Sec-Fetch-Site values the API answers: the page itself, or no page (typed URL, bookmark); a
# request without the header (curl, scripts, older browsers) is judged by its Origin alone
FETCH_SITES = frozenset({"same-origin", "none"})
# as http.server's own log: C0 and C1 control characters (and the backslash) as \x.. escapes
CONTROL_CHARS = str.maketrans(
    {**{c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))}, ord("\\"): "\\\\"}
)

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


def printable(text: str) -> str:
    """A request line holding ESC [2J is logged as `\\x1b[2J`, not obeyed by the terminal."""
    return text.translate(CONTROL_CHARS)


def same_origin(origin: str, host: str | None) -> bool:
    """`Origin: http://127.0.0.1:8765` names this server (`Host: 127.0.0.1:8765`)."""
    if host is None:
        return False
    try:
        seen, served = urlsplit(origin.strip()), urlsplit(f"//{host.strip()}")
        default = 443 if seen.scheme == "https" else 80
        ours = (served.hostname, served.port or default)
        return seen.scheme in ("http", "https") and (seen.hostname, seen.port or default) == ours
    except ValueError:  # a port that is not a number
        return False


class DuplicateKey(ValueError):
    """A key given twice in one JSON object of a request body."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different (json keeps the last of a repeated key)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise DuplicateKey(key)
        found[key] = value
    return found


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
    timeout = REQUEST_TIMEOUT_SECONDS  # an idle keep-alive connection does not hold a thread

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
            sys.stderr.write(f"{self.address_string()} {printable(format % args)}\n")

    # ------------------------------------------------------------------------- requests
    def do_GET(self) -> None:
        self._dispatch()

    def do_HEAD(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def _other(self) -> None:
        self.close_connection = True
        with contextlib.suppress(ApiError):
            self._read_body()  # so that closing does not reset the connection under the answer
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
            body = self._read_body(self._upload(path))
            if not path.startswith("/api/"):
                self._static(path)
            elif self._cross_site():
                self._error(403, "the API answers this app's own page only, not other sites")
            else:
                self._api(unquote(path), parts.query, body)
        except ApiError as exc:  # the body could not be read
            self._error(exc.status, exc.message, exc.headers)
        except (TimeoutError, ConnectionError):  # the client stalled or left mid-request
            self.close_connection = True
        except Exception:  # never leave a request without an answer
            log.error(
                "%s %s failed:\n%s",
                printable(self.command),
                printable(self.path),
                traceback.format_exc(),
            )
            self.close_connection = True
            self._error(500, "internal error (see the server log)")

    def _upload(self, path: str) -> bool:
        """A results file posted by this app's page (or a plain client): the larger cap."""
        return (
            self.command == "POST" and unquote(path) == api.UPLOAD_PATH and not self._cross_site()
        )

    def _host_ok(self) -> bool:
        header = self.headers.get("Host")
        return header is not None and is_loopback(_host_name(header.strip()))

    def _cross_site(self) -> bool:
        """A request made by another site's page (`<img src>`, a form, fetch): by the browser's
        Sec-Fetch-Site, else by an Origin that is not this server."""
        site = self.headers.get("Sec-Fetch-Site")
        if site is not None and site.strip().lower() not in FETCH_SITES:
            return True
        origin = self.headers.get("Origin")
        return origin is not None and not same_origin(origin, self.headers.get("Host"))

    def _static(self, path: str) -> None:
        if self.command == "POST":
            self._error(405, f"{path} accepts GET only", {"Allow": "GET, HEAD"})
            return
        key = "/static/index.html" if path in ("/", "/index.html") else path
        found = self.server.static.get(key)
        if found is None:
            self._error(404, f"not found: {path}")
            return
        body, kind = found
        self._send(200, body, kind, {"Cache-Control": "no-cache"})

    def _api(self, path: str, query_string: str, body: bytes) -> None:
        try:
            pairs: list[tuple[str, object]] = list(
                parse_qsl(query_string, keep_blank_values=True, max_num_fields=MAX_PARAMS)
            )
        except ValueError:
            self._error(400, f"more than {MAX_PARAMS} query parameters")
            return
        try:
            data = b""
            if self.command == "POST" and path == api.UPLOAD_PATH:
                data = self._upload_body(body)
            elif self.command == "POST" and "POST" in api.allowed_methods(path):
                pairs += self._body_params(body)  # elsewhere a 405 says more than a 415
            payload = api.handle(self.server.catalog, path, collect(pairs), self.command, data)
        except ApiError as exc:
            extra = dict(exc.headers or {})
            if exc.status == 405:
                extra["Allow"] = api.allowed_methods(path)
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
    def _content_length(self, upload: bool = False) -> int:
        """The body's length: one Content-Length of ASCII digits, at most MAX_BODY_BYTES
        (MAX_UPLOAD_BYTES for an `upload`).

        Anything else leaves the body's end unknown, so the connection is closed after the
        answer rather than reading the rest of the body as a request."""
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise ApiError(411, "chunked request bodies are not accepted; send Content-Length")
        given = self.headers.get_all("Content-Length") or []
        if not given:
            return 0
        if len(given) > 1:
            self.close_connection = True
            raise ApiError(400, "invalid Content-Length: the header is given more than once")
        raw = given[0].strip()
        if not (raw.isascii() and raw.isdigit()):  # isdigit alone accepts '²' and '٣'
            self.close_connection = True
            raise ApiError(400, f"invalid Content-Length {given[0][:40]!r}")
        digits = raw.lstrip("0")
        cap = MAX_UPLOAD_BYTES if upload else MAX_BODY_BYTES
        if len(digits) > len(str(cap)) or int(digits or "0") > cap:
            self.close_connection = True  # the body stays unread: the connection cannot be reused
            if upload:
                raise ApiError(
                    413,
                    f"results file over {cap // 2**20} MiB ({cap} bytes), the most the page "
                    "reads; use `benchpress predict --from FILE` for larger files",
                )
            raise ApiError(413, f"request body over {cap} bytes")
        return int(digits or "0")

    def _read_body(self, upload: bool = False) -> bytes:
        """The body, whatever the method: one left unread (a GET with a body) would be parsed
        as the next request on a keep-alive connection."""
        length = self._content_length(upload)
        data = self.rfile.read(length) if length else b""
        if len(data) < length:
            self.close_connection = True
            raise ApiError(400, "request body is shorter than its Content-Length")
        return data

    def _upload_body(self, data: bytes) -> bytes:
        """A results file's bytes, sent as they are (not a form: a file is not parameters)."""
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != UPLOAD_TYPE:
            raise ApiError(
                415, f"send the results file's bytes as {UPLOAD_TYPE} (the name in ?name=)"
            )
        return data

    def _body_params(self, data: bytes) -> list[tuple[str, object]]:
        """A JSON object or a urlencoded form; its fields join the query parameters."""
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if not data:
            return []
        if kind == "application/json":
            return json_params(data)
        if kind == "application/x-www-form-urlencoded":
            return form_params(data)
        raise ApiError(415, "send application/json or application/x-www-form-urlencoded")


def json_params(data: bytes) -> list[tuple[str, object]]:
    """A JSON object's fields. Whatever the bytes, a bad body is a 400: nesting too deep for
    the parser, an integer too long to convert and a repeated key included."""
    try:
        body = json.loads(data.decode("utf-8"), object_pairs_hook=unique_object)
    except DuplicateKey as exc:
        raise ApiError(400, f"request body: key {exc.key!r} is given more than once") from None
    except RecursionError:
        raise ApiError(400, "request body is not valid JSON (nested too deeply)") from None
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError, int digit limit
        raise ApiError(400, f"request body is not valid JSON ({exc})") from None
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    return list(body.items())


def form_params(data: bytes) -> list[tuple[str, object]]:
    """A urlencoded form's fields, as many as a query string may carry."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "request body is not a valid form (not UTF-8)") from None
    try:
        return list(parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_PARAMS))
    except ValueError:
        raise ApiError(400, f"more than {MAX_PARAMS} form parameters") from None


def make_server(
    host: str = "127.0.0.1",
    port: int = 0,
    catalog: Catalog | None = None,
    store: str | Path | None = None,
    quiet: bool = False,
) -> AppServer:
    """A bound, not yet serving, app server (port 0: any free port; see `.url`)."""
    return AppServer((host, port), catalog or Catalog(store=store), quiet=quiet)
