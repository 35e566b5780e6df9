"""Where state lives: everything under BENCHPRESS_HOME, by default the user's data directory
(`~/.local/share/benchpress` on Linux, via platformdirs), so results never depend on the
folder a command runs in."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "BENCHPRESS_HOME"


def default_home() -> Path:
    """The user's data directory for benchpress (platformdirs' user_data_dir)."""
    from platformdirs import user_data_dir  # deferred: only when BENCHPRESS_HOME is unset

    return Path(user_data_dir("benchpress", appauthor=False))


def benchpress_home() -> Path:
    """The state directory: BENCHPRESS_HOME, else `default_home()`; created lazily by
    writers, never by readers."""
    return Path(os.environ.get(HOME_ENV) or default_home()).expanduser().resolve()


def home_origin() -> str:
    """How the state directory was chosen, for messages that say where state lives."""
    return "BENCHPRESS_HOME" if os.environ.get(HOME_ENV) else "the default"


def snapshot_store_dir(home: Path | None = None) -> Path:
    return (home or benchpress_home()) / "snapshots"


def warehouse_path(home: Path | None = None) -> Path:
    return (home or benchpress_home()) / "warehouse.duckdb"


def dagster_home(home: Path | None = None) -> Path:
    return (home or benchpress_home()) / "dagster"


PRIVATE_STORE_DIR = "private"
PRIVATE_STORE_FILE = "models.duckdb"


def private_store_path(home: Path | None = None) -> Path:
    """The private model store (`warehouse.private_models`), which need not exist."""
    return Path(home or benchpress_home()) / PRIVATE_STORE_DIR / PRIVATE_STORE_FILE


def bundled_snapshot_dir() -> Path:
    """Snapshots shipped inside the package so `BenchPress.load()` works right after install."""
    return Path(__file__).parent.parent / "data" / "snapshots"
