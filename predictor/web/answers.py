"""What every answer carries: JSON bytes, and the headers that keep the page safe.

A strict Content-Security-Policy (no inline script), nosniff and no framing go on every answer,
pages, JSON and the errors the HTTP protocol sends before any app code runs (`raw_error`).
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

JSON_TYPE = "application/json; charset=utf-8"
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
JSON_HEADERS = {"Cache-Control": "no-store"}


def json_bytes(payload: Any) -> bytes:
    """Compact UTF-8 JSON; NaN and infinities are a bug upstream, never sent."""
    text = json.dumps(payload, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8")


def error_bytes(message: str) -> bytes:
    return json_bytes({"error": message})


def raw_error(status: int, message: str, extra: dict[str, str] | None = None) -> bytes:
    """A whole HTTP/1.1 error answer that closes the connection, for the protocol layer (it
    answers requests whose head cannot be handed to the app)."""
    body = error_bytes(message)
    headers = {
        "Content-Type": JSON_TYPE,
        "Content-Length": str(len(body)),
        **JSON_HEADERS,
        **SECURITY_HEADERS,
        **(extra or {}),
        "Connection": "close",
    }
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
