"""Hostile or odd requests over real HTTP: each is a 4xx naming the problem, never a 500, a
desynchronised connection, a runaway search or raw control characters in the log."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from predictor import BenchPress
from predictor.util.paths import bundled_snapshot_dir
from predictor.web import api, picker
from predictor.web.bodies import MAX_BODY_BYTES
from predictor.web.catalog import Catalog
from predictor.web.limits import DEFAULT_LIMITS, Limits
from predictor.web.server import make_server
from tests.web.conftest import RunningApp


def exchange(app: RunningApp, request: bytes, timeout: float = 10) -> bytes:
    """Send bytes as they are; everything the server answers until it closes."""
    host, port = app.server.server_address[:2]
    with socket.create_connection((host, port), timeout=timeout) as conn:
        conn.sendall(request)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    return data


def answers(data: bytes, bodiless: int = 0) -> list[tuple[int, bytes]]:
    """(status, body) of every response in `data`, in order (bodies by Content-Length; the
    first `bodiless` answers are to HEAD, so they have none)."""
    found = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        fields = dict(line.split(b": ", 1) for line in lines[1:])
        length = 0 if len(found) < bodiless else int(fields.get(b"Content-Length", b"0"))
        found.append((int(lines[0].split()[1]), rest[:length]))
        data = rest[length:]
    return found


def error(body: bytes) -> str:
    return json.loads(body)["error"]


# ------------------------------------------------------------------------ interval levels
@pytest.mark.parametrize("level", ["0.9999999999999999", "0.9995", "0.005", "1e-9"])
@pytest.mark.parametrize(
    "path",
    [
        "/api/cell?model=gpt-5.2&benchmark=gpqa_diamond",
        "/api/compare?models=gpt-5.2,claude-opus-4.5&benchmarks=gpqa_diamond,hle",
        "/api/predict?scores=gpqa_diamond=80",
    ],
)
def test_levels_next_to_0_or_1_are_a_400_naming_level(
    app: RunningApp, path: str, level: str
) -> None:
    answer = app.get(f"{path}&level={level}")
    assert answer.status == 400
    assert answer.json() == {"error": f"level must lie in 0.01-0.999, got {float(level)!r}"}


def test_levels_at_the_bounds_are_served(app: RunningApp) -> None:
    for level in ("0.01", "0.999"):
        doc = app.get(f"/api/cell?model=gpt-5.2&benchmark=gpqa_diamond&level={level}").json()
        fitted = doc["fitted"]
        assert fitted["level"] == float(level)
        assert fitted["low"] <= fitted["score"] <= fitted["high"]
    compare = app.get("/api/compare?models=gpt-5.2&benchmarks=hle&level=0.999")
    assert compare.status == 200 and compare.json()["level"] == 0.999


def test_compare_and_cell_turn_value_errors_into_400(
    app: RunningApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ValueError from the Python API is about the request, as /api/predict treats it."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise ValueError("prob must lie in (0, 1), got 1.0")

    monkeypatch.setattr(api, "_fitted_cells", refuse)
    monkeypatch.setattr(api, "_fitted_cell", refuse)
    for path in ("/api/compare?models=gpt-5.2", "/api/cell?model=gpt-5.2&benchmark=hle"):
        answer = app.get(path)
        assert answer.status == 400, path
        assert answer.json() == {"error": "prob must lie in (0, 1), got 1.0"}


# ---------------------------------------------------------------------------- JSON bodies
@pytest.mark.parametrize(
    "body",
    [
        b'{"scores": ' + b"[" * 30000 + b"]" * 30000 + b"}",  # deeper than the parser recurses
        b'{"level": ' + b"1" * 5000 + b"}",  # more digits than int() converts
        b'{"scores": {"gpqa_diamond": ' + b"9" * 4400 + b"}}",
    ],
    ids=["deep", "long-int", "long-int-score"],
)
def test_json_bodies_that_break_the_parser_are_400(app: RunningApp, body: bytes) -> None:
    assert len(body) <= MAX_BODY_BYTES
    answer = app.post("/api/predict", body)
    assert answer.status == 400
    assert answer.json()["error"].startswith("request body is not valid JSON")


def test_a_json_level_beyond_the_float_range_is_400(app: RunningApp) -> None:
    huge = b"1" + b"0" * 400
    answer = app.post("/api/predict", b'{"scores": {"hle": 20}, "level": ' + huge + b"}")
    assert answer.status == 400
    assert answer.json() == {"error": "level must lie strictly between 0 and 1, got inf"}


@pytest.mark.parametrize(
    ("body", "key"),
    [
        (b'{"scores": {"gpqa_diamond": 80, "gpqa_diamond": 70}}', "gpqa_diamond"),
        (b'{"level": 0.8, "scores": {"hle": 20}, "level": 0.5}', "level"),
    ],
)
def test_repeated_json_keys_are_400_naming_the_key(app: RunningApp, body: bytes, key: str) -> None:
    answer = app.post("/api/predict", body)
    assert answer.status == 400
    assert answer.json() == {"error": f"request body: key {key!r} is given more than once"}


def test_form_with_too_many_fields_says_so(app: RunningApp) -> None:
    form = "&".join(f"p{i}=1" for i in range(25)).encode()
    answer = app.post("/api/predict", form, content_type="application/x-www-form-urlencoded")
    assert answer.status == 400
    assert answer.json() == {"error": "more than 20 form parameters"}


# -------------------------------------------------------------------- Content-Length, desync
def post_with(length_headers: bytes, body: bytes = b"{}") -> bytes:
    return (
        b"POST /api/predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + length_headers
        + b"\r\n"
        + body
    )


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        (b"Content-Length: \xb2\r\n", "invalid Content-Length '\xb2'"),  # '²': isdigit() is True
        (b"Content-Length: \xb9\xb2\r\n", "invalid Content-Length '\xb9\xb2'"),
        (b"Content-Length: +2\r\n", "invalid Content-Length '+2'"),
        (
            b"Content-Length: 2\r\nContent-Length: 50\r\n",
            "invalid Content-Length: the header is given more than once",
        ),
        (
            b"Content-Length: 2\r\nContent-Length: 2\r\n",
            "invalid Content-Length: the header is given more than once",
        ),
    ],
)
def test_content_length_must_be_one_ascii_number(
    app: RunningApp, headers: bytes, message: str
) -> None:
    ((status, body),) = answers(exchange(app, post_with(headers)))  # and the server closes
    assert status == 400
    assert error(body) == message


def test_a_content_length_too_long_to_convert_is_413(app: RunningApp) -> None:
    ((status, body),) = answers(
        exchange(app, post_with(b"Content-Length: " + b"9" * 5000 + b"\r\n"))
    )
    assert status == 413 and error(body) == f"request body over {MAX_BODY_BYTES} bytes"


@pytest.mark.parametrize("method", [b"GET", b"HEAD", b"POST"])
@pytest.mark.parametrize("path", [b"/api/versions", b"/"])
def test_a_body_is_never_read_as_the_next_request(
    app: RunningApp, method: bytes, path: bytes
) -> None:
    """The body of a GET (or HEAD, or a POST to a page) is read and dropped: a request hidden
    in it is not answered, and the request after it on the connection is."""
    hidden = b"GET /api/hidden HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    first = method + b" " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    first += b"Content-Length: %d\r\n\r\n" % len(hidden) + hidden
    last = b"GET /api/versions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    data = exchange(app, first + last)
    assert b"/api/hidden" not in data
    statuses = [status for status, _ in answers(data, bodiless=int(method == b"HEAD"))]
    assert statuses == [405 if method == b"POST" else 200, 200]  # POST: pages and versions


def test_idle_connections_time_out() -> None:
    """A connection that sends nothing is closed (10 s in the app: the header deadline)."""
    assert DEFAULT_LIMITS.header_seconds == 10
    catalog = Catalog(stores=[bundled_snapshot_dir()])
    running = RunningApp(
        make_server(catalog=catalog, quiet=True, limits=Limits(header_seconds=0.5))
    )
    try:
        host, port = running.server.server_address[:2]
        with socket.create_connection((host, port), timeout=60) as conn:
            # closed by the server (b""): our own 60 s timeout would raise TimeoutError
            assert conn.recv(1024) == b""
    finally:
        running.stop()


# ---------------------------------------------------------------------------- cross-site
@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site"},  # <img src="http://127.0.0.1:8765/api/probes?...">
        {"Sec-Fetch-Site": "same-site"},  # another port on this host
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
    ],
)
def test_the_api_refuses_other_sites(app: RunningApp, headers: dict[str, str]) -> None:
    for path in ("/api/probes?k=1&targets=chat", "/api/versions"):
        answer = app.request(path, headers=headers)
        assert answer.status == 403, (path, headers)
        assert answer.json() == {
            "error": "the API answers this app's own page only, not other sites"
        }
    page = app.request("/", headers={"Sec-Fetch-Site": "cross-site"})  # a shared link opens
    assert page.status == 200


def test_the_api_answers_its_page_and_plain_clients(app: RunningApp) -> None:
    own = app.url  # http://127.0.0.1:<port>
    for headers in (
        {},
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},
        {"Sec-Fetch-Site": "same-origin", "Origin": own},
    ):
        assert app.request("/api/versions", headers=headers).status == 200, headers
    posted = app.request(
        "/api/predict",
        data=json.dumps({"scores": {"hle": 20}}).encode(),
        headers={"Content-Type": "application/json", "Origin": own},
    )
    assert posted.status == 200


# ------------------------------------------------------------------------- probe searches
class WatchedFlights(dict):
    """`picker`'s searches in flight, counting the requests that found one running for
    their question (and so wait for it instead of searching)."""

    def __init__(self, seen: dict[str, Any], lock: threading.Lock) -> None:
        super().__init__()
        self.seen, self.lock = seen, lock

    def get(self, key: Any, default: Any = None) -> Any:
        found = super().get(key, default)
        if found is not None:
            with self.lock:
                self.seen["joined"] += 1
        return found


class WatchedTurns:
    """`picker`'s limit on searches at once, counting the requests it made wait (those
    that found every turn taken): the real semaphore decides."""

    def __init__(self, turns: Any, seen: dict[str, Any], lock: threading.Lock) -> None:
        self.turns, self.seen, self.lock = turns, seen, lock

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        if self.turns.acquire(blocking=False):
            return True
        with self.lock:
            self.seen["queued"] += 1
        return self.turns.acquire(blocking, timeout)

    def release(self) -> None:
        self.turns.release()


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Count `select_probes` runs and how many overlap; `gate` holds them until it is set.
    `joined`: requests that found an identical search running; `queued`: requests that
    found every search turn taken (events the tests wait for, instead of sleeping)."""
    original = BenchPress.select_probes
    seen: dict[str, Any] = {"calls": 0, "running": 0, "most": 0, "gate": threading.Event()}
    seen.update(joined=0, queued=0)
    lock = threading.Lock()
    monkeypatch.setattr(picker, "_flights", WatchedFlights(seen, lock))
    monkeypatch.setattr(picker, "_searches", WatchedTurns(picker._searches, seen, lock))

    def counted(self: BenchPress, *args: Any, **kwargs: Any) -> Any:
        with lock:
            seen["calls"] += 1
            seen["running"] += 1
            seen["most"] = max(seen["most"], seen["running"])
        try:
            seen["gate"].wait(timeout=120)  # set by the test, or at its end
            return original(self, *args, **kwargs)
        finally:
            with lock:
                seen["running"] -= 1

    monkeypatch.setattr(BenchPress, "select_probes", counted)
    picker.clear_cache()
    yield seen
    seen["gate"].set()
    picker.clear_cache()


def in_parallel(app: RunningApp, paths: list[str]) -> tuple[list[threading.Thread], list[Any]]:
    """GET every path from its own thread; the answers land in the list as they come."""
    results: list[Any] = [None] * len(paths)

    def fetch(i: int) -> None:
        results[i] = app.get(paths[i])

    threads = [threading.Thread(target=fetch, args=(i,)) for i in range(len(paths))]
    for thread in threads:
        thread.start()
    return threads, results


def settle(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive()


def wait_for(condition: Any, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_identical_probe_requests_share_one_search(
    app: RunningApp, searches: dict[str, Any]
) -> None:
    path = "/api/probes?k=3&budget=7.31&targets=chat"
    threads, results = in_parallel(app, [path] * 4)
    wait_for(lambda: searches["calls"] >= 1)
    wait_for(lambda: searches["joined"] >= 3)  # the other three wait for that search
    searches["gate"].set()
    settle(threads)
    assert [r.status for r in results] == [200] * 4
    assert len({r.body for r in results}) == 1
    assert searches["calls"] == 1


def test_probe_searches_run_at_most_a_few_at_once(
    app: RunningApp, searches: dict[str, Any]
) -> None:
    paths = [f"/api/probes?k=2&budget={b}&targets=chat" for b in ("7.41", "7.42", "7.43", "7.44")]
    threads, results = in_parallel(app, paths)
    wait_for(lambda: searches["running"] >= picker.MAX_SEARCHES)
    wait_for(lambda: searches["queued"] >= len(paths) - picker.MAX_SEARCHES)  # held at the turn
    assert searches["running"] == picker.MAX_SEARCHES
    searches["gate"].set()
    settle(threads)
    assert [r.status for r in results] == [200] * 4
    assert searches["calls"] == 4 and searches["most"] == picker.MAX_SEARCHES <= 2


def test_a_probe_request_that_waits_too_long_gets_503(
    app: RunningApp, searches: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(picker, "SEARCH_WAIT_SECONDS", 0.3)
    budgets = [f"7.5{i}" for i in range(picker.MAX_SEARCHES)]
    threads, results = in_parallel(
        app, [f"/api/probes?k=2&budget={b}&targets=chat" for b in budgets]
    )
    wait_for(lambda: searches["running"] == picker.MAX_SEARCHES)
    busy = app.get("/api/probes?k=2&budget=7.59&targets=chat")
    assert busy.status == 503
    assert busy.headers["Retry-After"] == str(picker.RETRY_AFTER_SECONDS)
    assert busy.json()["error"].startswith("the server is busy picking probes")
    searches["gate"].set()
    settle(threads)
    assert [r.status for r in results] == [200] * picker.MAX_SEARCHES
    assert app.get("/api/probes?k=2&budget=7.59&targets=chat").status == 200  # a turn is free


# --------------------------------------------------------------------------------- the log
def test_the_log_escapes_control_characters(capsys: pytest.CaptureFixture[str]) -> None:
    catalog = Catalog(stores=[bundled_snapshot_dir()])
    running = RunningApp(make_server("127.0.0.1", 0, catalog=catalog))  # the log on stderr
    try:
        exchange(
            running,
            b"GET /api/versions\x1b[2J\x1b]0;owned\x07 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Connection: close\r\n\r\n",
        )
    finally:
        running.stop()
    logged = capsys.readouterr().err
    assert "/api/versions\\x1b[2J\\x1b]0;owned\\x07" in logged
    assert "\x1b" not in logged and "\x07" not in logged


def test_the_error_log_escapes_the_path(
    app: RunningApp, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(api, "handle", broken)
    with caplog.at_level(logging.ERROR, logger="benchpress.app"):
        data = exchange(  # percent-encoded: a raw ESC in the request line is refused (a 400)
            app,
            b"GET /api/versions?x=%1b[2J HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        )
    assert answers(data)[0][0] == 500
    (record,) = [r for r in caplog.records if r.name == "benchpress.app"]
    message = record.getMessage()
    assert "GET /api/versions?x=\\x1b[2J failed" in message and "\x1b" not in message


# ------------------------------------------------------------------------ numbers, names
@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("scores=gpqa_diamond=80_0", "score for 'gpqa_diamond' must be a number, got '80_0'"),
        (
            "scores=gpqa_diamond=" + quote("８０"),
            "score for 'gpqa_diamond' must be a number, got '８０'",
        ),
        ("scores=gpqa_diamond=80&level=0_9", "level must be a number, got '0_9'"),
        ("scores=gpqa_diamond=80&level=" + quote("０.９"), "level must be a number, got '０.９'"),
    ],
)
def test_numbers_are_plain_ascii(app: RunningApp, query: str, message: str) -> None:
    answer = app.get(f"/api/predict?{query}")
    assert answer.status == 400
    assert answer.json() == {"error": message}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("targets=chat&k=" + quote("５"), "k must be a number, got '５'"),
        ("targets=chat&budget=1_0", "budget must be a number, got '1_0'"),
    ],
)
def test_probe_numbers_are_plain_ascii(app: RunningApp, query: str, message: str) -> None:
    answer = app.get(f"/api/probes?{query}")
    assert answer.status == 400 and answer.json() == {"error": message}


def test_plain_numbers_still_parse(app: RunningApp) -> None:
    doc = app.get("/api/predict?scores=gpqa_diamond=8e1,hle=%2B20.0&level=.8").json()
    assert doc["probes"] == {"gpqa_diamond": 80.0, "hle": 20.0} and doc["level"] == 0.8


def test_cell_names_the_parameter_of_an_unknown_name(app: RunningApp) -> None:
    model = app.get("/api/cell?model=nobody-at-all&benchmark=hle")
    assert model.status == 404
    assert model.json()["error"].startswith("unknown model 'nobody-at-all'")
    assert model.json()["error"].endswith("(parameter 'model')")
    benchmark = app.get("/api/cell?model=gpt-5.2&benchmark=no_such_benchmark")
    assert benchmark.status == 404
    assert benchmark.json()["error"].startswith("unknown benchmark 'no_such_benchmark'")
    assert benchmark.json()["error"].endswith("(parameter 'benchmark')")


def test_a_broken_newer_snapshot_is_neither_latest_nor_listed(tmp_path, caplog) -> None:
    """One bad folder in the store must not take the page down: the newest readable version
    is `latest`, and /api/versions lists only readable ones."""
    import shutil

    bundled = bundled_snapshot_dir()
    good = next(p.name for p in bundled.iterdir() if (p / "manifest.json").is_file())
    shutil.copytree(bundled / good, tmp_path / good)
    broken = tmp_path / "2099.01.01.1"
    broken.mkdir()
    (broken / "manifest.json").write_text('"not an object"')
    misnamed = tmp_path / "2099.01.02.1"
    shutil.copytree(bundled / good, misnamed)  # its manifest says `good`, not 2099.01.02.1
    catalog = Catalog(store=tmp_path)
    with caplog.at_level(logging.WARNING, logger="benchpress.app"):
        assert catalog.versions() == [good]
        assert catalog.resolve("latest") == good
    assert "skipping snapshot 2099.01.01.1" in caplog.text
    assert "skipping snapshot 2099.01.02.1" in caplog.text
    listed = api.versions(catalog, {})
    assert listed["latest"] == good and [v["version"] for v in listed["versions"]] == [good]
    assert catalog.load("latest").version == good
