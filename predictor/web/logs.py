"""The app's request log: one line per answer on stderr, control characters escaped.

A request line holding ESC [2J is logged as `\\x1b[2J`, not obeyed by the terminal that shows
the log. `--quiet` turns the request lines off; errors with tracebacks still go to the
`benchpress.app` logger.
"""

from __future__ import annotations

import logging
import sys

from predictor.util.text_safety import printable as safe_text

log = logging.getLogger("benchpress.app")


def printable(text: str) -> str:
    """`text` with every control character and bidi override as a visible escape (as the CLI
    shows names), the backslash doubled so an escape typed by a client reads as typed."""
    return safe_text(text.replace("\\", "\\\\"))


class RequestLog:
    """`127.0.0.1 "GET /api/versions HTTP/1.1" 200 812` lines, unless `quiet`."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        # uvicorn's protocol warns through this logger (e.g. a request h11 cannot parse)
        self.http = logging.getLogger(
            "benchpress.app.http.quiet" if quiet else "benchpress.app.http"
        )
        self.http.setLevel(logging.ERROR if quiet else logging.WARNING)

    def answered(self, client: str, request_line: str, status: int, size: int | None) -> None:
        if self.quiet:
            return
        shown = "-" if size is None else str(size)
        sys.stderr.write(f'{printable(client)} "{printable(request_line)}" {status} {shown}\n')
