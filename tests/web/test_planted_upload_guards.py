"""`POST /api/results` (a results file given to the page) over real HTTP: another port of this
very machine is another site (its page gets 403, not the upload), and the upload cap is the
documented 32 MiB (a 33 MiB file is a 413 before its body is read); an Inspect log, which
Inspect's reader reads from a private temporary copy, leaves no temporary folder behind
(read or refused)."""

from __future__ import annotations

import json
import socket
import tempfile
from pathlib import Path

import pytest

from predictor.results import ResultsError, read_results
from predictor.web import workers
from predictor.web.uploads import MAX_UPLOAD_BYTES
from tests.web.conftest import RunningApp
from tests.web.test_web_hardening import answers, error, exchange

OCTET = {"Content-Type": "application/octet-stream"}
TIDY = b"model,benchmark,score\nacme-7b,hle,7\n"
CROSS_SITE = {"error": "the API answers this app's own page only, not other sites"}


def other_ports(port: int) -> list[int]:
    """Ports of 127.0.0.1 other than the app's: the next one, and its leading digits (a port
    whose text is a prefix of the app's)."""
    return [p for p in {port + 1 if port < 65535 else port - 1, port // 10} if p != port]


def test_a_page_on_another_loopback_port_cannot_upload(app: RunningApp) -> None:
    port = app.server.server_address[1]
    assert app.url == f"http://127.0.0.1:{port}"
    for other in other_ports(port):
        origin = f"http://127.0.0.1:{other}"
        answer = app.request(
            "/api/results?name=a.csv", data=TIDY, headers={**OCTET, "Origin": origin}
        )
        assert (answer.status, answer.json()) == (403, CROSS_SITE), origin
    own = app.request(
        "/api/results?name=a.csv",
        data=TIDY,
        headers={**OCTET, "Origin": f"http://127.0.0.1:{port}"},
    )
    assert own.status == 200, own.body
    assert own.json()["probes"][0]["score"] == 7.0


def test_the_upload_cap_is_32_mib() -> None:
    assert MAX_UPLOAD_BYTES == 32 * 2**20 == 33_554_432


@pytest.mark.parametrize("size", [33 * 2**20, 32 * 2**20 + 1])
def test_a_file_over_32_mib_is_413_before_it_is_read(app: RunningApp, size: int) -> None:
    request = (
        b"POST /api/results?name=big.json HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/octet-stream\r\n"
        b"Content-Length: %d\r\n\r\n" % size
    )
    ((status, body),) = answers(exchange(app, request + b"{" + b" " * 65_535))  # the server closes
    assert status == 413
    assert error(body) == (
        "results file over 32 MiB (33554432 bytes), the most the page reads; use "
        "`benchpress predict --from FILE` for larger files"
    )


# ------------------------------------------------------------- an Inspect log leaves nothing
INSPECT_LOG = (
    Path(__file__).resolve().parents[1] / "fixtures/eval_formats/inspect/data_arc_qwen.json"
)


def scratch_entries(root: Path) -> list[str]:
    """Everything under the parse workers' scratch root (their folders and what is in them)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def inspect_log_without_version() -> bytes:
    doc = json.loads(INSPECT_LOG.read_bytes())
    doc.pop("version")
    return json.dumps(doc).encode()


@pytest.mark.parametrize("broken", [False, True], ids=["read", "unreadable"])
def test_an_inspect_upload_leaves_no_temporary_folder(app: RunningApp, broken: bool) -> None:
    data = inspect_log_without_version() if broken else INSPECT_LOG.read_bytes()
    warm = app.request("/api/results?name=warm.csv", data=TIDY, headers=OCTET)
    assert warm.status == 200  # the parse workers run: their scratch folders exist
    pool = workers.shared_pool()
    before = scratch_entries(pool.root)
    assert all(f"{socket.gethostname()}-{pid}" in before for pid in pool.pids)

    answer = app.request(f"/api/results?name={INSPECT_LOG.name}", data=data, headers=OCTET)
    if broken:
        assert answer.status == 400
        assert "Inspect cannot read this log" in answer.json()["error"]
    else:
        assert answer.status == 200, answer.body
        assert answer.json()["format"] == "inspect"
    assert scratch_entries(pool.root) == before  # the log's private copy went with its folder
    assert not any("benchpress-inspect-" in entry for entry in scratch_entries(pool.root))


def test_reading_an_inspect_log_leaves_no_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    frame = read_results(INSPECT_LOG)
    assert set(frame["format"]) == {"inspect"}
    broken = tmp_path / "broken.json"
    broken.write_bytes(inspect_log_without_version())
    with pytest.raises(ResultsError, match="Inspect cannot read this log"):
        read_results(broken)
    assert list(scratch.iterdir()) == []
