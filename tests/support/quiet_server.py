"""An HTTP test server that stays quiet when a client goes away mid-answer.

`socketserver` prints a traceback to stderr for every error while answering. A client that
disconnects (its timeout, a refresh killed mid-fetch, a stopped test) raises an OSError there,
and a server that outlives its test (the session's mirror) then writes into whatever test
runs next, whose captured stderr no longer matches. Other errors are printed as usual."""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer
from typing import Any


class QuietThreadingHTTPServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)
