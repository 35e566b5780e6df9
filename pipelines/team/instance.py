"""Which Dagster instance settings a home runs with, and whether their services answer.

`BENCHPRESS_INSTANCE` picks the profile: `local` (the default: the repo's dagster.yaml, SQLite
storage inside the home, nothing to set up) or `team` (deploy/dagster-team.yaml: run, event-log
and schedule storage in PostgreSQL, configured by BENCHPRESS_PG_*). Every place that makes an
instance (`benchpress refresh`, `make dagster`) copies the chosen file into the home.

`check_instance()` runs before anything is written: a team profile whose PostgreSQL is missing,
unreachable or refuses the credentials stops the command with one line naming the service and
the settings (host:port and user, never the password). `storage_lost(exc)` recognises the
same service failing in the middle of a run, so the caller can say so in one line too.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from predictor.snapshots.reader import list_versions
from predictor.util.env_choice import env_choice
from predictor.util.paths import snapshot_store_dir

INSTANCE_ENV = "BENCHPRESS_INSTANCE"
REPO_ROOT = Path(__file__).resolve().parents[2]
PROFILE_FILES = {
    "local": REPO_ROOT / "dagster.yaml",
    "team": REPO_ROOT / "deploy" / "dagster-team.yaml",
}
PG_SETTINGS = {  # variable -> what it holds, in the order messages list them
    "BENCHPRESS_PG_HOST": "host name or address",
    "BENCHPRESS_PG_PORT": "port, e.g. 5432",
    "BENCHPRESS_PG_USER": "user name",
    "BENCHPRESS_PG_PASSWORD": "password",
    "BENCHPRESS_PG_DB": "database name",
}
CONNECT_TIMEOUT_SECONDS = 5
SERVICE = "the Dagster instance's PostgreSQL"


class InstanceUnavailable(ValueError):
    """The instance's storage service cannot be used; the message names it and its settings.

    A ValueError, so commands report it like any other setting that cannot work (exit 2)."""


def instance_profile() -> str:
    """BENCHPRESS_INSTANCE (unset or empty: `local`), checked against the known profiles."""
    return env_choice(INSTANCE_ENV, PROFILE_FILES, "local", "an instance profile")


def settings_file(profile: str | None = None) -> Path:
    """The repo's Dagster instance settings for `profile` (default: BENCHPRESS_INSTANCE)."""
    return PROFILE_FILES[profile or instance_profile()]


@dataclass(frozen=True)
class PostgresSettings:
    host: str
    port: int
    user: str
    db: str
    password: str = field(repr=False)

    @property
    def where(self) -> str:
        """host:port, the part of the settings that messages may show."""
        return f"{self.host}:{self.port}"


def postgres_settings() -> PostgresSettings:
    """BENCHPRESS_PG_* from the environment; ValueError naming what is missing or malformed."""
    values = {name: os.environ.get(name, "").strip() for name in PG_SETTINGS}
    missing = [name for name, value in values.items() if not value]
    if missing:
        wanted = ", ".join(f"{name} ({PG_SETTINGS[name]})" for name in missing)
        raise ValueError(
            f"{INSTANCE_ENV}=team stores Dagster's runs in PostgreSQL, configured from the "
            f"environment; not set: {wanted}"
        )
    port = values["BENCHPRESS_PG_PORT"]
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"BENCHPRESS_PG_PORT={port!r} is not a port number (1-65535)")
    return PostgresSettings(
        host=values["BENCHPRESS_PG_HOST"],
        port=int(port),
        user=values["BENCHPRESS_PG_USER"],
        db=values["BENCHPRESS_PG_DB"],
        password=os.environ["BENCHPRESS_PG_PASSWORD"],  # as given: spaces may be meant
    )


def _server_says(exc: BaseException, settings: PostgresSettings) -> str:
    """psycopg2's reason, on one line, without libpq's hints and never with the password."""
    text = str(exc).strip()
    head, sep, reason = text.partition(" failed: ")  # 'connection to server at ... failed: why'
    reason = (reason if sep else text).splitlines()[0] if text else type(exc).__name__
    reason = reason.replace("FATAL:", "").strip()
    if settings.password:
        reason = reason.replace(settings.password, "***")
    return reason


def describe_failure(exc: BaseException, settings: PostgresSettings) -> str:
    """What went wrong connecting to the instance's PostgreSQL, naming the settings to fix."""
    reason = _server_says(exc, settings)
    lowered = reason.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        return (
            f"{SERVICE} at {settings.where} refused user {settings.user!r}: {reason} "
            "(check BENCHPRESS_PG_USER and BENCHPRESS_PG_PASSWORD)"
        )
    if "database" in lowered and "does not exist" in lowered:
        return (
            f"{SERVICE} at {settings.where} has no database {settings.db!r} "
            "(BENCHPRESS_PG_DB); create it or name another one"
        )
    return (
        f"cannot reach {SERVICE} at {settings.where} (BENCHPRESS_PG_HOST, BENCHPRESS_PG_PORT): "
        f"{reason}"
    )


def check_postgres(settings: PostgresSettings, timeout: int = CONNECT_TIMEOUT_SECONDS) -> None:
    """Connect once and run `SELECT 1`; InstanceUnavailable saying why when that fails."""
    import psycopg2  # deferred: psycopg2 is the `team` extra's, only for the team profile

    try:
        connection = psycopg2.connect(
            host=settings.host,
            port=settings.port,
            user=settings.user,
            password=settings.password,
            dbname=settings.db,
            connect_timeout=timeout,
        )
    except psycopg2.Error as exc:
        raise InstanceUnavailable(describe_failure(exc, settings)) from None
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except psycopg2.Error as exc:
        raise InstanceUnavailable(describe_failure(exc, settings)) from None
    finally:
        connection.close()


def check_instance() -> str:
    """The profile in force, once its storage answers: nothing to check for `local`; for
    `team` the settings, the team extra and a connection to PostgreSQL. Raises ValueError
    (InstanceUnavailable for the service) with one line saying what to fix."""
    profile = instance_profile()
    if profile == "local":
        return profile
    settings = postgres_settings()
    if importlib.util.find_spec("dagster_postgres") is None:
        raise ValueError(
            f"{INSTANCE_ENV}=team needs the team extra (dagster-postgres): "
            "pip install -c constraints.txt '.[pipeline,team]'"
        )
    if not settings_file(profile).is_file():
        raise ValueError(
            f"{INSTANCE_ENV}=team reads {settings_file(profile)}, which is missing (the team "
            "profile runs from a source checkout of benchpress-llm)"
        )
    check_postgres(settings)
    return profile


class InstanceLost(ConnectionError):
    """The instance's PostgreSQL went away during a run (the message says which and when).

    A ConnectionError (an OSError): `benchpress` prints it as one error line, exit code 1."""


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def storage_lost(exc: BaseException) -> str | None:
    """One line when `exc` (or an exception it was raised from) is the team instance's
    PostgreSQL failing mid-run; None for anything else (and for the local profile)."""
    if instance_profile() != "team":
        return None
    import sqlalchemy.exc  # deferred: ~0.3 s to import, needed only by the team profile

    errors = list(_chain(exc))
    lost = [
        e
        for e in errors
        if isinstance(e, sqlalchemy.exc.OperationalError | sqlalchemy.exc.InterfaceError)
        or type(e).__name__ == "DagsterPostgresException"
    ]
    if not lost:
        return None
    try:
        settings = postgres_settings()
    except ValueError:
        return f"lost {SERVICE} during the run"
    deepest = lost[-1]
    reason = _server_says(getattr(deepest, "orig", None) or deepest, settings)
    return (
        f"lost {SERVICE} at {settings.where} during the run (BENCHPRESS_PG_HOST, "
        f"BENCHPRESS_PG_PORT): {reason}"
    )


class _DropRetryWarnings(logging.Filter):
    """dagster-postgres logs each reconnect attempt on the root logger, with libpq's hints on
    extra lines; the one line `storage_loss_reported` raises says it all."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Retrying failed database connection")


@contextlib.contextmanager
def storage_loss_reported(home: Path, quiet: bool = True) -> Iterator[None]:
    """Turn the team instance's PostgreSQL going away inside the block into `InstanceLost`:
    what was lost, whether a snapshot was published before that, and what happens next.
    `quiet` drops dagster-postgres's reconnect warnings meanwhile (not with --verbose)."""
    store = snapshot_store_dir(home)
    before = set(list_versions(store)) if store.is_dir() else set()
    root = logging.getLogger()
    dropping = _DropRetryWarnings()
    if quiet:
        root.addFilter(dropping)
    try:
        yield
    except Exception as exc:
        lost = storage_lost(exc)
        if lost is None:
            raise
        new = sorted(set(list_versions(store)) - before) if store.is_dir() else []
        published = f"snapshot {new[-1]} was published before that; " if new else ""
        raise InstanceLost(
            f"{lost}; the run did not finish. {published}The warehouse keeps what finished "
            "steps wrote; once PostgreSQL is back, `benchpress refresh` closes the unfinished run "
            "and completes"
        ) from None
    finally:
        root.removeFilter(dropping)
