"""The snapshot shipped in the package is exactly what the pipeline builds from the recorded
payloads: rebuilding it gives the same content hash (deterministic, byte for byte)."""

from __future__ import annotations

import pytest

from pipelines.bundle import build_from_replay
from predictor.paths import bundled_snapshot_dir
from predictor.snapshots import list_versions, listed_files, read_manifest, verify

pytestmark = pytest.mark.slow


def test_rebuilding_from_recorded_payloads_gives_the_bundled_content(tmp_path) -> None:
    versions = list_versions(bundled_snapshot_dir())
    assert len(versions) == 1, "exactly one snapshot ships in the package"
    bundled = verify(bundled_snapshot_dir() / versions[0])
    rebuilt = read_manifest(build_from_replay(tmp_path / "home"))
    assert listed_files(rebuilt, "rebuilt") == listed_files(bundled, "bundled")
    for name in listed_files(bundled, "bundled"):
        assert rebuilt["files"][name] == bundled["files"][name], (
            f"{name} differs from the bundled snapshot: run `make bundle` after changing "
            "sources, identity tables or the fit"
        )
    assert rebuilt["content_hash"] == bundled["content_hash"]
    assert bundled["counts"]["models"] >= 80 and bundled["counts"]["benchmarks"] >= 100
