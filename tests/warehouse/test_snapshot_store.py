"""Snapshot store: immutable, hashed, versioned; identical content publishes nothing."""

from __future__ import annotations

import json
from datetime import date

import polars as pl
import pytest

from predictor.snapshots.reader import (
    SnapshotError,
    list_versions,
    load_snapshot,
    resolve_version,
    verify,
)
from warehouse.snapshots import SnapshotTables, publish, stage


def tables(score: float = 71.5) -> SnapshotTables:
    cells = pl.DataFrame(
        {"model_id": ["m1", "m2"], "benchmark_id": ["b1", "b1"], "score": [score, 40.0]}
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
        fit={"model_ids": ["m1", "m2"], "benchmark_ids": ["b1"], "state": {}},
    )


def test_staging_is_deterministic(tmp_path) -> None:
    first, _ = stage(tables(), tmp_path / "a", {})
    second, _ = stage(tables(), tmp_path / "b", {})
    changed, _ = stage(tables(score=72.0), tmp_path / "c", {})
    assert first == second
    assert changed != first


def test_publish_versions_parent_and_dedup(tmp_path) -> None:
    store = tmp_path / "store"
    digest, staged = stage(tables(), tmp_path / "staging", {"counts": {"cells": 2}})
    day = date(2026, 11, 30)
    one = publish(staged, store, today=day, elsewhere=[])
    assert (one.version, one.published, one.parent) == ("2026.11.30.1", True, None)
    again = publish(staged, store, today=day, elsewhere=[])
    assert (again.version, again.published) == ("2026.11.30.1", False)
    _, staged2 = stage(tables(score=10.0), tmp_path / "staging", {})
    two = publish(staged2, store, today=day, elsewhere=[])
    assert (two.version, two.parent) == ("2026.11.30.2", "2026.11.30.1")
    three = publish(
        stage(tables(score=11.0), tmp_path / "staging", {})[1],
        store,
        date(2026, 12, 1),
        elsewhere=[],
    )
    assert three.version == "2026.12.01.1"
    assert list_versions(store) == ["2026.11.30.1", "2026.11.30.2", "2026.12.01.1"]
    assert resolve_version("latest", [store]).name == "2026.12.01.1"
    snapshot = load_snapshot(store / "2026.11.30.1")
    assert snapshot.manifest["content_hash"] == digest
    assert snapshot.cells["score"].to_list() == [71.5, 40.0]


def test_a_version_name_never_means_two_contents(tmp_path) -> None:
    """A consumer loads from the local store and the bundled one: a local publish must not
    reuse a bundled version's name for other content, and reuses it for the same content."""
    day = date(2026, 11, 30)
    shipped = tmp_path / "bundled"
    bundled = publish(stage(tables(), tmp_path / "s1", {})[1], shipped, day, elsewhere=[])
    assert bundled.version == "2026.11.30.1"

    other = tmp_path / "other-home"
    changed = publish(
        stage(tables(score=9.0), tmp_path / "s2", {})[1], other, day, elsewhere=[shipped]
    )
    assert (changed.version, changed.parent) == ("2026.11.30.2", None)

    home = tmp_path / "home"
    same = publish(
        stage(tables(), tmp_path / "s3", {})[1], home, date(2026, 12, 5), elsewhere=[shipped]
    )
    assert (same.version, same.published) == ("2026.11.30.1", True)  # same bytes, same name
    assert same.content_hash == bundled.content_hash

    newer = publish(
        stage(tables(score=8.0), tmp_path / "s4", {})[1], home, day, elsewhere=[shipped]
    )
    assert (newer.version, newer.parent) == ("2026.11.30.2", "2026.11.30.1")
    back = publish(stage(tables(), tmp_path / "s5", {})[1], home, day, elsewhere=[shipped])
    assert back.version == "2026.11.30.3"  # the bundled name is older than latest: a new one


def test_tampering_is_detected(tmp_path) -> None:
    store = tmp_path / "store"
    result = publish(stage(tables(), tmp_path / "staging", {})[1], store, date(2026, 11, 30))
    target = result.path / "cells.parquet"
    target.chmod(0o644)
    target.write_bytes(target.read_bytes() + b"x")
    with pytest.raises(SnapshotError, match="cells.parquet has sha256"):
        verify(result.path)


def test_unknown_and_malformed_versions(tmp_path) -> None:
    with pytest.raises(SnapshotError, match="not found"):
        resolve_version("2020.01.01.1", [tmp_path])
    with pytest.raises(SnapshotError, match="not a snapshot version"):
        resolve_version("../../etc", [tmp_path])
    with pytest.raises(SnapshotError, match="no published snapshot"):
        resolve_version("latest", [tmp_path])


def test_residuals_file_is_optional_but_strangers_are_rejected(tmp_path) -> None:
    store = tmp_path / "store"
    residuals = pl.DataFrame(
        {"model_id": ["m1"], "benchmark_id": ["b1"], "observed": [71.5], "predicted": [60.0]}
    )
    with_residuals = SnapshotTables(**{**vars(tables()), "residuals": residuals})
    new = publish(stage(with_residuals, tmp_path / "s1", {})[1], store, date(2026, 11, 30))
    old = publish(stage(tables(score=5.0), tmp_path / "s2", {})[1], store, date(2026, 11, 30))
    assert load_snapshot(new.path).residuals.equals(residuals)
    assert sorted(load_snapshot(new.path).manifest["files"])[-1] == "residuals.parquet"
    assert load_snapshot(old.path).residuals is None
    # A manifest listing a file the format does not know is refused, naming the file.
    manifest_path = old.path / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"]["evil.parquet"] = "0" * 64
    manifest_path.chmod(0o644)
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(SnapshotError, match=r"unknown \['evil.parquet'\]"):
        verify(old.path)
    del manifest["files"]["evil.parquet"], manifest["files"]["fit.json"]
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(SnapshotError, match=r"missing \['fit.json'\]"):
        verify(old.path)
