"""The Dagster instance settings a home runs with (its copy of the repo's dagster.yaml)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import dagster as dg
import pytest

from pipelines.run import MANAGED_MARK, REPO_DAGSTER_YAML, ensure_dagster_home


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
    """Homes created before the managed mark hold the earlier repo file byte for byte."""
    earlier = subprocess.run(
        ["git", "-C", str(REPO_DAGSTER_YAML.parent), "show", "2f61a38:dagster.yaml"],
        capture_output=True,
        check=False,
    )
    if earlier.returncode != 0:
        pytest.skip("needs the git history of dagster.yaml (not a plain source tree)")
    config = tmp_path / "dagster" / "dagster.yaml"
    config.parent.mkdir()
    config.write_bytes(earlier.stdout)
    ensure_dagster_home(tmp_path)
    assert config.read_bytes() == REPO_DAGSTER_YAML.read_bytes()
