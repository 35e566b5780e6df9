"""The `benchpress` command as a user runs it (a real subprocess of the installed script)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.sources import SOURCES
from predictor.snapshots.reader import list_versions
from predictor.util.paths import bundled_snapshot_dir
from tests.support.shared_home import CliRefreshed

BIN = Path(sys.executable).parent / "benchpress"


def run(
    *args: str, home: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BENCHPRESS_HOME": str(home), **(env or {})}
    return subprocess.run(
        [str(BIN), *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_predict_json_from_the_bundled_snapshot(tmp_path) -> None:
    done = run("predict", "--scores", "gpqa_diamond=80,hle=20", "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    rows = {row["benchmark"]: row for row in doc["predictions"]}
    assert rows["gpqa_diamond"]["observed"] is True and rows["gpqa_diamond"]["score"] == 80
    assert rows["mmlu_pro"]["low"] <= rows["mmlu_pro"]["score"] <= rows["mmlu_pro"]["high"]
    assert doc["level"] == 0.9


def test_predict_table_and_errors(tmp_path) -> None:
    done = run("predict", "--scores", "gpqa_diamond=80", home=tmp_path)
    assert done.returncode == 0
    assert done.stdout.splitlines()[1].split()[:4] == ["benchmark", "score", "90%", "interval"]
    bad = run("predict", "--scores", "gpqa_diamnd=80", home=tmp_path)
    assert bad.returncode == 2
    assert "unknown benchmark 'gpqa_diamnd'; did you mean: gpqa_diamond" in bad.stderr
    junk = run("predict", "--scores", "gpqa_diamond", home=tmp_path)
    assert junk.returncode == 2 and "expected name=value" in junk.stderr


def test_sources_json_lists_urls_and_replay_root(tmp_path) -> None:
    done = run("sources", "--json", home=tmp_path)
    doc = json.loads(done.stdout)
    assert [s["id"] for s in doc["sources"]] == list(SOURCES)
    livebench = next(s for s in doc["sources"] if s["id"] == "livebench")
    assert livebench["urls"][0] == "https://livebench.ai/table_2026_01_08.csv"
    assert Path(doc["replay_root"]).is_dir()


@pytest.mark.slow
def test_refresh_then_list_stats_and_show(cli_refreshed_home: CliRefreshed) -> None:
    # `benchpress refresh --mode replay --progress` (the session's, tests/conftest.py): the bar
    # goes to stderr only, what the refresh prints is the same with or without it
    home, done = cli_refreshed_home.home, cli_refreshed_home.done
    assert done.returncode == 0, done.stderr
    assert "snapshot published" in done.stdout
    # the recorded payloads are the bundled snapshot's inputs: its content, on any CPU
    (bundled,) = list_versions(bundled_snapshot_dir())
    assert (
        f"snapshot published {bundled} (the bundled snapshot's content, unchanged: this run "
        "had its inputs)"
    ) in done.stdout
    listing = json.loads(run("snapshots", "list", "--json", home=home).stdout)
    local = [row for row in listing if row["store"] == str(home / "snapshots")]
    assert len(local) == 1 and local[0]["models"] >= 80
    stats = json.loads(run("warehouse", "stats", "--json", home=home).stdout)
    assert set(stats["sources"]) == set(SOURCES)
    assert stats["sources"]["livebench"]["rows"] == 2921
    assert stats["matrix"]["models"] == local[0]["models"]
    show = json.loads(run("snapshots", "show", local[0]["version"], "--json", home=home).stdout)
    assert show["content_hash"].startswith(local[0]["content_hash"])

    # a shared store holding this version with other content: the push fails after the local
    # publish, and the message says so with the real reason (not Dagster's step wrapper)
    version = local[0]["version"]
    remote = home.parent / "shared" / version
    remote.mkdir(parents=True)
    (remote / "manifest.json").write_text(json.dumps({**show, "content_hash": "0" * 64}))
    done = run("refresh", home=home, env={"BENCHPRESS_PUBLISH_URI": str(remote.parent)})
    assert done.returncode == 1, done.stderr
    pushed = f"published_snapshot: snapshot unchanged, latest is {version} locally, not pushed: "
    assert f"step failed: {pushed}{remote.parent} has snapshot {version}" in done.stderr
    assert "the stores diverged" in done.stderr and "DagsterExecution" not in done.stderr
    assert f"snapshot unchanged, latest is {version} locally, but the refresh" in done.stderr
    assert "did not publish" not in done.stderr


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"BENCHPRESS_FETCH_MODE": "mirror"},
            "mode 'mirror' needs a mirror base URL (BENCHPRESS_HTTP_MIRROR)",
        ),
        ({"BENCHPRESS_CHECK_MIN_MODELS": "abc"}, "BENCHPRESS_CHECK_MIN_MODELS='abc' is not"),
        ({"BENCHPRESS_ACCEPT_DRIFT": "foo"}, "unknown drift check(s) ['foo']"),
    ],
)
def test_refresh_with_a_setting_that_cannot_work_stops_before_running(
    tmp_path, env: dict[str, str], message: str
) -> None:
    done = run("refresh", home=tmp_path, env=env)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"benchpress: error: {message}")
    assert not (tmp_path / "warehouse.duckdb").exists()  # nothing ran
