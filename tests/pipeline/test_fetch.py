"""The fetch layer over real loopback HTTP: mirror rewriting, conditional GET, retries, caps."""

from __future__ import annotations

import hashlib

import pytest

from pipelines.fetch.transports import Fetcher, FetchError, Validators, mirror_url, replay_relpath
from tests.support.mirror_server import MirrorServer, serve_slowly, serve_status, serve_truncated

URL = "https://livebench.ai/table_2026_01_08.csv"
PATH = "/livebench.ai/table_2026_01_08.csv"


def no_sleep(_seconds: float) -> None:
    pass


def test_mirror_url_keeps_host_path_and_query() -> None:
    assert (
        mirror_url("https://example.org/a/b.json?x=1", "http://127.0.0.1:9/")
        == "http://127.0.0.1:9/example.org/a/b.json?x=1"
    )
    with pytest.raises(ValueError, match="not an absolute URL"):
        mirror_url("/relative/path", "http://127.0.0.1:9")


def test_replay_relpath_refuses_traversal() -> None:
    assert replay_relpath("https://epoch.ai/data/benchmark_data.zip") == (
        "epoch.ai/data/benchmark_data.zip"
    )
    with pytest.raises(ValueError, match="escapes"):
        replay_relpath("https://evil.example/../../etc/passwd")


def test_mirror_fetch_returns_recorded_bytes(mirror_server: MirrorServer, replay_root) -> None:
    fetched = Fetcher("mirror", mirror=mirror_server.base_url).fetch("livebench", URL, 10**7)
    expected = (replay_root / "livebench.ai/table_2026_01_08.csv").read_bytes()
    assert fetched.status == 200
    assert fetched.content == expected
    assert fetched.sha256 == hashlib.sha256(expected).hexdigest()
    assert fetched.etag is not None


def test_conditional_get_answers_not_modified(mirror_server: MirrorServer) -> None:
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url)
    first = fetcher.fetch("livebench", URL, 10**7)
    second = fetcher.fetch("livebench", URL, 10**7, Validators(etag=first.etag))
    assert second.status == 304
    assert second.not_modified and second.content is None
    assert [status for _, status in mirror_server.requests] == ["200", "304"]


def test_server_errors_are_retried_then_named(mirror_server: MirrorServer) -> None:
    mirror_server.faults[PATH] = serve_status(503, b"busy", {"Retry-After": "0"})
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url, retries=2, sleep=no_sleep)
    with pytest.raises(FetchError) as caught:
        fetcher.fetch("livebench", URL, 10**7)
    assert "livebench" in str(caught.value) and URL in str(caught.value)
    assert "HTTP 503 after 3 attempts" in str(caught.value)
    assert len(mirror_server.requests) == 3


def test_recovers_when_a_retry_succeeds(mirror_server: MirrorServer) -> None:
    attempts = []

    def flaky(handler, data):
        attempts.append(1)
        if len(attempts) == 1:
            serve_status(500)(handler, data)
        else:
            serve_status(200, data)(handler, data)

    mirror_server.faults[PATH] = flaky
    fetched = Fetcher("mirror", mirror=mirror_server.base_url, sleep=no_sleep).fetch(
        "livebench", URL, 10**7
    )
    assert fetched.status == 200 and len(attempts) == 2


def test_timeout_is_a_clear_error(mirror_server: MirrorServer) -> None:
    mirror_server.faults[PATH] = serve_slowly(1.0)
    fetcher = Fetcher(
        "mirror", mirror=mirror_server.base_url, timeout=(1.0, 0.2), retries=0, sleep=no_sleep
    )
    with pytest.raises(FetchError, match="timed out"):
        fetcher.fetch("livebench", URL, 10**7)


def test_truncated_body_is_rejected(mirror_server: MirrorServer) -> None:
    mirror_server.faults[PATH] = serve_truncated
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url, retries=0)
    with pytest.raises(FetchError, match="truncated"):
        fetcher.fetch("livebench", URL, 10**7)


def test_html_page_with_status_200_is_rejected(mirror_server: MirrorServer) -> None:
    page = b"<!doctype html><html><body>Rate limited</body></html>"
    mirror_server.faults[PATH] = serve_status(200, page, {"Content-Type": "text/html"})
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url, retries=0)
    with pytest.raises(FetchError, match="HTML page"):
        fetcher.fetch("livebench", URL, 10**7)


def test_oversize_body_is_rejected(mirror_server: MirrorServer) -> None:
    fetcher = Fetcher("mirror", mirror=mirror_server.base_url, retries=0)
    with pytest.raises(FetchError, match="exceeds the cap"):
        fetcher.fetch("livebench", URL, 1000)


def test_replay_reads_recorded_time_and_checks_hash(tmp_path) -> None:
    fetched = Fetcher("replay").fetch("livebench", URL, 10**7)
    assert fetched.transport == "replay"
    assert fetched.fetched_at.isoformat() == "2026-07-01T00:00:00+00:00"
    with pytest.raises(FetchError, match="no recorded payload"):
        Fetcher("replay", replay_root=tmp_path).fetch("livebench", URL, 10**7)


def test_unknown_mode_and_missing_mirror_are_rejected() -> None:
    with pytest.raises(ValueError, match="mode must be one of"):
        Fetcher("ftp")
    with pytest.raises(ValueError, match="BENCHPRESS_HTTP_MIRROR"):
        Fetcher("mirror")
