"""Reviewed identity fixes for llm-stats and EvalPlus (model_aliases.csv, models.csv,
benchmark_aliases.csv), checked on names and on the recorded payloads."""

from __future__ import annotations

import polars as pl
import pytest

from pipelines.identity.resolve import BenchmarkResolver, resolve_model_name


@pytest.mark.parametrize(
    ("source", "name", "expected"),
    [
        # one model, two names
        ("evalplus", "phi-2-2.7B", "phi-2"),
        ("open_llm_leaderboard", "microsoft/phi-2", "phi-2"),
        ("evalplus", "Zephyr β-7B", "zephyr-7b-beta"),
        ("lmarena", "zephyr-7b-beta", "zephyr-7b-beta"),
        ("llm_stats", "codestral-22b", "codestral-22b-v0.1"),
        ("evalplus", "Codestral-22B-v0.1", "codestral-22b-v0.1"),
        # EvalPlus' CodeLlama-70B links to the Python specialisation
        ("evalplus", "CodeLlama-70B", "codellama-70b-python"),
        ("evalplus", "CodeLlama-70B-Instruct", "codellama-70b-instruct"),
        # the chat model keeps its name; the copied base-model table does not land on it
        ("llm_stats", "qwen3-235b-a22b", "qwen3-235b"),
        ("llm_stats", "qwen3-235b-a22b-base", None),
    ],
)
def test_names(registry, source: str, name: str, expected: str | None) -> None:
    assert resolve_model_name(source, name, registry).model_id == expected


def test_quantised_codestral_runs_stay_settings_of_one_model(registry) -> None:
    ident = resolve_model_name("aider", "codestral:22b-v0.1-q8_0", registry)
    assert ident.model_id == "codestral-22b-v0.1@quant-q8_0"


@pytest.mark.parametrize(
    ("name", "budget", "expected"),
    [
        ("gpt-5-2025-08-07", "on", "gpt-5"),  # "GPT-5 with thinking mode" = the headline
        ("gpt-5-mini-2025-08-07", "on", "gpt-5-mini"),
        ("o3-2025-04-16", "on", "o3-high"),
        ("deepseek-v3.2-exp", "on", "deepseek-v3.2-exp@thinking"),
        ("deepseek-v3.2-exp", None, "deepseek-v3.2-exp@nothinking"),
        ("deepseek-v3.1", "0", "deepseek-v3.1@nothinking"),
        ("claude-opus-4-1-20250805", "64K", "claude-opus-4.1"),
        ("claude-opus-4-1-20250805", "0", "claude-opus-4.1@nothinking"),
        ("qwen3-235b-a22b", "0", "qwen3-235b@nothinking"),
        ("gpt-4o-2024-08-06", "0", "gpt-4o-20240806"),  # a model without modes
    ],
)
def test_settings_stated_by_analysis_method(registry, name, budget, expected) -> None:
    ident = resolve_model_name("llm_stats", name, registry, thinking_budget=budget)
    assert ident.model_id == expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("mme", None),  # MME sum / 10000
        ("mmbench-video", None),  # a 0-3 score / 100
        ("mm-mt-bench", None),  # a 0-10 judge score on two scales
        ("fleurs", None),  # WER and 1 - WER mixed
        ("codeforces", None),
        ("humanity's-last-exam", "hle"),
        ("humanity's-last-exam-(text-only)", "hle_text"),
        ("hle-(text-only)", "hle_text"),
        ("humanity's-last-exam-(with-tools)", "hle_tools"),
        ("hle-(with-tools)", "hle_tools"),
    ],
)
def test_llm_stats_benchmark_keys(registry, key: str, expected: str | None) -> None:
    benchmark_id, route, note = BenchmarkResolver(registry).resolve("llm_stats", key, None)
    assert benchmark_id == expected
    if expected is None:
        assert route == "unmapped" and note


def test_recorded_rows(normalized) -> None:
    llm = normalized.filter(pl.col("source") == "llm_stats")
    base = llm.filter(pl.col("model_key") == "qwen3-235b-a22b-base")
    assert base.height == 15
    assert set(base["resolution"]) <= {"unresolved_model", "unresolved_benchmark", "excluded"}
    assert base["model_id"].null_count() == 15
    chat = llm.filter(
        (pl.col("model_key") == "qwen3-235b-a22b") & (pl.col("resolution") == "resolved")
    )
    assert sorted(chat["benchmark_id"]) == ["arena_hard", "bfcl", "livebench", "livecodebench"]
    assert set(chat["model_id"]) == {"qwen3-235b"}
    resolved = normalized.filter(pl.col("resolution") == "resolved")
    for bench in ("mme", "mmbench_video", "mm_mt_bench", "fleurs"):
        assert llm.filter(pl.col("benchmark_id") == bench).height == 0, bench
    evalplus = resolved.filter(pl.col("source") == "evalplus")
    assert {"phi-2", "zephyr-7b-beta", "codestral-22b-v0.1", "codellama-70b-python"} <= set(
        evalplus["model_id"]
    )
    assert not {"phi-2-2.7b", "zephyr-beta-7b", "codestral-22b", "codellama-70b"} & set(
        resolved["model_id"]
    )
