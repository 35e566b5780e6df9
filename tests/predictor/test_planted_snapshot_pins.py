"""A snapshot pin (`VERSION@sha256:HEX`) is compared in full: a pin whose digest differs from
the manifest's only in its LAST hex digit is refused (a prefix compare would accept it), on a
local store, over HTTP, and for a version already in the local cache (a cached version is still
checked against its pin, online and offline).

Real snapshots published with `warehouse.snapshots` into tmp_path, a real http.server on
loopback for the remote store, the real CLI. The matrix is tiny (no fit to predict with): a
right pin is shown to load through the store (`open_store(...).resolve`), a wrong one to be
refused by `BenchPress.load` itself."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest

from predictor import BenchPress
from predictor.cli import main
from predictor.snapshots import stores as store_module
from predictor.snapshots.reader import SnapshotError, load_snapshot
from predictor.snapshots.stores import open_store, store_id
from tests.support.snapshots import StaticStore, writable_copy
from warehouse.snapshots import SnapshotTables, publish, stage

V = "2099.01.01.1"


def tiny_tables() -> SnapshotTables:
    cells = pl.DataFrame(
        {"model_id": ["m1", "m2"], "benchmark_id": ["b1", "b1"], "score": [71.5, 40.0]}
    )
    return SnapshotTables(
        cells=cells,
        models=pl.DataFrame({"model_id": ["m1", "m2"]}),
        benchmarks=pl.DataFrame({"benchmark_id": ["b1"], "scale": ["percent"]}),
        aliases=pl.DataFrame({"kind": ["model"], "source": ["s"], "name": ["M1"], "id": ["m1"]}),
        conflicts=pl.DataFrame(
            {"model_id": [], "benchmark_id": []},
            schema={"model_id": pl.String, "benchmark_id": pl.String},
        ),
        fit={"model_ids": ["m1", "m2"], "benchmark_ids": ["b1"]},
    )


@pytest.fixture
def store(tmp_path: Path) -> Path:
    _, staged = stage(tiny_tables(), tmp_path / "staging", {})
    assert publish(staged, tmp_path / "tiny", today=date(2099, 1, 1), elsewhere=[]).version == V
    return writable_copy(tmp_path / "tiny", tmp_path / "store")


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch, benchpress_home: Path) -> None:
    monkeypatch.setattr(store_module, "BACKOFF_SECONDS", 0.01)


def recorded_digest(store: Path) -> str:
    return (store / V / "digest").read_text().strip()


def last_digit_changed(digest: str) -> str:
    """The same digest with only its last hex digit changed (same length, same prefix)."""
    wrong = digest[:-1] + ("0" if digest[-1] != "0" else "1")
    assert wrong != digest and wrong[:-1] == digest[:-1] and len(wrong) == len(digest) == 71
    return wrong


def refusal(wrong: str, digest: str) -> str:
    return (
        f"snapshot {V}: expected digest {wrong}, found {digest} (not the manifest that was pinned)"
    )


def test_a_pin_wrong_only_in_its_last_digit_is_refused_on_a_local_store(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    digest = recorded_digest(store)
    wrong = last_digit_changed(digest)
    with pytest.raises(SnapshotError) as caught:
        BenchPress.load(f"{V}@{wrong}", store=store)
    assert str(caught.value) == refusal(wrong, digest)

    code = main(["snapshots", "show", f"{V}@{wrong}", "--store", str(store)])
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert refusal(wrong, digest) in err

    assert load_snapshot(open_store(store).resolve(V, digest), V, digest).digest == digest


def test_a_cached_version_is_still_checked_against_a_pin_wrong_in_its_last_digit(
    store: Path, benchpress_home: Path, fast_retries: None
) -> None:
    digest = recorded_digest(store)
    wrong = last_digit_changed(digest)
    server = StaticStore(store)
    try:
        cache = benchpress_home / "cache" / store_id(server.url)
        assert open_store(server.url).resolve(V) == cache / V  # downloaded and cached, unpinned
        requests = len(server.paths)
        with pytest.raises(SnapshotError) as caught:
            BenchPress.load(f"{V}@{wrong}", store=server.url)
        assert str(caught.value) == refusal(wrong, digest)
        assert len(server.paths) == requests  # judged on the cached copy, nothing downloaded
    finally:
        server.stop()
    # offline: only the cache can answer, and it still refuses the wrong pin
    with pytest.raises(SnapshotError) as caught:
        BenchPress.load(f"{V}@{wrong}", store=server.url)
    assert str(caught.value) == refusal(wrong, digest)
    assert (cache / V / "manifest.json").is_file()  # a wrong pin does not drop the cache
    assert open_store(server.url).resolve(V, digest) == cache / V  # the right pin: offline


def test_a_pin_wrong_only_in_its_last_digit_is_refused_before_downloading(
    store: Path, benchpress_home: Path, fast_retries: None
) -> None:
    digest = recorded_digest(store)
    wrong = last_digit_changed(digest)
    server = StaticStore(store)
    try:
        with pytest.raises(SnapshotError) as caught:
            BenchPress.load(f"{V}@{wrong}", store=server.url)
        assert str(caught.value) == refusal(wrong, digest)
        assert not any(path.endswith(".parquet") for path in server.paths)
        assert not (benchpress_home / "cache" / store_id(server.url) / V).exists()
    finally:
        server.stop()
