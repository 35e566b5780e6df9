"""Request heads, checked before the HTTP parser (h11) sees them.

`RequestFraming` splits a connection's bytes into requests exactly as h11 will (a head ends at
the first blank line, a body is Content-Length bytes; chunked bodies are refused), and checks
each head first, so every odd request gets a JSON answer naming its problem instead of h11's
generic 400, an exception or silence:

- a request line over `max_request_line` bytes: 414; a head over `max_head_bytes` or with more
  than `max_headers` lines: 431 (known as soon as the bytes arrive, not when the head ends);
- a request line that is not `METHOD target HTTP/1.x`, or whose target holds a space, a
  control or a non-ASCII byte: 400 (the log shows the line, escaped);
- a header line h11 would refuse, a folded one, a missing or repeated Host: 400;
- Transfer-Encoding: 411; Content-Length given twice, not plain ASCII digits (`+2`, `²`), or
  over the body cap (`predictor.web.bodies`): 400 / 413, before a byte of the body is read.

Pure: bytes in, bytes to pass on and the first problem out; the protocol does the I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from predictor.web.bodies import content_length, is_upload
from predictor.web.errors import ApiError
from predictor.web.guards import cross_site
from predictor.web.limits import Limits

BLANK_LINE = re.compile(rb"\n\r?\n")  # where h11 ends a head (h11._receivebuffer)
TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # a method or a header name (RFC 9110)
TARGET = re.compile(rb"[\x21-\x7e]+")  # visible ASCII: what h11 takes as a request target
CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")  # in a header value (a tab is allowed)
VERSIONS = (b"HTTP/1.1", b"HTTP/1.0")


@dataclass(frozen=True)
class HeadError:
    """Why a request head cannot be served: sent as `{"error": message}` with `status`."""

    status: int
    message: str


@dataclass(frozen=True)
class Fed:
    """What one `feed` gives: bytes for h11 (whole checked heads and the bodies they announce),
    how many complete heads they hold, and the first problem found (nothing after it passes)."""

    data: bytes
    heads: int
    error: HeadError | None = None


class RequestFraming:
    """One connection's requests, head by head."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.pending = bytearray()  # the part of a head received so far
        self.body_left = 0  # bytes of the current body still to pass through
        self.failed = False
        self.request_line = b""  # of the last complete head, for the log
        self._scanned = 0  # where the search for the head's end resumes (as h11 does)

    @property
    def mid_head(self) -> bool:
        """Part of a request head has arrived (a stalled client, when time runs out)."""
        return bool(self.pending)

    def shown_line(self) -> str:
        """The request line to log: the one being received, else the last complete one."""
        line = bytes(self.pending).split(b"\n", 1)[0] if self.pending else self.request_line
        return line[: self.limits.max_request_line].rstrip(b"\r").decode("latin-1")

    def feed(self, data: bytes) -> Fed:
        if self.failed:
            return Fed(b"", 0)
        out = bytearray()
        heads = 0
        while data:
            if self.body_left:
                body = data[: self.body_left]
                out += body
                self.body_left -= len(body)
                data = data[len(body) :]
                continue
            self.pending += data
            data = b""
            head = self._take_head()
            if isinstance(head, HeadError):
                self.failed = True
                return Fed(bytes(out), heads, head)
            if head is None:
                break
            out += head
            heads += 1
            data = bytes(self.pending)
            self.pending.clear()
            self._scanned = 0
        return Fed(bytes(out), heads)

    def _take_head(self) -> bytes | HeadError | None:
        """A complete, checked head off the front of `pending`; None: not complete yet."""
        buffer, limits = self.pending, self.limits
        if buffer[0] < 0x21:  # an empty line, a space, TLS on the plain port: h11 refuses it too
            return HeadError(400, "malformed request: it does not start with a request line")
        line_end = buffer.find(b"\n")
        if (line_end if line_end >= 0 else len(buffer)) > limits.max_request_line + 1:
            return HeadError(414, f"request line over {limits.max_request_line} bytes")
        found = BLANK_LINE.search(buffer, self._scanned)
        if found is None:
            self._scanned = max(0, len(buffer) - 2)
            if len(buffer) > limits.max_head_bytes:
                return _too_large(limits)
            return None
        head = bytes(buffer[: found.end()])
        del buffer[: found.end()]
        self.request_line = head.split(b"\n", 1)[0].rstrip(b"\r")
        problem = check_head(head, limits)
        if isinstance(problem, HeadError):
            return problem
        self.body_left = problem
        return head


def _too_large(limits: Limits) -> HeadError:
    return HeadError(431, f"request line and headers over {limits.max_head_bytes} bytes")


def check_head(head: bytes, limits: Limits) -> int | HeadError:
    """The body length a complete head announces, or why it cannot be served."""
    lines = [line.removesuffix(b"\r") for line in head.split(b"\n")[:-2]]
    request_line, header_lines = lines[0], lines[1:]
    if len(request_line) > limits.max_request_line:
        return HeadError(414, f"request line over {limits.max_request_line} bytes")
    if len(head) > limits.max_head_bytes:
        return _too_large(limits)
    if len(header_lines) > limits.max_headers:
        return HeadError(431, f"more than {limits.max_headers} request headers")
    parts = request_line.split(b" ")
    if len(parts) != 3 or not TOKEN.fullmatch(parts[0]) or parts[2] not in VERSIONS:
        return HeadError(400, "malformed request line: expected METHOD /path HTTP/1.1")
    method, target, version = parts
    if not TARGET.fullmatch(target):
        return HeadError(
            400, "the request target holds a space, control or non-ASCII byte; percent-encode it"
        )
    fields: dict[str, list[str]] = {}
    for line in header_lines:
        name, colon, value = line.partition(b":")
        if line[:1] in (b" ", b"\t"):
            return HeadError(400, "folded (multi-line) request headers are not accepted")
        if not colon or not TOKEN.fullmatch(name):
            return HeadError(400, f"malformed request header line {line[:40].decode('latin-1')!r}")
        value = value.strip(b" \t")
        if CONTROL.search(value):
            return HeadError(400, f"request header {name.decode()!r} holds control characters")
        fields.setdefault(name.decode().lower(), []).append(value.decode("latin-1"))
    if "transfer-encoding" in fields:
        return HeadError(411, "chunked request bodies are not accepted; send Content-Length")
    hosts = fields.get("host", [])
    if len(hosts) > 1:
        return HeadError(400, "the Host header is given more than once")
    if not hosts and version == b"HTTP/1.1":
        return HeadError(400, "the Host header is required")
    path = unquote(target.partition(b"?")[0].decode("ascii"))  # as the app will see it
    first = {name: values[0] for name, values in fields.items()}
    foreign = cross_site(first.get("sec-fetch-site"), first.get("origin"), first.get("host"))
    try:
        return content_length(
            fields.get("content-length", []), is_upload(method.decode(), path, foreign)
        )
    except ApiError as exc:
        return HeadError(exc.status, exc.message)
