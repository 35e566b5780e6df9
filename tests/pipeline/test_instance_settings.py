"""The Dagster instance settings a home runs with (its copy of the repo's dagster.yaml)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import dagster as dg

from pipelines.run import (
    EARLIER_REPO_CONFIGS,
    MANAGED_MARK,
    REPO_DAGSTER_YAML,
    ensure_dagster_home,
)

# the repo's dagster.yaml of commit 2f61a38, before MANAGED_MARK existed (byte for byte)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dagster_yaml"
EARLIER_COPY = FIXTURES / "2f61a38.dagster.yaml"


def test_crashed_runs_free_their_pool_slot(tmp_path: Path) -> None:
    """Run monitoring marks a run whose worker died as failed and frees its "duckdb" slot;
    without it one crashed UI run queues every later run, the schedule's included."""
    text = REPO_DAGSTER_YAML.read_text()
    assert text.startswith(MANAGED_MARK)
    home = ensure_dagster_home(tmp_path)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        settings = instance.run_monitoring_settings
        assert instance.run_monitoring_enabled
        assert settings["free_slots_after_run_end_seconds"] == 60
        assert settings["max_resume_run_attempts"] == 0


def test_a_home_gets_the_repo_settings_unless_edited_on_purpose(tmp_path: Path) -> None:
    config = tmp_path / "dagster" / "dagster.yaml"
    ensure_dagster_home(tmp_path)
    assert config.read_bytes() == REPO_DAGSTER_YAML.read_bytes()

    config.write_text(MANAGED_MARK + "\nconcurrency: {}\n")  # made by an older version
    ensure_dagster_home(tmp_path)
    assert config.read_bytes() == REPO_DAGSTER_YAML.read_bytes()

    config.write_text("# my own settings\nconcurrency: {}\n")  # the mark removed: an edit
    ensure_dagster_home(tmp_path)
    assert config.read_text() == "# my own settings\nconcurrency: {}\n"


def test_a_home_made_before_the_mark_existed_is_updated(tmp_path: Path) -> None:
    """Homes created before the managed mark hold the earlier repo file byte for byte (kept in
    tests/fixtures, so no git history is needed); it is replaced by the current one."""
    earlier = EARLIER_COPY.read_bytes()
    assert hashlib.sha256(earlier).hexdigest() in EARLIER_REPO_CONFIGS
    assert not earlier.startswith(MANAGED_MARK.encode())
    config = tmp_path / "dagster" / "dagster.yaml"
    config.parent.mkdir()
    config.write_bytes(earlier)
    ensure_dagster_home(tmp_path)
    assert config.read_bytes() == REPO_DAGSTER_YAML.read_bytes()


def test_the_kept_copy_is_the_released_file_where_history_exists() -> None:
    """Where the checkout has its history, the fixture equals `git show 2f61a38:dagster.yaml`
    (a shallow clone has nothing to compare with: the sha256 pin above still holds)."""
    shown = subprocess.run(
        ["git", "-C", str(REPO_DAGSTER_YAML.parent), "show", "2f61a38:dagster.yaml"],
        capture_output=True,
        check=False,
    )
    if shown.returncode == 0:
        assert shown.stdout == EARLIER_COPY.read_bytes()
