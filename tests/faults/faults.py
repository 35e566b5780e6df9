"""The fault catalogue of the fault suite, and where each source's content faults go.

A fault is what the network or a leaderboard can do to us. Transport faults are answered by the
loopback mirror in place of a source's first URL (5xx with and without Retry-After, timeouts,
resets, truncated or empty bodies, HTML error pages, oversize bodies). Content faults serve the
source's own recorded payload with one realistic edit, made in the payload's own format (a CSV
header renamed, a JSON key renamed, a YAML scalar changed, a ZIP member rewritten): renamed or
missing columns, NaN/inf/negative/out-of-range scores, a duplicated record, a model name replaced
by a hostile string, bytes that are not UTF-8. ZIP faults (path traversal, decompression bombs)
apply to the one ZIP source; listing faults to the one source that discovers its files from a
listing. Other combinations are "n.a." cells of the table.

Each source's test, `tests/sources/test_<id>.py`, declares where its content faults go
(`FAULT_TARGET`, a `Target` of `tests/support/fault_edits.py`, where the edits live); `TARGETS`
collects them, so the suite lists no source and refuses one without a target.

`RESULTS` collects each cell's outcome during the session; `tests/faults/conftest.py` prints it as
a table at the end of the run.
"""

from __future__ import annotations

import importlib
import socket
import struct
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from pipelines.sources import SOURCES
from tests.support.fault_edits import BAD_VALUES as BAD_VALUES  # re-exported for the tests
from tests.support.fault_edits import HOSTILE_NAMES as HOSTILE_NAMES
from tests.support.fault_edits import Target, recorded_bytes
from tests.support.mirror_server import Fault as Responder
from tests.support.mirror_server import serve_status, serve_truncated

# ---------------------------------------------------------------------- an upstream error page
HTML_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
    b"<body><h1>Bad Gateway</h1><p>The upstream server is unavailable.</p></body></html>\n"
)


# ------------------------------------------------------------------------------------- faults
@dataclass(frozen=True)
class FaultSpec:
    name: str
    kind: str  # transport | content | zip | listing
    label: str  # the row heading of the printed table


FAULTS: list[FaultSpec] = [
    FaultSpec("http_500", "transport", "HTTP 500"),
    FaultSpec("http_503_retry_after", "transport", "HTTP 503 + Retry-After"),
    FaultSpec("timeout", "transport", "timeout (no response)"),
    FaultSpec("stalled_body", "transport", "timeout (body stalls)"),
    FaultSpec("connection_reset", "transport", "connection reset"),
    FaultSpec("truncated_body", "transport", "truncated body"),
    FaultSpec("html_200", "transport", "HTML error page, 200"),
    FaultSpec("empty_body", "transport", "empty body, 200"),
    FaultSpec("oversize_declared", "transport", "oversize (Content-Length)"),
    FaultSpec("oversize_streamed", "transport", "oversize (streamed)"),
    FaultSpec("html_200_mislabelled", "content", "HTML page as text/plain"),
    FaultSpec("renamed_column", "content", "renamed key column"),
    FaultSpec("missing_column", "content", "missing score column"),
    FaultSpec("non_utf8", "content", "non-UTF-8 bytes"),
    FaultSpec("nan_value", "content", "NaN score"),
    FaultSpec("inf_value", "content", "inf score"),
    FaultSpec("negative_value", "content", "negative score"),
    FaultSpec("out_of_range_value", "content", "score 1e9"),
    FaultSpec("duplicate_rows", "content", "duplicate record"),
    FaultSpec("hostile_sql", "content", "name: SQL fragment"),
    FaultSpec("hostile_html", "content", "name: HTML/JS"),
    FaultSpec("hostile_long", "content", "name: 5,000 chars"),
    FaultSpec("hostile_control", "content", "name: control chars"),
    FaultSpec("hostile_rtl", "content", "name: U+202E"),
    FaultSpec("zip_traversal", "zip", "zip: ../../evil.csv"),
    FaultSpec("zip_bomb", "zip", "zip: deflate bomb"),
    FaultSpec("zip_bomb_lying_size", "zip", "zip: bomb, lying size"),
    FaultSpec("bad_listing", "listing", "listing: not a listing"),
    FaultSpec("listed_file_404", "listing", "listing: file 404"),
]
FAULTS_BY_NAME = {fault.name: fault for fault in FAULTS}
ZIP_SOURCES = {"epoch_ai"}
LISTING_SOURCES = {s.id for s in SOURCES.values() if s.discover is not None}


def applicable(fault: FaultSpec, source_id: str) -> bool:
    if fault.kind == "zip":
        return source_id in ZIP_SOURCES
    if fault.kind == "listing":
        return source_id in LISTING_SOURCES
    return True


# (fault, source) -> outcome label and a short explanation, filled in by the tests and printed
# by conftest at the end of the session
RESULTS: dict[tuple[str, str], str] = {}
DETAILS: dict[tuple[str, str], str] = {}


# ------------------------------------------------------------------------- transport responders
class Stalls:
    """Server-side waits that a test run can release at teardown (no thread outlives it long)."""

    release = threading.Event()
    seconds = 5.0


def _quiet_write(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    try:
        handler.wfile.write(data)
        handler.wfile.flush()
    except OSError:  # the client gave up: that is the point of the fault
        handler.close_connection = True


def serve_no_response(handler: BaseHTTPRequestHandler, _data: bytes) -> None:
    Stalls.release.wait(Stalls.seconds)
    handler.close_connection = True


def serve_stalled_body(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    _quiet_write(handler, data[: min(len(data) // 4, 4096)])
    Stalls.release.wait(Stalls.seconds)
    handler.close_connection = True


def serve_reset(handler: BaseHTTPRequestHandler, _data: bytes) -> None:
    """Abort the TCP connection (RST) without answering."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()
    handler.close_connection = True


def serve_oversize(declared: bool, size: int) -> Responder:
    """A body one chunk past the cap: with an honest Content-Length, or streamed until close."""

    def fault(handler: BaseHTTPRequestHandler, _data: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/octet-stream")
        if declared:
            handler.send_header("Content-Length", str(size))
        handler.end_headers()
        chunk = b"0" * 65536
        sent = 0
        try:
            while sent < size:
                handler.wfile.write(chunk)
                sent += len(chunk)
        except OSError:
            pass
        handler.close_connection = True

    return fault


def serve_bytes(body: bytes, content_type: str = "application/octet-stream") -> Responder:
    return serve_status(200, body, {"Content-Type": content_type})


def transport_responder(fault: str, max_bytes: int) -> Responder:
    if fault == "http_500":
        return serve_status(500, b"Internal Server Error")
    if fault == "http_503_retry_after":
        return serve_status(503, b"Service Unavailable", {"Retry-After": "7"})
    if fault == "timeout":
        return serve_no_response
    if fault == "stalled_body":
        return serve_stalled_body
    if fault == "connection_reset":
        return serve_reset
    if fault == "truncated_body":
        return serve_truncated
    if fault == "html_200":
        return serve_status(200, HTML_PAGE, {"Content-Type": "text/html; charset=utf-8"})
    if fault == "empty_body":
        return serve_status(200, b"")
    if fault == "oversize_declared":
        return serve_oversize(True, max_bytes + 65536)
    if fault == "oversize_streamed":
        return serve_oversize(False, max_bytes + 65536)
    raise KeyError(fault)


# ------------------------------------------------------------------------- per-source targets
def declared_target(source_id: str) -> Target:
    """The `FAULT_TARGET` that the source's own test module declares; loud when it has none."""
    module_name = f"tests.sources.test_{source_id}"  # tests/sources: a namespace in `tests`
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:  # the test file exists but an import inside it failed
            raise
        module = None
    target = getattr(module, "FAULT_TARGET", None)
    if not isinstance(target, Target):
        raise AssertionError(
            f"every source needs its content mutations: source {source_id!r} has no "
            f"FAULT_TARGET; declare `FAULT_TARGET = Target(url, edit, what)` (a payload URL and "
            f"an edit of its bytes, tests/support/fault_edits.py) in "
            f"tests/sources/test_{source_id}.py"
        )
    return target


TARGETS: dict[str, Target] = {source_id: declared_target(source_id) for source_id in SOURCES}


def mirror_path(url: str) -> str:
    """The path the loopback mirror sees for a source URL (`/<host>/<path>`)."""
    parts = urlsplit(url)
    return f"/{parts.netloc}{parts.path}"


@dataclass(frozen=True)
class Plan:
    """What the mirror serves for one cell: responders by path, and the faulted URL."""

    url: str
    responders: dict[str, Responder]
    served: bytes | None  # the faulted bytes when the fault is content served with status 200


def plan(fault: FaultSpec, source_id: str) -> Plan:
    source = SOURCES[source_id]
    if fault.kind == "transport":
        url = source.urls[0]
        return Plan(
            url, {mirror_path(url): transport_responder(fault.name, source.max_bytes)}, None
        )
    if fault.kind == "listing":
        if fault.name == "bad_listing":
            url = source.urls[0]
            body = b"this is not a git tree listing\n<p>rate limited</p>\n"
            return Plan(url, {mirror_path(url): serve_bytes(body, "text/plain")}, body)
        url = TARGETS[source_id].url  # a file the listing names has gone
        return Plan(url, {mirror_path(url): serve_status(404, b"Not Found")}, None)
    target = TARGETS[source_id]
    if fault.name == "html_200_mislabelled":
        body = HTML_PAGE
    else:
        body = target.edit(fault.name, recorded_bytes(target.url))
    return Plan(target.url, {mirror_path(target.url): serve_bytes(body, "text/plain")}, body)
