"""Where state lives: everything under BENCHPRESS_HOME (default ./.benchpress)."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "BENCHPRESS_HOME"


def benchpress_home() -> Path:
    """The state directory; created lazily by writers, never by readers."""
    return Path(os.environ.get(HOME_ENV) or ".benchpress").resolve()


def snapshot_store_dir(home: Path | None = None) -> Path:
    return (home or benchpress_home()) / "snapshots"


def warehouse_path(home: Path | None = None) -> Path:
    return (home or benchpress_home()) / "warehouse.duckdb"


def dagster_home(home: Path | None = None) -> Path:
    return (home or benchpress_home()) / "dagster"


def bundled_snapshot_dir() -> Path:
    """Snapshots shipped inside the package so `BenchPress.load()` works right after install."""
    return Path(__file__).parent / "data" / "snapshots"
