"""How much `benchpress app` takes on at once, and for how long.

One frozen value handed to every layer (the listening socket, the HTTP protocol, the ASGI app
and its handler threads), so a test or a benchmark can shrink a deadline without patching
module globals. The defaults serve a person's page and a few scripts on this machine: a slow
or stalled client is cut off after seconds and holds no handler thread meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Connection, time and size limits (seconds, bytes, counts)."""

    backlog: int = 2048  # connections the kernel queues before the server accepts them
    max_connections: int = 512  # open at once; see `predictor.web.protocol` for the cap
    header_seconds: float = 10.0  # for a request line and headers, from the connection or answer
    request_seconds: float = 60.0  # for the body and the answer, once the headers are in
    keep_alive_seconds: float = 5.0  # an idle connection between two requests
    flush_seconds: float = 30.0  # for the client to read an answer before it is dropped
    worker_threads: int = 16  # handlers (fold-ins, probe searches, file reads) running at once
    queue_seconds: float = 10.0  # a request waits this long for a handler thread, then 503
    max_request_line: int = 16 * 1024  # bytes; longer: 414
    max_head_bytes: int = 64 * 1024  # request line and headers; more: 431
    max_headers: int = 100  # header lines; more: 431
    shutdown_seconds: float = 5.0  # answers in progress get this long when the server stops
    # uploaded results files (`POST /api/results`, see `predictor.web.uploads`)
    upload_workers: int = 2  # processes parsing uploaded files at once
    upload_queue: int = 4  # uploads waiting for a parsing process; more at once: 503
    upload_seconds: float = 15.0  # one file's parse; then its process is killed: 504
    upload_memory: int = 768 * 2**20  # bytes one file's parse may allocate; more: 413
    upload_bytes_in_flight: int = 128 * 2**20  # upload bodies held at once; more: 503

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not value > 0:
                raise ValueError(f"Limits.{name} must be positive, got {value!r}")


DEFAULT_LIMITS = Limits()
