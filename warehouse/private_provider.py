"""The `benchpress.private_models` entry point, kept free of DuckDB: readers of a home without
a private store (the web page, `BenchPress` users) never load the duckdb library for it, and
where DuckDB is not installed (`pip install benchpress-llm`, no `pipeline` extra) the store
cannot be read, so its models are simply absent."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

from predictor.util.paths import private_store_path


def load_private_models(home: Path) -> list[dict[str, object]]:
    """Every private model of `home` with its scores; [] without a store (nothing loaded or
    created) or without DuckDB to read it."""
    if not private_store_path(Path(home)).is_file() or find_spec("duckdb") is None:
        return []
    # deferred: the store module loads duckdb, which only a home with a private store needs
    from warehouse.private_models import load_private_models as read_store

    return read_store(home)
