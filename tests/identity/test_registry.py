"""The reviewed tables load, are consistent, and cover what BenchPress holds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath
from pipelines.identity.registry import IDENTITY_DIR, load_registry
from pipelines.sources.benchpress_matrix import URL as BENCHPRESS_URL


@pytest.fixture(scope="module")
def benchpress_doc() -> dict:
    return json.loads((DEFAULT_REPLAY_ROOT / replay_relpath(BENCHPRESS_URL)).read_bytes())


def test_every_benchpress_model_and_benchmark_is_registered(registry, benchpress_doc) -> None:
    models = {m["id"] for m in benchpress_doc["models"]}
    assert models <= set(registry.catalogue.by_benchpress)
    benchmarks = {b["id"] for b in benchpress_doc["benchmarks"]}
    assert benchmarks <= set(registry.benchmarks["benchmark_id"].to_list())


def test_benchmark_registry_columns(registry) -> None:
    b = registry.benchmarks
    assert {"category", "direction", "lower", "upper", "owner_source", "reference_agent"} <= set(
        b.columns
    )
    assert b.filter(pl.col("category") == "").height == 0
    percent = b.filter(pl.col("scale") == "percent")
    assert (percent["unit"] == "percent").all()
    assert (percent["lower"] == 0).all() and (percent["upper"] == 100).all()
    # Elo-like and other open scales stay unbounded (no transform), with a sanity range
    open_scales = b.filter(pl.col("unit").is_in(["elo", "rating", "dollars", "minutes", "index"]))
    assert (open_scales["scale"] == "unbounded").all()
    assert set(b.filter(pl.col("direction") == "lower")["benchmark_id"]) >= {"factscore"}
    assert b.height >= 250


def test_setting_dependent_benchmarks_are_separate(registry) -> None:
    aliases = registry.benchmark_aliases
    aider = dict(
        aliases.filter((pl.col("source") == "aider") & (pl.col("benchmark_key") == "polyglot"))
        .select("agent", "benchmark_id")
        .iter_rows()
    )
    assert aider["diff"] == "aider_polyglot_diff" and aider["whole"] == "aider_polyglot_whole"
    mapped = dict(
        aliases.filter(pl.col("source") == "epoch_ai")
        .select("benchmark_key", "benchmark_id")
        .rows()
    )
    assert mapped["gpqa_diamond"] == "gpqa_diamond"
    assert (
        mapped["swe_bench_bash"] == "swe_bench_verified_bash_only" != mapped["swe_bench_verified"]
    )
    llm = dict(
        aliases.filter(pl.col("source") == "llm_stats")
        .select("benchmark_key", "benchmark_id")
        .rows()
    )
    assert (
        llm["gpqa"] == "gpqa_diamond"
    )  # the Diamond set: equals BenchPress for 8 of 10 shared models
    assert llm["codeforces"] == ""  # a 0-1 value, not the rating: deliberately unmapped


def test_registry_refuses_inconsistent_tables(tmp_path: Path) -> None:
    for name in ("benchmarks.csv", "benchmark_aliases.csv", "models.csv", "model_aliases.csv"):
        shutil.copy(IDENTITY_DIR / name, tmp_path / name)
    load_registry(tmp_path)
    with (tmp_path / "benchmark_aliases.csv").open("a") as f:
        f.write("evalplus,made_up,,no_such_benchmark,\n")
    with pytest.raises(ValueError, match="unknown ids"):
        load_registry(tmp_path)
    shutil.copy(IDENTITY_DIR / "benchmark_aliases.csv", tmp_path / "benchmark_aliases.csv")
    with (tmp_path / "models.csv").open("a") as f:
        f.write("x,Not Normalised,,,,,X,\n")
    with pytest.raises(ValueError, match="not normalised"):
        load_registry(tmp_path)
