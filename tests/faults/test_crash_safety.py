"""kill -9 at any stage, then rerun: the same warehouse state and snapshot as an uninterrupted run.

One home is refreshed again and again, each run SIGKILLed at a later stage (during ingest, in
normalization, in the middle of the fit, at publishing), then a last run completes. After every
crash the warehouse opens and every published snapshot still verifies; at the end the archived
payloads (sha256), successful parses, source scores, normalized scores, matrix cells, staged
snapshots and the published versions (content hash) equal those of the uninterrupted run of the
`uninterrupted` fixture, which started from the same previous version.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.crash_hook import CRASH_ENV
from predictor import BenchPress
from predictor.snapshots.reader import list_versions, verify
from predictor.util.paths import snapshot_store_dir
from tests.faults.refreshing import (
    Refresh,
    Trigger,
    duckdb_intact,
    end_state,
    seed_previous_version,
)
from warehouse.snapshots import publish

pytestmark = pytest.mark.slow
ARGS = ["--accept-drift", "all"]
TIMEOUT = 900.0

# each kill happens at a later stage than the one before, so the chain makes progress
KILLS = [
    Trigger("livebench_payloads", "STEP_SUCCESS"),  # ingest: some sources archived, not all
    Trigger("normalized_scores", "STEP_START", 0.5),  # normalizing (replace_table transaction)
    Trigger("factorization", "STEP_START", 2.0),  # in the middle of the fit
    Trigger("published_snapshot", "STEP_START", 0.05),  # publishing (replaced, see below)
]
# the last kill is exact, by the assets' crash hook: right after the publish, before Dagster
# records it (without the hook the run would not die and the test fails)
HOOKED_LAST = "published_snapshot"


def test_kill9_at_each_stage_then_rerun_equals_uninterrupted(uninterrupted, tmp_path) -> None:
    assert uninterrupted.exit_code == 0, uninterrupted.refresh.tail()
    home = tmp_path / "home"
    previous = seed_previous_version(home, tmp_path / "seed-staging")
    assert previous == uninterrupted.previous
    store = snapshot_store_dir(home)
    history = []
    for i, trigger in enumerate(KILLS):
        last = i == len(KILLS) - 1
        env = {"BENCHPRESS_CRASH_AFTER": HOOKED_LAST} if last else None
        run = Refresh.start(home, ARGS, kill_on=None if env else trigger, env=env)
        code = run.wait(timeout=TIMEOUT)
        where = f"BENCHPRESS_CRASH_AFTER={HOOKED_LAST}" if env else str(trigger)
        history.append(f"{where}: exit {code} after {run.seconds:.0f}s")
        assert code == -9, f"run {i + 1} was not killed at {where} (exit {code}):\n{run.tail()}"
        # after each crash: the warehouse opens, published snapshots are whole and verify
        assert duckdb_intact(home)["raw_payloads"] > 0
        for version in list_versions(store):
            verify(store / version)
        assert previous in list_versions(store)
    final = Refresh.start(home, ARGS)
    assert final.wait(timeout=TIMEOUT) == 0, final.tail()
    history.append(f"final: exit 0 after {final.seconds:.0f}s")

    ours, theirs = end_state(home), uninterrupted.end
    for table, (rows, digest) in theirs.tables.items():
        assert ours.tables[table] == (rows, digest), f"{table} differs; runs: {history}"
    assert ours.versions == theirs.versions, history
    assert ours.content_hashes == theirs.content_hashes, history
    # what a killed publish left behind is scratch (dot-named), never a listed version
    assert all(name.startswith(".") for name in ours.store_leftovers), ours.store_leftovers
    latest = BenchPress.load(ours.versions[-1], store=store)
    assert latest.predict({"gpqa_diamond": 70})
    print("crash chain:", *history, sep="\n  ")  # shown with -rP / -s


@pytest.mark.parametrize(
    ("points", "killed"), [(None, False), ("score_matrix", False), ("score_matrix, here", True)]
)
def test_crash_point_kills_only_at_the_named_points(points, killed) -> None:
    env = {k: v for k, v in os.environ.items() if k != CRASH_ENV}
    if points is not None:
        env[CRASH_ENV] = points
    code = "from pipelines.crash_hook import crash_point; crash_point('here'); print('alive')"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    if killed:
        assert done.returncode == -signal.SIGKILL and "alive" not in done.stdout
    else:
        assert done.returncode == 0 and done.stdout.strip() == "alive", done.stderr


def _killed_after_rename(tmp_path: Path) -> tuple[Path, Path, str]:
    """A store whose newest version was renamed into place by a publish killed right after
    the rename: files still writable, index.json not yet listing it."""
    store = tmp_path / "store"
    version = seed_previous_version(tmp_path / "home", tmp_path / "staging")
    published = snapshot_store_dir(tmp_path / "home")
    shutil.copytree(published, store)
    for path in (store / version).iterdir():
        path.chmod(0o644)
    (store / "index.json").unlink()
    staged = next(p for p in (tmp_path / "staging").iterdir() if not p.name.startswith("."))
    return store, staged, version


def test_rerun_lists_a_version_whose_publish_was_killed(tmp_path: Path) -> None:
    store, staged, version = _killed_after_rename(tmp_path)
    again = publish(staged, store)  # the rerun stages the same content
    assert (again.version, again.published) == (version, False)
    assert json.loads((store / "index.json").read_text())["versions"] == [version]


def test_rerun_seals_a_version_whose_publish_was_killed(tmp_path: Path) -> None:
    store, staged, version = _killed_after_rename(tmp_path)
    publish(staged, store)
    modes = {p.name: p.stat().st_mode & 0o777 for p in (store / version).iterdir()}
    assert set(modes.values()) == {0o444}, modes
