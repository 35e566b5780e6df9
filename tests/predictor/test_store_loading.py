"""Consumers loading pinned snapshots from a shared store over HTTP(S), with an offline cache.

A real `http.server` on 127.0.0.1 serves a store directory as static files, standing in for an
https host (plain http is allowed on loopback only). Snapshots are real: the bundled one plus a
second version published with `warehouse.snapshots`, so predictions can be compared.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import shutil
import ssl
import threading
from collections.abc import Iterator
from datetime import date
from functools import partial
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

import pytest

from predictor import BenchPress
from predictor.snapshots import stores as store_module
from predictor.snapshots.reader import SnapshotError, list_versions, load_snapshot
from predictor.snapshots.stores import (
    INDEX,
    StaleSnapshotWarning,
    StoreUnreachable,
    open_store,
    store_id,
    write_index,
)
from predictor.util.paths import bundled_snapshot_dir
from tests.support.quiet_server import QuietThreadingHTTPServer
from warehouse.snapshots import SnapshotTables, publish, stage

PROBES = {"gpqa_diamond": 80, "hle": 20, "mmlu_pro": 80}
PINNED = list_versions(bundled_snapshot_dir())[-1]
NEWER = "2099.01.01.1"
TRAVERSALS = [
    "../../etc/passwd",
    f"{PINNED}/../../secret",
    f"{PINNED}\n",
    "..",
    "%2e%2e",
    f"{PINNED}?x=1",
    "",
]


def build_store(root: Path) -> Path:
    """A store with the bundled snapshot and a newer version of different content."""
    store = root / "store"
    shutil.copytree(bundled_snapshot_dir() / PINNED, store / PINNED)
    snap = load_snapshot(store / PINNED)
    tables = SnapshotTables(
        snap.cells,
        snap.models,
        snap.benchmarks,
        snap.aliases,
        snap.conflicts,
        {**snap.fit, "test_marker": 2},
    )
    _, staged = stage(tables, root / "staging", {"counts": snap.manifest.get("counts", {})})
    assert publish(staged, store, today=date(2099, 1, 1)).version == NEWER
    write_index(store)
    return store


class StaticServer:
    """A store directory served read-only over HTTP on loopback; counts requests."""

    def __init__(self, root: Path) -> None:
        self.paths: list[str] = []
        server = self

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                server.paths.append(self.path)
                super().do_GET()

        self.httpd = QuietThreadingHTTPServer(
            ("127.0.0.1", 0), partial(Handler, directory=str(root))
        )
        self.httpd.daemon_threads = True
        host, port = self.httpd.server_address[:2]
        self.url = f"http://{host}:{port}/"
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def serve_tls(self, cert: Path, key: Path) -> StaticServer:
        """Switch to https (before the first request) with a certificate for 127.0.0.1."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.url = self.url.replace("http://", "https://")
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A throwaway certificate for 127.0.0.1 (cryptography comes with the test extras)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("source"))


@pytest.fixture
def served(store_dir: Path) -> Iterator[StaticServer]:
    server = StaticServer(store_dir)
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch, benchpress_home: Path) -> None:
    """Unreachable-store tests would otherwise wait out the production backoff."""
    monkeypatch.setattr(store_module, "BACKOFF_SECONDS", 0.01)


def scores(bp: BenchPress) -> dict[str, tuple[float, float, float]]:
    return {b: (p.score, p.low, p.high) for b, p in bp.predict(PROBES).items()}


def test_pinned_and_latest_load_over_http(served: StaticServer, benchpress_home: Path) -> None:
    pinned = BenchPress.load(PINNED, store=served.url)
    assert pinned.version == PINNED
    assert pinned.snapshot.path == benchpress_home / "cache" / store_id(served.url) / PINNED
    assert scores(pinned) == scores(BenchPress.load(PINNED, store=bundled_snapshot_dir()))
    latest = BenchPress.load("latest", store=served.url)
    assert latest.version == NEWER
    assert latest.snapshot.fit["test_marker"] == 2
    assert "/" + INDEX in served.paths  # latest lists through the index


def test_cached_pinned_version_never_touches_the_network(served: StaticServer) -> None:
    first = BenchPress.load(PINNED, store=served.url)
    requests_after_first = len(served.paths)
    again = BenchPress.load(PINNED, store=served.url)
    assert len(served.paths) == requests_after_first
    served.stop()
    offline = BenchPress.load(PINNED, store=served.url)
    assert offline.manifest["content_hash"] == first.manifest["content_hash"]
    assert scores(offline) == scores(first) == scores(again)


def test_latest_falls_back_to_newest_cached_when_unreachable(served: StaticServer) -> None:
    BenchPress.load(PINNED, store=served.url)  # cache only the older version
    served.stop()
    with pytest.warns(StaleSnapshotWarning, match=f"unreachable.*using {PINNED}"):
        bp = BenchPress.load("latest", store=served.url)
    assert bp.version == PINNED


def test_unreachable_with_empty_cache_is_a_clear_error(served: StaticServer) -> None:
    served.stop()
    with pytest.raises(StoreUnreachable, match="no version of it is cached"):
        BenchPress.load("latest", store=served.url)
    with pytest.raises(StoreUnreachable, match=PINNED):
        BenchPress.load(PINNED, store=served.url)


def test_tampered_remote_file_is_rejected_and_not_cached(
    store_dir: Path, tmp_path: Path, benchpress_home: Path
) -> None:
    copy = tmp_path / "tampered"
    shutil.copytree(store_dir, copy)
    target = copy / NEWER / "cells.parquet"
    target.chmod(0o644)
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    server = StaticServer(copy)
    try:
        with pytest.raises(SnapshotError, match=r"cells\.parquet has sha256"):
            BenchPress.load(NEWER, store=server.url)
        cache = benchpress_home / "cache" / store_id(server.url)
        assert sorted(p.name for p in cache.iterdir() if p.is_dir()) == []  # no partial cache
        assert BenchPress.load(PINNED, store=server.url).version == PINNED  # others still fine
    finally:
        server.stop()


def test_manifest_of_another_version_is_rejected(store_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "mixed"
    shutil.copytree(store_dir, copy)
    (copy / NEWER / "manifest.json").chmod(0o644)
    shutil.copyfile(copy / PINNED / "manifest.json", copy / NEWER / "manifest.json")
    server = StaticServer(copy)
    try:
        with pytest.raises(SnapshotError, match=f"describes version '{PINNED}'"):
            open_store(server.url).fetch(NEWER)
    finally:
        server.stop()


@pytest.mark.parametrize("bad", TRAVERSALS)
def test_version_traversal_is_rejected_before_any_request(served: StaticServer, bad: str) -> None:
    with pytest.raises(SnapshotError, match="not a snapshot version"):
        open_store(served.url).fetch(bad)
    with pytest.raises(SnapshotError, match="not a snapshot version"):
        BenchPress.load(bad, store=served.url)
    assert served.paths == []


def test_index_with_traversal_entries_is_rejected(tmp_path: Path) -> None:
    (tmp_path / INDEX).write_text('{"versions": ["2026.11.30.1", "../../etc"]}')
    server = StaticServer(tmp_path)
    try:
        with pytest.raises(SnapshotError, match="invalid versions"):
            open_store(server.url).list_versions()
    finally:
        server.stop()


def test_size_cap_and_corrupted_cache(
    served: StaticServer, monkeypatch: pytest.MonkeyPatch, benchpress_home: Path
) -> None:
    store = open_store(served.url)
    with monkeypatch.context() as patch:
        patch.setattr(store_module, "MAX_FILE_BYTES", 1000)
        with pytest.raises(SnapshotError, match="over the 1000-byte cap"):
            store.fetch(PINNED)
    cached = store.fetch(PINNED)
    victim = cached / "fit.json"
    victim.chmod(0o644)
    victim.write_text("{}")
    with pytest.warns(StaleSnapshotWarning, match="failed verification"):
        assert store.fetch(PINNED) == cached  # downloaded again and verified
    assert load_snapshot(cached).version == PINNED


def test_https_store_verifies_the_server_certificate(
    store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = self_signed(tmp_path)
    server = StaticServer(store_dir).serve_tls(cert, key)
    try:
        with pytest.raises(SnapshotError, match="TLS certificate not trusted"):
            BenchPress.load(PINNED, store=server.url)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trust it, as a private CA would be
        assert BenchPress.load("latest", store=server.url).version == NEWER
        assert BenchPress.load(PINNED, store=server.url).version == PINNED
    finally:
        server.stop()


def test_plain_http_beyond_loopback_and_unknown_schemes_are_refused() -> None:
    with pytest.raises(SnapshotError, match="refusing plain http"):
        open_store("http://example.org/snapshots")
    with pytest.raises(SnapshotError, match="unsupported snapshot store"):
        open_store("ftp://example.org/snapshots")
    with pytest.raises(SnapshotError, match="read-only"):
        open_store("https://example.org/snapshots").publish_dir(bundled_snapshot_dir() / PINNED)


def test_local_paths_and_file_uris_read_in_place(store_dir: Path) -> None:
    for uri in (store_dir, str(store_dir), store_dir.as_uri()):
        store = open_store(uri)
        assert store.list_versions() == [PINNED, NEWER]
        assert store.resolve("latest") == store_dir / NEWER
    assert BenchPress.load(PINNED, store=store_dir.as_uri()).version == PINNED


def test_cli_pull_then_predict_and_list_offline(
    served: StaticServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from predictor.cli import main

    assert main(["snapshots", "pull", PINNED, "--store", served.url]) == 0
    assert "cached at" in capsys.readouterr().out
    served.stop()
    probes = "gpqa_diamond=80,hle=20"
    argv = ["predict", "--scores", probes, "--version", PINNED, "--store", served.url, "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["version"] == PINNED
    assert main(["snapshots", "list", "--store", served.url, "--json"]) == 0
    out, err = capsys.readouterr()
    assert [(row["version"], row["cached"]) for row in json.loads(out)] == [(PINNED, True)]
    assert "listing cached versions only" in err
    assert main(["predict", "--scores", probes, "--store", served.url]) == 0
    assert "newest cached version" in capsys.readouterr().err
