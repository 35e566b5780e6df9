"""The snapshot shipped in the package is exactly what the pipeline builds from the recorded
payloads: rebuilding it gives the same data files byte for byte, and the same fit (byte for
byte on one machine; to the last bits BLAS kernels of other CPUs change, see
tests/support/snapshots.py)."""

from __future__ import annotations

import pytest

from predictor.snapshots.reader import list_versions, listed_files, read_manifest, verify
from predictor.util.paths import bundled_snapshot_dir, snapshot_store_dir
from tests.support.shared_home import CliRefreshed
from tests.support.snapshots import assert_same_content

pytestmark = pytest.mark.slow


def test_rebuilding_from_recorded_payloads_gives_the_bundled_content(
    cli_refreshed_template: CliRefreshed,
) -> None:
    versions = list_versions(bundled_snapshot_dir())
    assert len(versions) == 1, "exactly one snapshot ships in the package"
    bundled = verify(bundled_snapshot_dir() / versions[0])
    # the rebuild: the session's `benchpress refresh --mode replay` in a new home (the same job
    # on the embedded default as `make bundle`'s pipelines.bundle.build_from_replay), read only
    done = cli_refreshed_template.done
    assert done.returncode == 0, done.stderr[-3000:]
    store = snapshot_store_dir(cli_refreshed_template.home)
    (version,) = list_versions(store)
    rebuilt_dir = store / version
    rebuilt = read_manifest(rebuilt_dir)
    assert listed_files(rebuilt, "rebuilt") == listed_files(bundled, "bundled")
    assert_same_content(rebuilt, bundled, rebuilt_dir, bundled_snapshot_dir() / versions[0])
    assert bundled["counts"]["models"] >= 80 and bundled["counts"]["benchmarks"] >= 100
