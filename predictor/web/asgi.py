"""The ASGI app behind `benchpress app` (Starlette): the page, its static files and `/api/...`.

The page comes from the files in `static/`, read once at start-up into a fixed table, so no
request path ever becomes a file path. Every answer carries the headers of
`predictor.web.answers` (a strict Content-Security-Policy, nosniff, no framing). When bound to
loopback, requests must name a loopback host (a DNS-rebinding page cannot read the API), and
the API refuses requests another site's page makes (an `<img>` or a form aimed at it cannot
make this machine search probes).

API requests run in a bounded pool of handler threads (`predictor.web.workers`): a numpy
fold-in never blocks the event loop, a request that waits too long for a thread gets 503, one
whose answer takes longer than `Limits.request_seconds` gets 504, and a body that does not
arrive in that time 408. Bodies are always read in full before the answer; their size was
checked with the head (`predictor.web.heads`). An upload's body (`POST /api/results`) is first
counted against the bytes all uploads may hold at once, from its Content-Length and while it
streams in, and its file is parsed in a worker process (`predictor.web.uploads`).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from predictor.web.answers import JSON_HEADERS, JSON_TYPE, SECURITY_HEADERS, error_bytes
from predictor.web.bodies import is_upload, media_type
from predictor.web.catalog import Catalog
from predictor.web.dispatch import ApiRequest, respond
from predictor.web.errors import ApiError
from predictor.web.guards import BAD_HOST, CROSS_SITE, cross_site, loopback_host
from predictor.web.limits import DEFAULT_LIMITS, Limits
from predictor.web.logs import RequestLog
from predictor.web.uploads import ByteClaim, UploadService
from predictor.web.workers import HandlerPool, Saturated, TooSlow

STATIC_DIR = Path(__file__).parent / "static"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".csv": "text/csv; charset=utf-8",  # the example results file the page offers
}
METHODS = ("GET", "HEAD", "POST")
RETRY_AFTER_SECONDS = 2
_SECURITY = [(name.lower().encode(), value.encode()) for name, value in SECURITY_HEADERS.items()]


def load_static(directory: Path = STATIC_DIR) -> dict[str, tuple[bytes, str]]:
    """`/static/<name>` -> (bytes, content type) for the known file types in `directory`."""
    files = {}
    for path in sorted(directory.iterdir()):
        kind = CONTENT_TYPES.get(path.suffix)
        if path.is_file() and kind and not path.name.startswith("."):
            files[f"/static/{path.name}"] = (path.read_bytes(), kind)
    return files


def json_error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(
        error_bytes(message), status, {**JSON_HEADERS, **(headers or {})}, media_type=JSON_TYPE
    )


# ------------------------------------------------------------------------------ middleware
class Gate:
    """What no route should see: a Host that is not loopback (when bound to loopback), and
    methods other than GET, HEAD and POST."""

    def __init__(self, app: ASGIApp, check_host: bool):
        self.app = app
        self.check_host = check_host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.check_host and not loopback_host(Headers(scope=scope).get("host")):
            refusal = json_error(400, BAD_HOST, {"Connection": "close"})
        elif scope["method"] not in METHODS:
            allow = {"Allow": ", ".join(METHODS)}
            refusal = json_error(405, f"method {scope['method']} is not allowed", allow)
        else:
            await self.app(scope, receive, send)
            return
        await refusal(scope, receive, send)


class SecureHeaders:
    """The security headers on every answer, and header names in their usual spelling
    (`Content-Type`, as curl users and older scripts expect; Starlette writes lower case)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                given = list(message.get("headers", []))
                names = {name.lower() for name, _ in given}
                given += [(name, value) for name, value in _SECURITY if name not in names]
                message["headers"] = [(name.title(), value) for name, value in given]
            await send(message)

        await self.app(scope, receive, secured)


class AccessLog:
    """One `RequestLog` line per answer: client, request line, status, body bytes."""

    def __init__(self, app: ASGIApp, requests: RequestLog):
        self.app = app
        self.requests = requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.requests.quiet:
            await self.app(scope, receive, send)
            return
        seen: dict[str, Any] = {"status": 500, "size": 0}

        async def logged(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
            elif message["type"] == "http.response.body":
                seen["size"] += len(message.get("body", b""))
                if not message.get("more_body", False):
                    self.requests.answered(
                        _client(scope), _line(scope), seen["status"], seen["size"]
                    )
            await send(message)

        await self.app(scope, receive, logged)


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "-"


def _line(scope: Scope) -> str:
    """The request line as sent (the protocol let only visible ASCII through)."""
    target = scope["raw_path"].decode("latin-1")
    if scope["query_string"]:
        target += "?" + scope["query_string"].decode("latin-1")
    return f"{scope['method']} {target} HTTP/{scope['http_version']}"


# ----------------------------------------------------------------------------------- routes
class Endpoints:
    """The page and the API over one catalog."""

    def __init__(self, catalog: Catalog, limits: Limits):
        self.catalog = catalog
        self.limits = limits
        self.static = load_static()
        self.pool = HandlerPool(limits.worker_threads)
        self.uploads = UploadService(limits)  # starts the file-parsing processes

    async def _body(self, request: Request, claim: ByteClaim | None = None) -> bytes | Response:
        """The whole body (its length is checked already), or a 408 if it stalls; an upload's
        bytes count against `claim`, grown if more arrive than announced (503 past it)."""
        seconds = self.limits.request_seconds
        with anyio.move_on_after(seconds):
            try:
                if claim is None:
                    return await request.body()
                chunks, size = [], 0
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > claim.size and not claim.grow(size - claim.size):
                        raise self.uploads.over_budget()
                    chunks.append(chunk)
                return b"".join(chunks)
            except ClientDisconnect:  # gone: this answer is never sent
                return json_error(400, "the client closed the connection mid-body")
            except ApiError as exc:
                return json_error(exc.status, exc.message, exc.headers)
        return json_error(
            408, f"the request body did not arrive within {seconds:g} s", {"Connection": "close"}
        )

    async def page(self, request: Request) -> Response:
        """`/`, `/index.html` and `/static/<name>` from the table; everything else a 404."""
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        path = request.scope["path"]
        if request.method == "POST":
            return json_error(405, f"{path} accepts GET only", {"Allow": "GET, HEAD"})
        found = self.static.get("/static/index.html" if path in ("/", "/index.html") else path)
        if found is None:
            return json_error(404, f"not found: {path}")
        content, kind = found
        return Response(content, headers={"Cache-Control": "no-cache"}, media_type=kind)

    async def api(self, request: Request) -> Response:
        """`/api/...`: the request's parts to `dispatch.respond`, in a handler thread."""
        started = anyio.current_time()
        headers = request.headers
        foreign = cross_site(
            headers.get("sec-fetch-site"), headers.get("origin"), headers.get("host")
        )
        claim = None
        if is_upload(request.method, request.scope["path"], foreign):
            try:  # counted before a byte is read (the head checked its Content-Length)
                claim = self.uploads.claim(int(headers.get("content-length") or 0))
            except ApiError as exc:
                return json_error(exc.status, exc.message, exc.headers)
        try:
            return await self._answer(request, started, foreign, claim)
        finally:
            if claim is not None:
                claim.release_unless_adopted()

    async def _answer(
        self, request: Request, started: float, foreign: bool, claim: ByteClaim | None
    ) -> Response:
        body = await self._body(request, claim)
        if isinstance(body, Response):
            return body
        headers = request.headers
        if foreign:
            return json_error(403, CROSS_SITE)
        call = ApiRequest(
            method=request.method,
            path=request.scope["path"],
            query=request.scope["query_string"].decode("latin-1"),
            media_type=media_type(headers.get("content-type")),
            body=body,
        )
        limits = self.limits
        left = max(limits.request_seconds - (anyio.current_time() - started), 0.001)
        try:
            work = partial(respond, self.catalog, call)
            answer = await self.pool.run(
                partial(self.uploads.serve, claim, work), min(limits.queue_seconds, left), left
            )
        except Saturated:
            return json_error(
                503,
                f"the server is busy: all {limits.worker_threads} handler threads stayed taken "
                f"for {limits.queue_seconds:g} s; try again in a few seconds",
                {"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
        except TooSlow:
            return json_error(
                504, f"no answer within {limits.request_seconds:g} s, the limit for one request"
            )
        return Response(answer.body, answer.status, answer.headers, media_type=JSON_TYPE)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (a 404 for a target that is not a path, such as `*`) as JSON."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 404:
        return json_error(404, f"not found: {request.scope['path']}")
    return json_error(status, str(getattr(exc, "detail", "")) or "internal error")


def create_app(
    catalog: Catalog,
    limits: Limits = DEFAULT_LIMITS,
    check_host: bool = True,
    requests: RequestLog | None = None,
) -> Starlette:
    """The app; `check_host`: answer loopback Host names only (when bound to loopback)."""
    endpoints = Endpoints(catalog, limits)
    app = Starlette(
        routes=[
            Route("/api/{rest:path}", endpoints.api, methods=list(METHODS)),
            Route("/{rest:path}", endpoints.page, methods=list(METHODS)),
        ],
        middleware=[
            Middleware(AccessLog, requests=requests or RequestLog()),
            Middleware(SecureHeaders),
            Middleware(Gate, check_host=check_host),
        ],
        exception_handlers={HTTPException: _http_error},
    )
    app.state.endpoints = endpoints
    return app
