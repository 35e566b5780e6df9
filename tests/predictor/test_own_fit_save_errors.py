"""Issue 38, inputs: `BenchPress.fit` says where its interval calibration came from, and
`BenchPress.save` fails with a message saying why (a store path that is a file, a folder above
it that is a file, a folder that cannot be written) and passes over a stray folder or file named
like the version it would take."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest

from predictor import BenchPress
from predictor.fit.calibration_cache import CACHE_ENV
from predictor.fit.own_matrix import save_snapshot
from predictor.snapshots.reader import SnapshotError, list_versions
from predictor.snapshots.stores import LocalStore, open_store
from predictor.snapshots.writer import next_version
from predictor.util.paths import bundled_snapshot_dir

SMALL = {"rank": 2, "n_chains": 2, "n_burn": 5, "n_samples": 5}  # a quick fit


def frame() -> pl.DataFrame:
    rows = [
        {"model": f"m{i}", "benchmark": f"b{j}", "score": 15.0 + 6.0 * i + 4.0 * j + (i * j) % 3}
        for i in range(8)
        for j in range(5)
    ]
    return pl.DataFrame(rows)


@pytest.fixture(scope="module")
def fitted() -> BenchPress:
    return BenchPress.fit(frame(), **SMALL)


def test_a_calibration_read_from_the_cache_is_recorded_in_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "calibrations"
    monkeypatch.setenv(CACHE_ENV, str(cache))
    first = BenchPress.fit(frame(), **SMALL)
    assert first.manifest["calibration"] == {"source": "computed"}
    (entry,) = cache.glob("*.json")
    again = BenchPress.fit(frame(), **SMALL)
    assert again.manifest["calibration"] == {
        "source": "cache",
        "cache_key": entry.stem,
        "cache_entry": str(entry),
    }
    # the record is about this fit, not its content: the saved snapshot is the same
    store = tmp_path / "store"
    assert again.save(store) == first.save(store)


def test_saving_to_a_path_that_is_a_file_says_so(fitted: BenchPress, tmp_path: Path) -> None:
    a_file = tmp_path / "store.txt"
    a_file.write_text("not a folder")
    with pytest.raises(SnapshotError) as caught:
        fitted.save(a_file)
    assert str(caught.value) == f"snapshot store {a_file} is a file, not a folder"
    with pytest.raises(SnapshotError) as caught:
        fitted.save(a_file / "snapshots")
    assert str(caught.value) == (
        f"cannot create snapshot store {a_file / 'snapshots'}: {a_file} is a file"
    )
    assert a_file.read_text() == "not a folder"


@contextmanager
def read_only(folder: Path) -> Iterator[str]:
    """`folder` made unwritable for this process, yielding the reason a write then fails
    with: its mode for a user; for root (whom modes do not stop) the immutable attribute,
    where the file system and the container allow it (else the test is skipped)."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield "permission denied"
        finally:
            folder.chmod(0o755)
        return
    chattr = shutil.which("chattr")
    if (
        chattr is None
        or subprocess.run([chattr, "+i", str(folder)], capture_output=True).returncode
    ):
        pytest.skip("root, and no immutable attribute here: nothing stops a write")
    try:
        yield "operation not permitted"
    finally:
        subprocess.run([chattr, "-i", str(folder)], check=True)


def test_saving_to_a_read_only_store_names_the_store(fitted: BenchPress, tmp_path: Path) -> None:
    store = tmp_path / "read-only"
    store.mkdir()
    with read_only(store) as reason, pytest.raises(SnapshotError) as caught:
        fitted.save(store)
    # the store, and why: not the temporary folder the copy was staged in
    assert str(caught.value) == f"cannot write to snapshot store {store}: {reason}"
    assert list(store.iterdir()) == []


def test_a_stray_folder_named_like_the_next_version_is_passed_over(
    fitted: BenchPress, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    day = date(2031, 1, 2)
    (store / "2031.01.02.1").mkdir()  # a folder without a snapshot (a failed copy, a mkdir)
    (store / "2031.01.02.2").write_text("junk")  # a file under a version's name
    version = save_snapshot(fitted.snapshot, open_store(store), today=day)
    assert version == "2031.01.02.3"
    assert list_versions(store) == ["2031.01.02.3"]
    assert BenchPress.load(version, store=store).fit_models_ == fitted.fit_models_
    assert sorted(p.name for p in (store / "2031.01.02.1").iterdir()) == []  # left alone
    # through `save`, today: the version it would have taken is held by a stray folder
    other = tmp_path / "other"
    other.mkdir()
    today = datetime.now(UTC).date()
    blocked = next_version(list_versions(bundled_snapshot_dir()), today)
    (other / blocked).mkdir()
    saved = fitted.save(other)
    assert saved == next_version([blocked, *list_versions(bundled_snapshot_dir())], today)
    assert list_versions(other) == [saved]


def test_publishing_onto_a_stray_folder_says_what_to_remove(
    fitted: BenchPress, tmp_path: Path
) -> None:
    source = tmp_path / "source"
    version = save_snapshot(fitted.snapshot, open_store(source), today=date(2031, 1, 2))
    target = tmp_path / "target"
    (target / version).mkdir(parents=True)
    with pytest.raises(SnapshotError) as caught:
        LocalStore(target).publish_dir(source / version)
    assert str(caught.value) == (
        f"refusing to publish {version} in {target}: {target / version} is there but holds "
        "no snapshot (no manifest.json); remove it to publish under that version"
    )
