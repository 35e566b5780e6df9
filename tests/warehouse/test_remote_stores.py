"""Publishing snapshots to shared stores and loading them back, over real network protocols.

S3: moto's server mode (`moto.server.ThreadedMotoServer`) on 127.0.0.1 is a real S3-compatible
HTTP endpoint; it stands in for AWS S3, which this machine cannot reach. The client code is the
production path (obstore, signed requests, dummy credentials from the environment); only the
endpoint (`AWS_ENDPOINT_URL`) differs. HTTPS: a static `http.server` on loopback serving a
directory that `sync_store` filled, as a web host or CDN would.
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
import threading
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import date
from functools import partial
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

import pytest

from predictor import BenchPress
from predictor.snapshots import stores as store_module
from predictor.snapshots.reader import (
    SnapshotError,
    list_versions,
    load_snapshot,
    read_manifest_check,
)
from predictor.snapshots.stores import INDEX, StaleSnapshotWarning, open_store, write_index
from predictor.util.paths import bundled_snapshot_dir
from tests.support.quiet_server import QuietThreadingHTTPServer
from warehouse.remote import publish_to_store, sync_store
from warehouse.snapshots import SnapshotTables, publish, stage

V1 = list_versions(bundled_snapshot_dir())[-1]
V2 = "2099.01.01.1"
PROBES = {"gpqa_diamond": 80, "hle": 20, "mmlu_pro": 80}


def bundled_tables(marker: int) -> SnapshotTables:
    """The bundled snapshot's tables with a marker in the fit, so the content differs."""
    snap = load_snapshot(bundled_snapshot_dir() / V1)
    fit = {**snap.fit, "test_marker": marker}
    return SnapshotTables(
        snap.cells, snap.models, snap.benchmarks, snap.aliases, snap.conflicts, fit
    )


def build_store(root: Path, marker: int = 2) -> Path:
    """A local store (the pipeline's source of truth): the bundled snapshot, then a newer one."""
    store = root / "store"
    shutil.copytree(bundled_snapshot_dir() / V1, store / V1)
    _, staged = stage(bundled_tables(marker), root / "staging", {})
    assert publish(staged, store, today=date(2099, 1, 1)).version == V2
    write_index(store)
    return store


class S3Server:
    """moto in server mode on loopback; `bucket` is a fresh bucket (moto's state is global)."""

    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        host, port = self.server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        self.bucket = ""

    def new_bucket(self) -> S3Server:
        self.bucket = f"bp-{uuid.uuid4().hex[:12]}"
        request = urllib.request.Request(f"{self.endpoint}/{self.bucket}", method="PUT")
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
        return self

    def use(self, monkeypatch: pytest.MonkeyPatch) -> S3Server:
        """Point the standard AWS variables at this server, with dummy credentials."""
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        monkeypatch.setenv("AWS_ENDPOINT_URL", self.endpoint)
        monkeypatch.setattr(store_module, "BACKOFF_SECONDS", 0.01)
        return self.new_bucket()

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture(scope="module")
def shared_s3() -> Iterator[S3Server]:
    server = S3Server()
    yield server
    server.stop()


@pytest.fixture
def s3(shared_s3: S3Server, monkeypatch: pytest.MonkeyPatch, benchpress_home: Path) -> S3Server:
    return shared_s3.use(monkeypatch)


@pytest.fixture
def own_s3(monkeypatch: pytest.MonkeyPatch, benchpress_home: Path) -> Iterator[S3Server]:
    """A server of the test's own, for tests that take it down."""
    server = S3Server()
    yield server.use(monkeypatch)
    server.stop()


@pytest.fixture(scope="module")
def local_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("source"))


def predictions(bp: BenchPress) -> dict[str, tuple[float, float, float]]:
    return {b: (p.score, p.low, p.high) for b, p in bp.predict(PROBES).items()}


def test_publish_to_s3_then_load_pinned_latest_and_offline(
    own_s3: S3Server, local_store: Path
) -> None:
    uri = f"s3://{own_s3.bucket}/team/snapshots"
    first = publish_to_store(local_store / V1, uri)
    assert (first.version, first.pushed) == (V1, True)
    assert publish_to_store(local_store / V1, uri).pushed is False  # idempotent re-push
    assert publish_to_store(local_store / V2, uri).pushed is True
    store = open_store(uri)
    assert store.list_versions() == [V1, V2]
    index = json.loads(store._read(INDEX, 10_000))  # what https mirrors list
    assert index["versions"] == [V1, V2]

    pinned = BenchPress.load(V1, store=uri)
    assert pinned.version == V1
    assert predictions(pinned) == predictions(BenchPress.load(V1, store=bundled_snapshot_dir()))
    assert BenchPress.load("latest", store=uri).snapshot.fit["test_marker"] == 2

    own_s3.stop()  # offline from here on
    again = BenchPress.load(V1, store=uri)
    assert again.manifest["content_hash"] == pinned.manifest["content_hash"]
    assert predictions(again) == predictions(pinned)
    with pytest.warns(StaleSnapshotWarning, match="unreachable"):
        assert BenchPress.load("latest", store=uri).version == V2  # newest cached


def test_s3_refuses_overwrite_and_divergence(s3: S3Server, local_store: Path, tmp_path) -> None:
    uri = f"s3://{s3.bucket}/snapshots"
    publish_to_store(local_store / V2, uri)
    with pytest.raises(SnapshotError, match=f"refusing to overwrite snapshot {V2}"):
        open_store(uri).publish_dir(local_store / V2)
    other = build_store(tmp_path / "other", marker=3)  # same version string, other content
    with pytest.raises(SnapshotError, match="diverged"):
        publish_to_store(other / V2, uri)
    assert BenchPress.load(V2, store=uri).snapshot.fit["test_marker"] == 2


def test_interrupted_publish_is_invisible_then_resumable(
    s3: S3Server, local_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = f"s3://{s3.bucket}/snapshots"
    store = open_store(uri)
    real_put = store._put
    calls: list[str] = []

    def dies_on_third_upload(key: str, source: Path | bytes, create: bool) -> None:
        calls.append(key)
        if len(calls) == 3:
            raise ConnectionError("publisher crashed")
        real_put(key, source, create)

    monkeypatch.setattr(store, "_put", dies_on_third_upload)
    with pytest.raises(ConnectionError):
        store.publish_dir(local_store / V1)
    assert not any(key.endswith("manifest.json") for key in calls)  # the manifest goes last
    assert open_store(uri).list_versions() == []  # data without a manifest is not a version
    with pytest.raises(SnapshotError, match="not found"):
        open_store(uri).fetch(V1)
    assert publish_to_store(local_store / V1, uri).pushed  # identical leftovers are accepted
    assert BenchPress.load(V1, store=uri).version == V1


def test_tampered_s3_object_is_rejected(s3: S3Server, local_store: Path) -> None:
    import obstore

    uri = f"s3://{s3.bucket}/snapshots"
    sync_store(local_store, uri)
    store = open_store(uri)
    obstore.put(store._store, f"{V2}/fit.json", b"{}")  # someone edits the bucket
    with pytest.raises(SnapshotError, match=r"fit\.json has sha256"):
        BenchPress.load(V2, store=uri)
    assert store.cached_versions() == []


def test_sync_store_pushes_only_what_is_missing(s3: S3Server, local_store: Path) -> None:
    uri = f"s3://{s3.bucket}/mirror"
    publish_to_store(local_store / V1, uri)
    first = sync_store(local_store, uri)
    assert (first.pushed, first.present) == ([V2], [V1])
    second = sync_store(local_store, uri)
    assert (second.pushed, second.present) == ([], [V1, V2])


def test_s3_version_strings_are_validated(s3: S3Server) -> None:
    store = open_store(f"s3://{s3.bucket}/snapshots")
    for bad in ("../../etc", f"{V1}/../x", f"{V1}\n", ".."):
        with pytest.raises(SnapshotError, match="not a snapshot version"):
            store.fetch(bad)
    with pytest.raises(SnapshotError, match="invalid prefix"):
        open_store(f"s3://{s3.bucket}/a/../b")


def test_s3_without_the_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "obstore", None)  # as if `[s3]` was not installed
    with pytest.raises(SnapshotError, match=r"benchpress-llm\[s3\]"):
        open_store("s3://bucket/snapshots")


def test_sync_to_directory_served_over_http(
    local_store: Path, tmp_path: Path, benchpress_home: Path
) -> None:
    """A plain directory as the shared store, hosted as static files: what https consumers see."""
    site = tmp_path / "site"
    assert sync_store(local_store, site).pushed == [V1, V2]
    assert json.loads((site / INDEX).read_text())["versions"] == [V1, V2]
    assert all(not (site / V2 / name).stat().st_mode & 0o222 for name in ("fit.json",))
    server = QuietThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(site)))
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    url = "http://{}:{}/".format(*server.server_address[:2])
    try:
        assert BenchPress.load("latest", store=url).version == V2
        with pytest.raises(SnapshotError, match="read-only"):
            publish_to_store(local_store / V1, url)
    finally:
        server.shutdown()
        server.server_close()
    assert BenchPress.load(V2, store=url).version == V2  # cached: the site is gone


def test_local_publish_keeps_index(tmp_path: Path) -> None:
    store = tmp_path / "store"
    _, staged = stage(bundled_tables(1), tmp_path / "staging", {})
    assert publish(staged, store, today=date(2099, 1, 1)).version == V2
    assert json.loads((store / INDEX).read_text())["versions"] == [V2]  # written by publish
    store = build_store(tmp_path / "two")
    index = store / INDEX
    before = index.stat().st_mtime_ns
    write_index(store)
    assert index.stat().st_mtime_ns == before  # unchanged listing, untouched file
    digests = {v: read_manifest_check(store / v).digest for v in (V1, V2)}
    assert json.loads(index.read_text()) == {
        "format_version": 1,
        "versions": [V1, V2],
        "digests": digests,  # each version's manifest digest, recorded when first indexed
    }


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass
