"""The fetch layer against awkward servers, over real loopback HTTP: compressed bodies (correct,
truncated, decompression bombs) and servers that trickle bytes past the download deadline."""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from pipelines.fetch.transports import DEADLINE_ENV, Fetcher, FetchError, deadline_from_env
from pipelines.sources import SOURCES
from pipelines.stages.ingest import ingest_source
from pipelines.stages.parse import parse_source
from tests.support.mirror_server import MirrorServer, serve_status, serve_trickle
from warehouse.db import connect
from warehouse.status import source_status

URL = "https://evalplus.github.io/results.json"  # 34,305 bytes, 4,105 gzipped
PATH = "/evalplus.github.io/results.json"
Responder = Callable[[BaseHTTPRequestHandler, bytes], None]


def no_sleep(_seconds: float) -> None:
    pass


def serve_encoded(
    encode: Callable[[bytes], bytes],
    encoding: str = "gzip",
    *,
    cut: float | None = None,
    declare: bool = True,
    seen: list[str] | None = None,
) -> Responder:
    """Answer with the file encoded; `cut` sends only that share of the encoded bytes and
    closes; `declare=False` leaves out Content-Length (the body ends when the connection does)."""

    def fault(handler: BaseHTTPRequestHandler, data: bytes) -> None:
        if seen is not None:
            seen.append(handler.headers.get("Accept-Encoding", ""))
        body = encode(data)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Encoding", encoding)
        if declare:
            handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body if cut is None else body[: int(len(body) * cut)])
        handler.wfile.flush()
        handler.close_connection = True

    return fault


def deflate_raw(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


# ------------------------------------------------------------------------------- encodings
@pytest.mark.parametrize(
    ("encode", "encoding"),
    [
        (gzip.compress, "gzip"),
        (gzip.compress, "x-gzip"),
        (lambda d: gzip.compress(d[:1000]) + gzip.compress(d[1000:]), "gzip"),  # two members
        (zlib.compress, "deflate"),
        (deflate_raw, "deflate"),  # raw deflate, as some servers send it
    ],
    ids=["gzip", "x-gzip", "gzip-two-members", "deflate-zlib", "deflate-raw"],
)
def test_compressed_body_is_decoded_and_archived_as_published(
    mirror_server: MirrorServer, replay_root: Path, encode, encoding
) -> None:
    seen: list[str] = []
    mirror_server.faults[PATH] = serve_encoded(encode, encoding, seen=seen)
    fetched = Fetcher("mirror", mirror=mirror_server.base_url, retries=0).fetch(
        "evalplus", URL, 10**6
    )
    assert fetched.content == (replay_root / PATH.lstrip("/")).read_bytes()
    assert seen == ["gzip, deflate"]  # we only ask for what we can decode


def test_gzip_without_content_length_is_decoded(mirror_server: MirrorServer, replay_root) -> None:
    mirror_server.faults[PATH] = serve_encoded(gzip.compress, declare=False)
    fetched = Fetcher("mirror", mirror=mirror_server.base_url, retries=0).fetch(
        "evalplus", URL, 10**6
    )
    assert fetched.content == (replay_root / PATH.lstrip("/")).read_bytes()


@pytest.mark.parametrize("declare", [True, False], ids=["content-length", "until-close"])
def test_truncated_gzip_body_is_rejected(mirror_server: MirrorServer, declare: bool) -> None:
    mirror_server.faults[PATH] = serve_encoded(gzip.compress, cut=0.5, declare=declare)
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url, retries=0)
    with pytest.raises(FetchError, match="truncated") as caught:
        fetcher.fetch("evalplus", URL, 10**6)
    assert "evalplus" in str(caught.value) and URL in str(caught.value)
    if declare:  # counted in bytes on the wire, as Content-Length counts them
        size = len(
            gzip.compress((Path(__file__).parents[2] / "pipelines/replay" / PATH[1:]).read_bytes())
        )
        assert f"{size // 2} of {size} bytes" in str(caught.value)


def test_gzip_bomb_is_stopped_at_the_cap(mirror_server: MirrorServer) -> None:
    cap = 1_000_000
    bomb = gzip.compress(b"0" * (64 * cap))  # about 65 KB on the wire, 64 MB inflated
    assert len(bomb) < cap
    mirror_server.faults[PATH] = serve_encoded(lambda _data: bomb)
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url, retries=0)
    with pytest.raises(FetchError, match="decoded body exceeds the cap of 1000000 bytes"):
        fetcher.fetch("evalplus", URL, cap)


def test_compressed_size_over_the_cap_is_rejected(mirror_server: MirrorServer) -> None:
    noise = bytes(range(256)) * 4000  # barely compressible: over the cap on the wire too
    mirror_server.faults[PATH] = serve_encoded(lambda _d: gzip.compress(noise), declare=False)
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url, retries=0)
    with pytest.raises(FetchError, match="body exceeds the cap of 100000 bytes"):
        fetcher.fetch("evalplus", URL, 100_000)


def test_unknown_content_encoding_is_a_clear_error(mirror_server: MirrorServer) -> None:
    mirror_server.faults[PATH] = serve_encoded(lambda d: d, "br")
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url, retries=0)
    with pytest.raises(FetchError, match="unsupported Content-Encoding 'br'"):
        fetcher.fetch("evalplus", URL, 10**6)


def test_gzip_payload_is_archived_decoded(mirror_server: MirrorServer, tmp_path, replay_root):
    """The reviewer's case end to end: a gzip answer archives the same bytes as the recording."""
    mirror_server.faults[PATH] = serve_encoded(gzip.compress)
    with connect(tmp_path / "warehouse.duckdb") as con:
        summary = ingest_source(
            con, Fetcher("mirror", mirror=mirror_server.base_url, retries=0), SOURCES["evalplus"]
        )
        stored = con.execute("SELECT content, size_bytes FROM raw_payloads").fetchall()
    assert summary.outcome == "new"
    expected = (replay_root / PATH.lstrip("/")).read_bytes()
    assert [(bytes(content), size) for content, size in stored] == [(expected, len(expected))]


# -------------------------------------------------------------------------------- deadline
def test_trickling_server_hits_the_deadline(mirror_server: MirrorServer) -> None:
    """Bytes keep coming for 60 s; the 1 s download deadline ends the fetch (the message says
    so; the clock checks it did not end early, and far from the trickle's end)."""
    mirror_server.faults[PATH] = serve_trickle(limit=60.0)
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url, retries=2, deadline=1.0)
    started = time.monotonic()
    with pytest.raises(FetchError) as caught:
        fetcher.fetch("evalplus", URL, 10**6)
    elapsed = time.monotonic() - started
    message = str(caught.value)
    assert "evalplus" in message and URL in message
    assert "download deadline of 1s exceeded" in message and DEADLINE_ENV in message
    assert 0.9 < elapsed < 60.0 / 3
    assert len(mirror_server.requests) == 1  # the deadline covers retries: none is left


def test_stalled_server_is_bounded_by_the_deadline(mirror_server: MirrorServer) -> None:
    release = threading.Event()

    def stall(handler: BaseHTTPRequestHandler, data: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data[:100])
        handler.wfile.flush()
        release.wait(120.0)  # past the 30 s read timeout: only the deadline ends the fetch
        handler.close_connection = True

    mirror_server.faults[PATH] = stall
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url, timeout=(5.0, 30.0), deadline=0.5)
    started = time.monotonic()
    try:
        with pytest.raises(FetchError, match="deadline of 0.5s exceeded after 100 bytes"):
            fetcher.fetch("evalplus", URL, 10**6)
    finally:
        release.set()
    assert time.monotonic() - started < 30.0 / 3  # not the 30 s read timeout


def test_retry_wait_past_the_deadline_gives_up(mirror_server: MirrorServer) -> None:
    mirror_server.faults[PATH] = serve_status(503, b"busy", {"Retry-After": "20"})
    waits: list[float] = []
    fetcher = Fetcher(
        "mirror", mirror=mirror_server.base_url, retries=3, deadline=5.0, sleep=waits.append
    )
    with pytest.raises(FetchError, match=r"HTTP 503; waiting 20s for attempt 2 would pass the 5s"):
        fetcher.fetch("evalplus", URL, 10**6)
    assert waits == [] and len(mirror_server.requests) == 1


def test_deadline_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEADLINE_ENV, raising=False)
    assert deadline_from_env() == 120.0 and Fetcher("replay").deadline == 120.0
    monkeypatch.setenv(DEADLINE_ENV, "2.5")
    assert Fetcher("replay").deadline == 2.5
    assert Fetcher("replay", deadline=7).deadline == 7.0  # an explicit value wins
    for bad in ("soon", "0", "-3", "inf"):
        monkeypatch.setenv(DEADLINE_ENV, bad)
        with pytest.raises(ValueError, match=DEADLINE_ENV):
            Fetcher("replay")


def test_source_past_the_deadline_keeps_its_last_good_data(
    mirror_server: MirrorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Like any other fetch failure: logged, reported stale with the reason, last parse kept."""
    source = SOURCES["evalplus"]
    with connect(tmp_path / "warehouse.duckdb") as con:
        ingest_source(con, Fetcher("mirror", mirror=mirror_server.base_url), source)
        good = parse_source(con, source)

        monkeypatch.setenv(DEADLINE_ENV, "0.5")  # as the pipeline's fetcher picks it up
        mirror_server.faults[PATH] = serve_trickle()
        with pytest.raises(FetchError, match="deadline"):
            ingest_source(con, Fetcher("mirror", mirror=mirror_server.base_url), source)
        again = parse_source(con, source)
        status = source_status(con)["evalplus"]
        outcome = con.execute(
            "SELECT outcome FROM fetch_log ORDER BY fetch_id DESC LIMIT 1"
        ).fetchone()[0]
    assert outcome == "failed"
    assert again.reused and again.parse_id == good.parse_id
    assert status["status"] == "stale" and "download deadline of 0.5s" in status["error"]
    assert URL in status["error"]
