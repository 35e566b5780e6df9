"""BENCHPRESS_INSTANCE picks the Dagster instance settings a home runs with: the local default
stays the repo's dagster.yaml (SQLite in the home); `team` copies deploy/dagster-team.yaml,
Dagster's storage in PostgreSQL, with the same pool and run monitoring. Bad settings stop a
command before it writes anything, in one line naming the variable."""

from __future__ import annotations

import subprocess
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._config import validate_config
from dagster._core.instance.config import dagster_instance_config
from dagster_postgres import DagsterPostgresStorage

from pipelines.resources import check_settings
from pipelines.run import MANAGED_MARK, REPO_DAGSTER_YAML, ensure_dagster_home
from pipelines.team.instance import PROFILE_FILES, postgres_settings
from tests.faults.refreshing import benchpress_command, refresh_env

TEAM_YAML = PROFILE_FILES["team"]
PG_NAMES = (
    "BENCHPRESS_PG_HOST",
    "BENCHPRESS_PG_PORT",
    "BENCHPRESS_PG_USER",
    "BENCHPRESS_PG_PASSWORD",
    "BENCHPRESS_PG_DB",
)


@pytest.fixture(autouse=True)
def no_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BENCHPRESS_INSTANCE", *PG_NAMES):
        monkeypatch.delenv(name, raising=False)


def test_the_local_default_is_the_repo_dagster_yaml_on_sqlite(tmp_path: Path) -> None:
    home = ensure_dagster_home(tmp_path)
    assert (home / "dagster.yaml").read_bytes() == REPO_DAGSTER_YAML.read_bytes()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert type(instance.run_storage).__name__ == "SqliteRunStorage"
        assert type(instance.event_log_storage).__name__ == "SqliteEventLogStorage"
    check_settings("replay")  # nothing to reach, nothing raised


def test_team_profile_copies_the_team_settings_and_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "dagster" / "dagster.yaml"
    monkeypatch.setenv("BENCHPRESS_INSTANCE", "team")
    ensure_dagster_home(tmp_path)
    assert config.read_bytes() == TEAM_YAML.read_bytes()
    assert TEAM_YAML.read_text().startswith(MANAGED_MARK)  # replaced when the repo's changes
    monkeypatch.setenv("BENCHPRESS_INSTANCE", "local")
    ensure_dagster_home(tmp_path)
    assert config.read_bytes() == REPO_DAGSTER_YAML.read_bytes()


def test_team_yaml_has_the_local_pool_and_run_monitoring() -> None:
    local = yaml.safe_load(REPO_DAGSTER_YAML.read_text())
    team = yaml.safe_load(TEAM_YAML.read_text())
    assert {k: v for k, v in team.items() if k != "storage"} == local
    assert "storage" not in local  # the local default keeps SQLite inside the home
    assert team["concurrency"]["pools"]["default_limit"] == 1


def test_team_yaml_validates_against_dagsters_schemas() -> None:
    config, instance_class = dagster_instance_config(str(TEAM_YAML.parent), TEAM_YAML.name)
    assert instance_class is None
    postgres = config["storage"]["postgres"]
    checked = validate_config(DagsterPostgresStorage.config_type(), postgres)
    assert checked.success, checked.errors
    db = postgres["postgres_db"]
    assert {field: db[field] for field in ("hostname", "port", "username", "password")} == {
        "hostname": {"env": "BENCHPRESS_PG_HOST"},
        "port": {"env": "BENCHPRESS_PG_PORT"},
        "username": {"env": "BENCHPRESS_PG_USER"},
        "password": {"env": "BENCHPRESS_PG_PASSWORD"},  # only ever from the environment
    }
    assert db["scheme"] == "postgresql+psycopg2"  # SQLAlchemy 2.1's bare scheme is psycopg 3


def test_an_unknown_profile_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHPRESS_INSTANCE", "cluster")
    with pytest.raises(ValueError) as caught:
        check_settings("replay")
    assert str(caught.value) == (
        "BENCHPRESS_INSTANCE='cluster' is not an instance profile; choose local or team "
        "(default local)"
    )


def test_missing_and_malformed_postgres_settings_are_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BENCHPRESS_INSTANCE", "team")
    monkeypatch.setenv("BENCHPRESS_PG_HOST", "db.internal")
    monkeypatch.setenv("BENCHPRESS_PG_USER", "benchpress")
    with pytest.raises(ValueError) as caught:
        check_settings("replay")
    assert str(caught.value) == (
        "BENCHPRESS_INSTANCE=team stores Dagster's runs in PostgreSQL, configured from the "
        "environment; not set: BENCHPRESS_PG_PORT (port, e.g. 5432), BENCHPRESS_PG_PASSWORD "
        "(password), BENCHPRESS_PG_DB (database name)"
    )
    monkeypatch.setenv("BENCHPRESS_PG_PASSWORD", "s3cret")
    monkeypatch.setenv("BENCHPRESS_PG_DB", "benchpress")
    monkeypatch.setenv("BENCHPRESS_PG_PORT", "54x")
    with pytest.raises(ValueError, match=r"^BENCHPRESS_PG_PORT='54x' is not a port number"):
        check_settings("replay")
    monkeypatch.setenv("BENCHPRESS_PG_PORT", "5432")
    assert "s3cret" not in repr(postgres_settings())  # never shown, even in a traceback


def test_refresh_without_the_settings_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = subprocess.run(
        [*benchpress_command(), "refresh", "--mode", "replay"],
        env=refresh_env(home, {"BENCHPRESS_INSTANCE": "team"}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "benchpress: error: BENCHPRESS_INSTANCE=team stores Dagster's runs in PostgreSQL, "
        "configured from the environment; not set: BENCHPRESS_PG_HOST (host name or address), "
        "BENCHPRESS_PG_PORT (port, e.g. 5432), BENCHPRESS_PG_USER (user name), "
        "BENCHPRESS_PG_PASSWORD (password), BENCHPRESS_PG_DB (database name)"
    ]
    assert not home.exists()
