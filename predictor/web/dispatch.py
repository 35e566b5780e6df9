"""One API request, from its method, path, query and body to the JSON answer's bytes.

Synchronous and free of HTTP machinery: the ASGI app runs it in a handler thread
(`predictor.web.workers`), so parsing a body, a numpy fold-in and encoding a large answer all
stay off the event loop. Routing stays in `predictor.web.api.handle` (its `ENDPOINTS` table is
the one place an endpoint is added); this module maps its outcomes to HTTP statuses: an
`ApiError` as it says, an unreachable store 502, a snapshot that fails its checks 500, and
anything else a 500 whose traceback goes to the log with the request escaped.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote

from predictor.snapshots.reader import SnapshotError
from predictor.snapshots.stores import StoreUnreachable
from predictor.web import api
from predictor.web.answers import JSON_HEADERS, error_bytes, json_bytes
from predictor.web.bodies import body_params, upload_bytes
from predictor.web.catalog import Catalog
from predictor.web.errors import ApiError
from predictor.web.logs import log, printable
from predictor.web.params import MAX_PARAMS, collect


@dataclass(frozen=True)
class ApiRequest:
    """What an endpoint may use of a request (`path` URL-decoded, `query` as sent)."""

    method: str
    path: str
    query: str = ""
    media_type: str = ""  # the body's Content-Type without parameters, lower case
    body: bytes = b""


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Answer:
    return Answer(status, error_bytes(message), {**JSON_HEADERS, **(headers or {})})


def respond(catalog: Catalog, request: ApiRequest) -> Answer:
    """The answer to `request`: 200 with the endpoint's JSON, or an error naming the problem."""
    try:
        pairs: list[tuple[str, object]] = list(
            parse_qsl(request.query, keep_blank_values=True, max_num_fields=MAX_PARAMS)
        )
    except ValueError:
        return error(400, f"more than {MAX_PARAMS} query parameters")
    method, path = request.method, request.path
    try:
        data = b""
        if method == "POST" and path == api.UPLOAD_PATH:
            data = upload_bytes(request.media_type, request.body)
        elif method == "POST" and "POST" in api.allowed_methods(path):
            pairs += body_params(request.media_type, request.body)  # elsewhere a 405 says more
        payload = api.handle(catalog, path, collect(pairs), method, data)
        return Answer(200, json_bytes(payload), dict(JSON_HEADERS))
    except ApiError as exc:
        extra = dict(exc.headers or {})
        if exc.status == 405:
            extra["Allow"] = api.allowed_methods(path)
        return error(exc.status, exc.message, extra)
    except StoreUnreachable as exc:
        return error(502, str(exc))
    except SnapshotError as exc:  # e.g. a file modified after publishing
        return error(500, str(exc))
    except Exception:  # never leave a request without an answer
        shown = path + (f"?{unquote(request.query)}" if request.query else "")
        log.error("%s %s failed:\n%s", printable(method), printable(shown), traceback.format_exc())
        return error(500, "internal error (see the server log)")
