"""Request bodies: how long one may be, and what its bytes mean.

A body's length is one plain Content-Length (no chunked bodies), checked before a byte of it is
read: at most `MAX_BODY_BYTES`, or `uploads.MAX_UPLOAD_BYTES` for a results file this app's own
page (or a plain client) posts to `/api/results` as `application/octet-stream` (a type another
site's page cannot send without a preflight this server refuses). A JSON body must be an
object with every key once; a form carries as many fields as a query string may.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from predictor.util.text_safety import quoted
from predictor.web.api import UPLOAD_PATH
from predictor.web.errors import ApiError
from predictor.web.params import MAX_PARAMS
from predictor.web.uploads import MAX_UPLOAD_BYTES

MAX_BODY_BYTES = 64 * 1024
UPLOAD_TYPE = "application/octet-stream"


def is_upload(method: str, path: str, cross_site: bool) -> bool:
    """A results file posted by this app's page (or a plain client): the larger cap."""
    return method == "POST" and path == UPLOAD_PATH and not cross_site


def content_length(given: list[str], upload: bool = False) -> int:
    """The body's length from the Content-Length values of a request: one value of ASCII
    digits, at most MAX_BODY_BYTES (MAX_UPLOAD_BYTES for an `upload`); ApiError otherwise.

    Any other value leaves the body's end unknown, so the caller closes the connection after
    the answer rather than read the rest of the body as a request."""
    if not given:
        return 0
    if len(given) > 1:
        raise ApiError(400, "invalid Content-Length: the header is given more than once")
    raw = given[0].strip()
    if not (raw.isascii() and raw.isdigit()):  # isdigit alone accepts '²' and '٣'
        raise ApiError(400, f"invalid Content-Length {given[0][:40]!r}")
    digits = raw.lstrip("0")
    cap = MAX_UPLOAD_BYTES if upload else MAX_BODY_BYTES
    if len(digits) > len(str(cap)) or int(digits or "0") > cap:
        if upload:
            raise ApiError(
                413,
                f"results file over {cap // 2**20} MiB ({cap} bytes), the most the page "
                "reads; use `benchpress predict --from FILE` for larger files",
            )
        raise ApiError(413, f"request body over {cap} bytes")
    return int(digits or "0")


def media_type(content_type: str | None) -> str:
    """`Application/JSON; charset=utf-8` -> `application/json`."""
    return (content_type or "").split(";")[0].strip().lower()


def upload_bytes(kind: str, data: bytes) -> bytes:
    """A results file's bytes, sent as they are (not a form: a file is not parameters)."""
    if kind != UPLOAD_TYPE:
        raise ApiError(415, f"send the results file's bytes as {UPLOAD_TYPE} (the name in ?name=)")
    return data


def body_params(kind: str, data: bytes) -> list[tuple[str, object]]:
    """A JSON object or a urlencoded form; its fields join the query parameters."""
    if not data:
        return []
    if kind == "application/json":
        return json_params(data)
    if kind == "application/x-www-form-urlencoded":
        return form_params(data)
    raise ApiError(415, "send application/json or application/x-www-form-urlencoded")


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


def json_params(data: bytes) -> list[tuple[str, object]]:
    """A JSON object's fields. Whatever the bytes, a bad body is a 400: nesting too deep for
    the parser, an integer too long to convert and a repeated key included."""
    try:
        body = json.loads(data.decode("utf-8"), object_pairs_hook=unique_object)
    except DuplicateKey as exc:
        raise ApiError(
            400, f"request body: key {quoted(exc.key)} is given more than once"
        ) from None
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
