"""HTTP plumbing: headers, static files only from static/, caps, methods, Host check, CLI."""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import threading

import pytest

from predictor.web.asgi import STATIC_DIR
from predictor.web.bodies import MAX_BODY_BYTES
from tests.web.conftest import RunningApp

CSP = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"


def raw_request(app: RunningApp, request: bytes) -> tuple[int, bytes]:
    """Send bytes as they are (urllib would normalise the path) and return status and body."""
    host, port = app.server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(request)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/", "text/html; charset=utf-8"),
        ("/static/app.js", "text/javascript; charset=utf-8"),
        ("/static/style.css", "text/css; charset=utf-8"),
        ("/static/favicon.svg", "image/svg+xml"),
        ("/api/versions", "application/json; charset=utf-8"),
    ],
)
def test_security_headers_and_content_types(app: RunningApp, path: str, content_type: str) -> None:
    answer = app.get(path)
    assert answer.status == 200
    assert answer.headers["Content-Type"] == content_type
    assert answer.headers["Content-Security-Policy"] == CSP
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert answer.headers["X-Frame-Options"] == "DENY"
    assert answer.headers["Referrer-Policy"] == "no-referrer"


def test_index_has_no_inline_script_or_style(app: RunningApp) -> None:
    html = app.get("/").body.decode()
    assert '<script type="module" src="/static/app.js"></script>' in html
    assert html.count("<script") == 1 and "<style" not in html and "style=" not in html
    assert "http://" not in html and "https://" not in html  # nothing from the internet
    for name in ("app.js", "dom.js", "charts.js", "heatmap.js", "api.js", "probes.js"):
        script = (STATIC_DIR / name).read_text()
        assert ".innerHTML" not in script and ".outerHTML" not in script
        assert "insertAdjacentHTML" not in script and "document.write" not in script
        assert "eval(" not in script and "new Function" not in script
        local = script.replace("http://www.w3.org/2000/svg", "")  # a namespace, not a fetch
        assert "http://" not in local and "https://" not in local


@pytest.mark.parametrize(
    "path",
    [
        "/static/../server.py",
        "/static/..%2fserver.py",
        "/static/%2e%2e/api.py",
        "/static/../../api.py",
        "/static//etc/passwd",
        "/../../../../etc/passwd",
        "/static/",
        "/static/.hidden",
        "/server.py",
    ],
)
def test_no_path_traversal(app: RunningApp, path: str) -> None:
    status, body = raw_request(
        app, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
    )
    assert status == 404
    assert json.loads(body)["error"].startswith("not found")


def test_unknown_endpoint_and_methods(app: RunningApp) -> None:
    missing = app.get("/api/nothing")
    assert missing.status == 404 and missing.json()["error"].startswith("no such endpoint")
    post = app.post("/api/versions", {})
    assert post.status == 405 and post.headers["Allow"] == "GET, HEAD"
    put = app.request("/api/predict", data=b"{}", method="PUT")
    assert put.status == 405
    head = app.request("/api/versions", method="HEAD")
    assert head.status == 200 and head.body == b""
    assert int(head.headers["Content-Length"]) > 0


def test_request_bodies_are_capped_and_checked(app: RunningApp) -> None:
    big = app.post("/api/predict", b"x" * (MAX_BODY_BYTES + 1))
    assert big.status == 413
    assert big.json() == {"error": f"request body over {MAX_BODY_BYTES} bytes"}
    broken = app.post("/api/predict", b"{not json")
    assert broken.status == 400 and broken.json()["error"].startswith("request body is not valid")
    listed = app.post("/api/predict", [1, 2])
    assert listed.json() == {"error": "request body must be a JSON object"}
    text = app.post("/api/predict", b"scores=x", content_type="text/plain")
    assert text.status == 415
    both = app.post("/api/predict?scores=hle=1", {"scores": {"hle": 2}})
    assert both.json() == {"error": "parameter 'scores' is given more than once"}


def test_too_many_parameters(app: RunningApp) -> None:
    query = "&".join(f"p{i}=1" for i in range(30))
    answer = app.get(f"/api/versions?{query}")
    assert answer.status == 400 and "parameters" in answer.json()["error"]


def test_host_header_must_be_loopback(app: RunningApp) -> None:
    """A DNS-rebinding page (Host: evil.example) cannot read the API."""
    status, body = raw_request(
        app, b"GET /api/versions HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n"
    )
    assert status == 400 and b"unexpected Host header" in body
    for host in ("localhost:1", "127.0.0.1", "[::1]:8765"):
        status, _ = raw_request(
            app, f"GET /api/versions HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
        )
        assert status == 200, host


def test_keep_alive_serves_several_requests(app: RunningApp) -> None:
    host, port = app.server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        for _ in range(3):
            conn.request("GET", "/api/versions")
            answer = conn.getresponse()
            assert answer.status == 200 and json.loads(answer.read())["versions"]
    finally:
        conn.close()


def test_cli_register_serves_the_app(capsys: pytest.CaptureFixture[str]) -> None:
    """`benchpress app --port 0` through `register`, stopped from another thread."""
    from predictor.cli import app as cli_app
    from predictor.util.paths import bundled_snapshot_dir
    from predictor.web import server as server_module

    parser = argparse.ArgumentParser(prog="benchpress")
    cli_app.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["app", "--port", "0", "--store", str(bundled_snapshot_dir()), "--quiet"]
    )
    assert (args.host, args.func) == ("127.0.0.1", cli_app.cmd_app)
    started: list[server_module.AppServer] = []
    original = server_module.make_server

    def capture(*a: object, **k: object) -> server_module.AppServer:
        started.append(original(*a, **k))  # type: ignore[arg-type]
        return started[-1]

    server_module.make_server = capture  # type: ignore[assignment]
    try:
        runner = threading.Thread(target=args.func, args=(args,), daemon=True)
        runner.start()
        for _ in range(200):
            if started and started[0].socket:
                break
            threading.Event().wait(0.02)
        conn = http.client.HTTPConnection(*started[0].server_address[:2], timeout=10)
        conn.request("GET", "/api/versions")
        assert conn.getresponse().status == 200
        conn.close()
        started[0].shutdown()
        runner.join(timeout=10)
    finally:
        server_module.make_server = original  # type: ignore[assignment]
    out = capsys.readouterr().out
    assert "benchpress app: serving on http://127.0.0.1:" in out


def test_cli_rejects_a_bad_port() -> None:
    from predictor.cli import app as cli_app

    args = argparse.Namespace(host="127.0.0.1", port=70000, store=None, quiet=True)
    with pytest.raises(ValueError, match="--port must lie in 0-65535"):
        cli_app.cmd_app(args)
