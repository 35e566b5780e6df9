"""What the identity step must never do: merge different models on a resemblance, or pin a moving
alias to one checkpoint without a date that says which."""

from __future__ import annotations

import polars as pl
import pytest

from pipelines.identity.resolve import resolve_model_name


def mid(registry, source, name, **kw):
    return resolve_model_name(source, name, registry, **kw).model_id


@pytest.mark.parametrize(
    ("source", "a", "b"),
    [
        ("lmarena", "Qwen3-235B-A22B", "Qwen3-235B-A22B-Instruct-2507"),
        ("llm_stats", "gpt-4o-mini-2024-07-18", "gpt-4o-2024-08-06"),
        ("epoch_ai", "gemma-2-9b", "gemma-2-9b-it"),  # pretrained vs instruction-tuned
        ("epoch_ai", "DeepSeek-V3", "DeepSeek-V3-0324"),
        ("llm_stats", "kimi-k2-instruct", "kimi-k2-0905"),
        ("epoch_ai", "Kimi-K2-Instruct", "kimi-k2-thinking"),
        ("llm_stats", "qwq-32b", "qwq-32b-preview"),
        ("lmarena", "Llama-4-Maverick-17B-128E-Instruct", "Llama-4-Maverick-03-26-Experimental"),
        ("epoch_ai", "o3-2025-04-16_high", "o3-pro-2025-06-10_high"),
        ("epoch_ai", "gpt-5-2025-08-07_high", "gpt-5-2025-08-07_medium"),
        (
            "arc_prize",
            "claude-opus-4-5-20251101-thinking-16k",
            "claude-opus-4-5-20251101-thinking-32k",
        ),
        ("llm_stats", "llama-3.1-8b-instruct", "llama-3.1-70b-instruct"),
    ],
)
def test_different_models_or_settings_stay_apart(registry, source, a, b) -> None:
    ida, idb = mid(registry, source, a), mid(registry, source, b)
    assert ida is not None and idb is not None
    assert ida != idb


def test_near_miss_names_are_not_pulled_onto_a_catalogued_model(registry) -> None:
    # a snapshot date the catalogue does not hold stays unresolved instead of joining a neighbour
    near = resolve_model_name("epoch_ai", "claude-sonnet-4-20250515", registry)
    assert near.model_id is None and "not in the catalogue" in near.note
    # a name that merely resembles a catalogued id never takes it
    assert mid(registry, "lmarena", "gpt-4o-mini-2024-07-18") == "gpt-4o-mini"
    assert mid(registry, "lmarena", "GPT-4o-mini-2024-07-19") is None
    # a rule id never takes a catalogued id it does not denote
    assert mid(registry, "epoch_ai", "gemma-2-9b") == "gemma-2-9b-pt"
    assert mid(registry, "benchpress_matrix", "gemma-2-9b") == "gemma-2-9b"


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("lmarena", "Gemini-2.5-Pro"),
        ("llm_stats", "gemini-2.5-pro"),
        ("lmarena", "Gemini-2.5-Flash"),
        ("epoch_ai", "deepseek-reasoner"),
        ("livecodebench", "deepseek-chat"),
        ("aider", "openai/chatgpt-4o-latest"),
        ("arc_prize", "codex-mini-latest"),
        ("aider", "gemini-1.5-flash-latest"),
        ("epoch_ai", "gpt-4-turbo"),
        ("lmarena", "Claude 3.5 Sonnet"),
        ("llm_stats", "gemini-1.5-pro"),
        ("arc_prize", "gemini-2-5-pro-preview-openrouter"),
    ],
)
def test_moving_aliases_stay_unresolved_without_a_date(registry, source, name) -> None:
    identity = resolve_model_name(source, name, registry)
    assert identity.model_id is None
    assert identity.route == "unresolved"
    assert identity.note


@pytest.mark.parametrize(
    ("name", "day", "expected"),
    [
        ("deepseek-reasoner", "2025-02-01", "deepseek-r1"),
        ("deepseek-reasoner", "2025-06-15", "deepseek-r1-0528"),
        ("deepseek-reasoner", "2025-09-01", "deepseek-v3.1@thinking"),
        (
            "deepseek-reasoner",
            "2025-12-16",
            "deepseek-v3.2",
        ),  # V3.2's thinking mode is its headline
        ("deepseek-chat", "2025-04-01", "deepseek-v3-0324"),
        ("deepseek-chat", "2025-12-16", "deepseek-v3.2@nothinking"),
        ("gemini-2.5-pro", "2025-11-16", "gemini-2.5-pro"),
        ("gemini-2.5-pro", "2025-05-01", None),  # before GA the name pointed at previews
        ("deepseek-reasoner", "2024-06-01", None),  # before the alias existed
    ],
)
def test_moving_aliases_follow_their_validity_windows(registry, name, day, expected) -> None:
    assert mid(registry, "epoch_ai", name, eval_date=day) == expected


def test_a_dated_name_is_not_the_moving_alias(registry) -> None:
    # SWE-bench tags `gemini-2.5-pro` but the display name dates the checkpoint
    shown = resolve_model_name(
        "swebench", "gemini-2.5-pro", registry, display="Gemini 2.5 Pro (2025-05-06)"
    )
    assert shown.model_id == "gemini-2.5-pro-preview-05-06"
    # a display date that is the run's date, not a snapshot, does not unplace the API id
    run = resolve_model_name("swebench", "glm-4.5", registry, display="GLM-4.5 (2025-08-22)")
    assert run.model_id == "glm-4.5"


def test_unresolved_rows_are_kept_and_explained(normalized) -> None:
    unresolved = normalized.filter(
        pl.col("resolution").is_in(["unresolved_model", "unresolved_benchmark"])
    )
    assert unresolved.height > 0
    assert unresolved["note"].is_not_null().all()
    assert (unresolved["model_id"].is_null() | unresolved["benchmark_id"].is_null()).all()
    # every source row is in the output, none dropped
    assert normalized.group_by("source").len().sort("source")["len"].sum() == normalized.height
