"""Where state lives: BENCHPRESS_HOME when set, else the user's data directory, never the
folder a command happens to run in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from platformdirs import user_data_dir

from predictor.snapshots.reader import list_versions
from predictor.util.paths import (
    benchpress_home,
    bundled_snapshot_dir,
    home_origin,
    snapshot_store_dir,
)

BENCHPRESS = str(Path(sys.executable).parent / "benchpress")


def test_default_home_is_the_user_data_directory_whatever_the_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("BENCHPRESS_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    expected = Path(user_data_dir("benchpress", appauthor=False)).resolve()
    assert expected == (tmp_path / "data" / "benchpress").resolve()
    for folder in (tmp_path / "a", tmp_path / "b"):
        folder.mkdir()
        monkeypatch.chdir(folder)
        assert benchpress_home() == expected
        assert snapshot_store_dir() == expected / "snapshots"
    assert home_origin() == "the default"


def test_the_variable_overrides_the_default(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHPRESS_HOME", str(tmp_path / "team"))
    assert benchpress_home() == (tmp_path / "team").resolve()
    assert home_origin() == "BENCHPRESS_HOME"


def test_cli_from_two_folders_sees_one_store(tmp_path):
    """A snapshot list run from another folder sees the same (empty) home store as from the
    first: the old default (./.benchpress) silently fell back to the bundled snapshot only."""
    env = {k: v for k, v in os.environ.items() if k != "BENCHPRESS_HOME"}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    store = tmp_path / "data" / "benchpress" / "snapshots"
    version = list_versions(bundled_snapshot_dir())[0]
    shutil.copytree(bundled_snapshot_dir() / version, store / version)  # as a publish leaves it
    outputs = []
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        listed = subprocess.run(
            [BENCHPRESS, "snapshots", "list", "--json"],
            cwd=tmp_path / folder,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(listed.stdout)
    assert outputs[0] == outputs[1]
    rows = json.loads(outputs[0])
    assert any(r["version"] == version and r["store"] == str(store.resolve()) for r in rows)
    assert not (tmp_path / "one" / ".benchpress").exists()
