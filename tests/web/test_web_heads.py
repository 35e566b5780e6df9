"""Request framing (`predictor.web.heads`): the bytes h11 gets are the bytes the client sent,
split into the same requests however the network chunks them."""

from __future__ import annotations

import h11
import pytest

from predictor.web.heads import HeadError, RequestFraming
from predictor.web.limits import Limits

STREAM = (
    b"POST /api/predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 26\r\n\r\n"
    b'{"scores": {"hle": 20.0}}\n'
    b"GET /api/versions HTTP/1.1\nHost: 127.0.0.1\n\n"  # bare LF line ends, as h11 reads them
    b"GET /api/versions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
)


def requests_h11_reads(data: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """(method, target, body) of every request h11 parses from `data`."""
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(data)
    found: list[tuple[bytes, bytes, bytes]] = []
    while True:
        event = conn.next_event()
        if isinstance(event, h11.Request):
            found.append((event.method, event.target, b""))
        elif isinstance(event, h11.Data):
            method, target, body = found[-1]
            found[-1] = (method, target, body + bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            conn.send(h11.Response(status_code=200, headers=[("Content-Length", "0")]))
            conn.send(h11.EndOfMessage())
            conn.start_next_cycle()
        else:
            return found


@pytest.mark.parametrize("chunk", [1, 2, 7, 64, len(STREAM)])
def test_any_chunking_passes_the_same_requests_to_h11(chunk: int) -> None:
    framing = RequestFraming(Limits())
    passed, heads = b"", 0
    for start in range(0, len(STREAM), chunk):
        fed = framing.feed(STREAM[start : start + chunk])
        assert fed.error is None
        passed += fed.data
        heads += fed.heads
    assert passed == STREAM and heads == 3 and not framing.mid_head
    assert requests_h11_reads(passed) == [
        (b"POST", b"/api/predict", b'{"scores": {"hle": 20.0}}\n'),
        (b"GET", b"/api/versions", b""),
        (b"GET", b"/api/versions", b""),
    ]


def test_nothing_after_a_bad_head_passes() -> None:
    """A request hidden behind a bad one is never parsed."""
    framing = RequestFraming(Limits())
    fed = framing.feed(
        b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
        b"POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 9\r\n\r\n"
        b"GET /hidden HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    assert fed.data == b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n" and fed.heads == 1
    assert fed.error == HeadError(400, "invalid Content-Length: the header is given more than once")
    assert framing.feed(b"GET /later HTTP/1.1\r\nHost: x\r\n\r\n").data == b""
