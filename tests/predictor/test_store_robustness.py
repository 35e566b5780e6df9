"""One bad folder in a local snapshot store must not break the default commands; a folder must
hold the version it is named after; store arguments and exit codes follow the usual rules
(usage errors exit 2, failures exit 1, one line on stderr, never a traceback).

Real files in tmp_path, the real CLI (`predictor.cli.main`) and, once, the installed script."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from predictor import BenchPress
from predictor.cli import main
from predictor.snapshots.reader import (
    BrokenSnapshotWarning,
    SnapshotError,
    list_versions,
    read_manifest,
    resolve_version,
    verify,
)
from predictor.snapshots.stores import open_store
from predictor.util.paths import bundled_snapshot_dir
from tests.support.snapshots import resign

BUNDLED = list_versions(bundled_snapshot_dir())[-1]
NEWER = "2099.12.08.1"  # newer than any bundled version, so "latest" would pick it
COPY = "2099.12.07.1"
SCORES = "gpqa_diamond=80"
BIN = Path(sys.executable).parent / "benchpress"
BROKEN_MANIFESTS = {
    "json-string": '"x"\n',
    "no-files": '{"format_version": 1}\n',
    "not-json": "garbage\n",
    "json-list": "[1, 2]\n",
}


@pytest.fixture
def local_store(benchpress_home: Path) -> Path:
    """BENCHPRESS_HOME's store (searched before the bundled one by the default commands)."""
    store = benchpress_home / "snapshots"
    store.mkdir(parents=True)
    return store


def add_broken(store: Path, text: str, version: str = NEWER) -> Path:
    folder = store / version
    folder.mkdir()
    (folder / "manifest.json").write_text(text, "utf-8")
    return folder


def add_copy(store: Path, version: str = COPY) -> Path:
    """The bundled snapshot copied by hand under another version's name."""
    return Path(shutil.copytree(bundled_snapshot_dir() / BUNDLED, store / version))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert "Traceback" not in err
    assert lines[-1].startswith("benchpress: error: "), err
    return lines[-1]


# ------------------------------------------------------------ bug 1: broken manifests
@pytest.mark.parametrize("text", BROKEN_MANIFESTS.values(), ids=BROKEN_MANIFESTS.keys())
def test_read_manifest_names_the_file_of_a_broken_manifest(tmp_path: Path, text: str) -> None:
    folder = add_broken(tmp_path, text)
    with pytest.raises(SnapshotError, match=r"2099\.12\.08\.1/manifest\.json"):
        read_manifest(folder)


def test_read_manifest_requires_hashes_and_a_valid_version(tmp_path: Path) -> None:
    good = read_manifest(bundled_snapshot_dir() / BUNDLED)
    cases = {
        "content_hash": {**good, "content_hash": None},
        "invalid version": {**good, "version": ["2026.11.30.1"]},
        "hashes must be strings": {**good, "files": dict.fromkeys(good["files"], 1)},
    }
    for message, manifest in cases.items():
        folder = tmp_path / message.replace(" ", "-")
        folder.mkdir()
        (folder / "manifest.json").write_text(json.dumps(manifest), "utf-8")
        with pytest.raises(SnapshotError, match=message):
            read_manifest(folder)


@pytest.mark.parametrize("text", BROKEN_MANIFESTS.values(), ids=BROKEN_MANIFESTS.keys())
def test_predict_latest_skips_a_broken_newest_version(
    capsys: pytest.CaptureFixture[str], local_store: Path, text: str
) -> None:
    add_broken(local_store, text)
    code, out, err = cli(capsys, "predict", "--scores", SCORES, "--json")
    assert code == 0, err
    assert json.loads(out)["version"] == BUNDLED
    assert f"benchpress: warning: skipping snapshot {NEWER}: " in err
    assert "manifest.json" in err and "Traceback" not in err


def test_latest_picks_the_newest_valid_version_and_warns(local_store: Path) -> None:
    add_copy(local_store, "2099.12.06.1")
    (local_store / "2099.12.06.1" / "manifest.json").chmod(0o644)
    manifest = read_manifest(local_store / "2099.12.06.1")
    resign(local_store / "2099.12.06.1", {**manifest, "version": "2099.12.06.1"})  # digest too
    add_broken(local_store, '"x"')
    stores = [local_store, bundled_snapshot_dir()]
    with pytest.warns(BrokenSnapshotWarning, match=NEWER):
        assert resolve_version("latest", stores) == local_store / "2099.12.06.1"
    with pytest.warns(BrokenSnapshotWarning, match=NEWER):
        assert open_store(local_store).resolve("latest") == local_store / "2099.12.06.1"


def test_latest_with_only_broken_versions_is_an_error(tmp_path: Path) -> None:
    add_broken(tmp_path, '"x"')
    with pytest.warns(BrokenSnapshotWarning), pytest.raises(SnapshotError, match="all broken"):
        resolve_version("latest", [tmp_path])


@pytest.mark.parametrize("text", BROKEN_MANIFESTS.values(), ids=BROKEN_MANIFESTS.keys())
def test_list_marks_the_broken_version_and_shows_the_good_ones(
    capsys: pytest.CaptureFixture[str], local_store: Path, text: str
) -> None:
    add_broken(local_store, text)
    code, out, err = cli(capsys, "snapshots", "list", "--json")
    assert code == 0, err
    rows = {(row["version"], row["store"]): row for row in json.loads(out)}
    broken = rows[(NEWER, str(local_store))]
    assert broken["status"] == "broken" and "manifest.json" in broken["error"]
    assert broken["models"] is None
    good = rows[(BUNDLED, str(bundled_snapshot_dir()))]
    assert good["status"] == "ok" and good["error"] == "" and good["models"] > 0
    assert f"benchpress: warning: broken snapshot {NEWER}: " in err

    code, out, _ = cli(capsys, "snapshots", "list")
    assert code == 0
    header, *lines = out.splitlines()
    assert "status" in header.split()
    broken_line = next(line for line in lines if line.startswith(NEWER))
    assert "broken" in broken_line.split() and "None" not in broken_line
    assert any(line.startswith(BUNDLED) and " ok " in line for line in lines)

    code, out, _ = cli(capsys, "snapshots", "list", "--csv")
    frame = pl.read_csv(io.StringIO(out))
    assert code == 0 and frame.columns[-2:] == ["status", "error"]
    assert dict(frame.select("version", "status").rows())[NEWER] == "broken"


@pytest.mark.parametrize("command", ["predict", "show"])
def test_loading_a_broken_version_explicitly_is_one_line_exit_1(
    capsys: pytest.CaptureFixture[str], local_store: Path, command: str
) -> None:
    add_broken(local_store, '"x"')
    argv = (
        ["predict", "--scores", SCORES, "--version", NEWER]
        if command == "predict"
        else ["snapshots", "show", NEWER]
    )
    code, out, err = cli(capsys, *argv)
    assert code == 1 and out == ""
    assert "manifest must be a JSON object" in one_error_line(err)
    assert len(err.strip().splitlines()) == 1


def test_installed_script_survives_a_broken_folder(local_store: Path) -> None:
    add_broken(local_store, '"x"')
    env = {**os.environ, "BENCHPRESS_HOME": str(local_store.parent)}
    done = subprocess.run(
        [str(BIN), "snapshots", "list"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert NEWER in done.stdout and BUNDLED in done.stdout


# ------------------------------------------------- bug 2: folder name vs manifest version
def test_a_copied_folder_is_refused_when_pinned(
    capsys: pytest.CaptureFixture[str], local_store: Path
) -> None:
    add_copy(local_store)
    code, out, err = cli(capsys, "predict", "--scores", SCORES, "--version", COPY)
    assert code == 1 and out == ""
    assert f"{COPY}/manifest.json describes version '{BUNDLED}'" in one_error_line(err)

    code, out, err = cli(capsys, "snapshots", "diff", BUNDLED, COPY)
    assert code == 1 and f"{BUNDLED} -> {BUNDLED}" not in out
    assert "describes version" in one_error_line(err)


def test_a_copied_folder_is_refused_by_the_store_and_verify(local_store: Path) -> None:
    folder = add_copy(local_store)
    with pytest.raises(SnapshotError, match=f"describes version '{BUNDLED}'"):
        BenchPress.load(COPY, store=local_store)
    with pytest.raises(SnapshotError, match=f"describes version '{BUNDLED}'"):
        open_store(local_store).read_manifest(COPY)
    with pytest.raises(SnapshotError, match="describes version"):
        verify(folder, COPY)
    assert verify(folder)["version"] == BUNDLED  # without an expected version: hashes only


def test_a_copied_folder_is_listed_as_broken_and_skipped_by_latest(
    capsys: pytest.CaptureFixture[str], local_store: Path
) -> None:
    add_copy(local_store)
    code, out, err = cli(capsys, "snapshots", "list", "--json")
    assert code == 0
    row = next(row for row in json.loads(out) if row["version"] == COPY)
    assert row["status"] == "broken" and "describes version" in row["error"]
    code, out, err = cli(capsys, "predict", "--scores", SCORES, "--json")
    assert code == 0 and json.loads(out)["version"] == BUNDLED
    assert f"skipping snapshot {COPY}" in err


# ------------------------------------------------------------ bug 3: store arguments
@pytest.mark.parametrize(
    "argv",
    [
        ["snapshots", "list", "--store", ""],
        ["snapshots", "show", "--store", " "],
        ["snapshots", "diff", "a", "b", "--store", ""],
        ["snapshots", "pull", "--store", ""],
        ["predict", "--scores", SCORES, "--store", ""],
        ["suspicious", "--store", ""],  # registered by predictor.cli.trust
    ],
    ids=lambda argv: "-".join(a for a in argv[:2] if not a.startswith("-")),
)
def test_empty_store_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], benchpress_home: Path, argv: list[str]
) -> None:
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == ""
    assert "argument --store: must not be empty" in err


def test_pull_from_a_local_store_says_nothing_is_cached(
    capsys: pytest.CaptureFixture[str], benchpress_home: Path
) -> None:
    store = str(bundled_snapshot_dir())
    code, out, err = cli(capsys, "snapshots", "pull", BUNDLED, "--store", store)
    assert code == 0, err
    assert "verified" in out and "nothing to pull" in out and "cached at" not in out
    assert not (benchpress_home / "cache").exists()


def test_pull_of_a_broken_local_version_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    add_copy(tmp_path)
    code, out, err = cli(capsys, "snapshots", "pull", COPY, "--store", str(tmp_path))
    assert code == 1 and out == ""
    assert "describes version" in one_error_line(err)


@pytest.mark.parametrize(
    "argv",
    [
        ["snapshots", "list"],
        ["predict", "--scores", SCORES],
        ["snapshots", "pull", BUNDLED],
        ["app", "--port", "0"],  # before binding: the page would serve no snapshot at all
    ],
    ids=lambda argv: argv[0] if argv[0] in ("predict", "app") else argv[1],
)
def test_a_store_directory_that_does_not_exist_is_an_error(
    capsys: pytest.CaptureFixture[str], benchpress_home: Path, tmp_path: Path, argv: list[str]
) -> None:
    missing = tmp_path / "no-such-store"
    code, out, err = cli(capsys, *argv, "--store", str(missing))
    assert code == 1 and out == ""
    assert f"snapshot store {missing} does not exist" in one_error_line(err)


def test_an_empty_existing_store_still_lists_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = cli(capsys, "snapshots", "list", "--store", str(tmp_path))
    assert code == 0 and out.strip() == f"no snapshots found in {tmp_path}"


# ------------------------------------------------------------- bug 4: predict exit codes
@pytest.mark.parametrize("level", ["1.5", "0", "nan", "1", "-0.1", "x"])
def test_predict_level_outside_0_1_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], benchpress_home: Path, level: str
) -> None:
    code, out, err = cli(capsys, "predict", "--scores", SCORES, "--level", level)
    assert code == 2 and out == ""
    assert "argument --level" in err


@pytest.mark.parametrize(("level", "label"), [("0.29", "29%"), ("0.925", "92.5%"), ("0.9", "90%")])
def test_predict_header_shows_the_level_without_truncation(
    capsys: pytest.CaptureFixture[str], benchpress_home: Path, level: str, label: str
) -> None:
    code, out, _ = cli(capsys, "predict", "--scores", SCORES, "--level", level)
    assert code == 0
    assert out.splitlines()[0].endswith(f" {label} intervals")


@pytest.mark.parametrize(
    "scores",
    ["gpqa_diamond=80,GPQA Diamond=70", "gpqa_diamond=80,gpqa_diamond=70"],
    ids=["two-spellings", "exact"],
)
def test_duplicate_probes_are_usage_errors(
    capsys: pytest.CaptureFixture[str], benchpress_home: Path, scores: str
) -> None:
    code, out, err = cli(capsys, "predict", "--scores", scores)
    assert code == 2 and out == ""
    line = one_error_line(err)
    first, second = (part.split("=")[0] for part in scores.split(","))
    assert repr(first) in line and (first == second or repr(second) in line)


# ------------------------------------------------- snapshots verify: re-hash the data files
def add_tampered(store: Path, version: str = BUNDLED) -> Path:
    """The bundled snapshot copied under its own version, then one data file changed."""
    folder = Path(shutil.copytree(bundled_snapshot_dir() / BUNDLED, store / version))
    cells = folder / "cells.parquet"
    cells.chmod(0o644)
    cells.write_bytes(cells.read_bytes() + b"\0")
    return folder


def test_verify_catches_a_data_file_changed_after_publishing(
    capsys: pytest.CaptureFixture[str], local_store: Path
) -> None:
    add_tampered(local_store)
    code, out, _ = cli(capsys, "snapshots", "list", "--json", "--store", str(local_store))
    assert code == 0 and json.loads(out)[0]["status"] == "ok"  # the manifest alone is fine

    code, out, _ = cli(capsys, "snapshots", "verify", "--json")
    assert code == 1
    rows = {row["store"]: row for row in json.loads(out)}
    tampered, shipped = rows[str(local_store)], rows[str(bundled_snapshot_dir())]
    assert tampered["version"] == BUNDLED and tampered["status"] == "failed"
    assert "cells.parquet has sha256" in tampered["error"] and tampered["content_hash"] == ""
    assert shipped["status"] == "ok" and shipped["error"] == ""
    assert (
        shipped["content_hash"]
        == read_manifest(bundled_snapshot_dir() / BUNDLED)["content_hash"][:12]
    )

    code, out, _ = cli(capsys, "snapshots", "verify", BUNDLED, "--store", str(local_store))
    header, line = out.splitlines()
    assert code == 1 and header.split()[:3] == ["version", "status", "content_hash"]
    assert line.split()[:2] == [BUNDLED, "failed"]


def test_verify_of_good_versions_exits_0(
    capsys: pytest.CaptureFixture[str], local_store: Path
) -> None:
    add_copy(local_store, BUNDLED)
    code, out, err = cli(capsys, "snapshots", "verify", BUNDLED, "--csv")
    frame = pl.read_csv(io.StringIO(out))
    assert code == 0, err
    assert frame["status"].to_list() == ["ok", "ok"]  # the local copy and the bundled one
    assert sorted(frame["store"].to_list()) == sorted(
        [str(local_store), str(bundled_snapshot_dir())]
    )


def test_verify_names_a_missing_version_and_the_published_ones(
    capsys: pytest.CaptureFixture[str], local_store: Path
) -> None:
    code, out, err = cli(capsys, "snapshots", "verify", "2001.01.01.1")
    assert code == 1 and out == ""
    assert f"snapshot 2001.01.01.1 not found; published versions: ['{BUNDLED}']" in (
        one_error_line(err)
    )


def test_verify_reports_a_broken_manifest_without_stopping(
    capsys: pytest.CaptureFixture[str], local_store: Path
) -> None:
    add_broken(local_store, '"x"')
    code, out, _ = cli(capsys, "snapshots", "verify", "--json")
    rows = {row["version"]: row for row in json.loads(out)}
    assert code == 1
    assert rows[NEWER]["status"] == "failed" and "manifest" in rows[NEWER]["error"]
    assert rows[BUNDLED]["status"] == "ok"
