"""`save_models` is one transaction: when the SECOND model of an import fails while it is being
inserted (after the first model's rows went in, not in a check before any insert), the store
is left exactly as it was: no row of the first model, the models already there untouched, and
a run being replaced keeps its old checkpoints.

A real DuckDB private store in tmp_path; the failure is the database's own NOT NULL
constraint refusing a row."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import polars as pl
import pytest

from tests.warehouse.test_private_models import rows
from warehouse import private_models as store


def null_status(frame: pl.DataFrame) -> pl.DataFrame:
    """cells.status is NOT NULL: refused when the cells are inserted."""
    return frame.with_columns(pl.lit(None, pl.String).alias("status"))


def null_file(frame: pl.DataFrame) -> pl.DataFrame:
    """model_files.file is NOT NULL: refused after the model's cells went in."""
    return frame.with_columns(pl.lit(None, pl.String).alias("file"))


def everything(home: Path) -> dict[str, list[tuple]]:
    """Every row of every table (sorted): the whole store, byte for byte as data."""
    con = duckdb.connect(str(store.store_path(home)), read_only=True)
    try:
        return {
            table: sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
            for table in ("models", "model_files", "cells")
        }
    finally:
        con.close()


@pytest.mark.parametrize("spoil", [null_status, null_file], ids=["cells", "model_files"])
def test_a_failure_on_the_second_model_leaves_the_store_unchanged(
    tmp_path: Path, spoil: Callable[[pl.DataFrame], pl.DataFrame]
) -> None:
    store.save_models([store.ModelImport("kept", rows("k", {"hle": 3.0}))], home=tmp_path)
    before = everything(tmp_path)
    batch = [
        store.ModelImport("fresh", rows("f", {"hle": 4.0, "gpqa_diamond": 40.0})),
        store.ModelImport("broken", spoil(rows("b", {"hle": 5.0}))),
    ]
    with pytest.raises(duckdb.ConstraintException):
        store.save_models(batch, home=tmp_path)
    assert everything(tmp_path) == before
    assert store.list_models(tmp_path)["name"].to_list() == ["kept"]
    assert store.model_cells("fresh", tmp_path).height == 0
    assert store.model_files("fresh", tmp_path).height == 0
    assert [m["name"] for m in store.load_private_models(tmp_path)] == ["kept"]


@pytest.mark.parametrize("spoil", [null_status, null_file], ids=["cells", "model_files"])
def test_a_failed_re_track_keeps_the_run_it_was_replacing(
    tmp_path: Path, spoil: Callable[[pl.DataFrame], pl.DataFrame]
) -> None:
    first = [store.ModelImport(f"r@step-{s}", rows("m", {"hle": s}), "r", s) for s in (10, 20)]
    store.save_models(first, replace_run="r", home=tmp_path)
    before = everything(tmp_path)
    again = [
        store.ModelImport("r@step-30", rows("m", {"hle": 30.0}), "r", 30),
        store.ModelImport("r@step-40", spoil(rows("m", {"hle": 40.0})), "r", 40),
    ]
    with pytest.raises(duckdb.ConstraintException):
        store.save_models(again, replace_run="r", home=tmp_path)
    assert everything(tmp_path) == before
    assert store.list_models(tmp_path, run="r").select("name", "step").rows() == [
        ("r@step-10", 10),
        ("r@step-20", 20),
    ]
