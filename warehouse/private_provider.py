"""The `benchpress.private_models` entry point, kept free of DuckDB: readers of a home without
a private store (the web page, `BenchPress` users) never load the duckdb library for it."""

from __future__ import annotations

from pathlib import Path

STORE_DIR = "private"
STORE_FILE = "models.duckdb"


def store_path(home: Path) -> Path:
    return Path(home) / STORE_DIR / STORE_FILE


def load_private_models(home: Path) -> list[dict[str, object]]:
    """Every private model of `home` with its scores; [] without a store (nothing loaded or
    created)."""
    if not store_path(home).is_file():
        return []
    from warehouse.private_models import load_private_models as read_store

    return read_store(home)
