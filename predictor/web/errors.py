"""The one exception the web API raises: an HTTP status with a user-facing message."""

from __future__ import annotations


class ApiError(Exception):
    """Sent as `{"error": message}` with `status` (400 bad input, 404 unknown resource, ...)
    and any `headers` the answer needs (`Retry-After` on 503)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def not_found(message: str) -> ApiError:
    return ApiError(404, message)
