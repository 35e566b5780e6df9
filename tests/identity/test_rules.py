"""Per-source name grammars on real names: settings, dates, word order, dots vs dashes,
provider prefixes - each rule a plain rewrite, checked on strings the sources publish."""

from __future__ import annotations

import pytest

from pipelines.identity.rules import normalise_base, parse_name
from pipelines.identity.settings import Setting, budget_token, parse_setting_text


def parsed(source: str, name: str, **kw) -> tuple[str | None, str | None, str | None]:
    p = parse_name(source, name, kw.get("effort"), kw.get("budget"))
    return p.base, p.date, p.setting.canonical()


@pytest.mark.parametrize(
    ("source", "name", "expected"),
    [
        # LiveBench: -base, -thinking-64k, -high-effort, -highthinking, -nothinking
        (
            "livebench",
            "claude-4-sonnet-20250514-base",
            ("claude-sonnet-4", "2025-05-14", "nothinking"),
        ),
        (
            "livebench",
            "claude-opus-4-5-20251101-thinking-64k-high-effort",
            ("claude-opus-4.5", "2025-11-01", "thinking-64k-high"),
        ),
        ("livebench", "gemini-2.5-pro-06-05-highthinking", ("gemini-2.5-pro-06-05", None, "high")),
        ("livebench", "gpt-5.1-2025-11-13-nothinking", ("gpt-5.1", "2025-11-13", "nothinking")),
        (
            "livebench",
            "claude-opus-4-6-thinking-auto-high-effort",
            ("claude-opus-4.6", None, "thinking-auto-high"),
        ),
        ("livebench", "grok-4-1-fast-non-reasoning", ("grok-4.1-fast", None, "nothinking")),
        # Epoch: _32K budgets, _high efforts, _unknown, provider prefixes
        (
            "epoch_ai",
            "claude-sonnet-4-20250514_59K",
            ("claude-sonnet-4", "2025-05-14", "thinking-59k"),
        ),
        ("epoch_ai", "gpt-5-2025-08-07_high", ("gpt-5", "2025-08-07", "high")),
        (
            "epoch_ai",
            "claude-opus-4-5-20251101_unknown",
            ("claude-opus-4.5", "2025-11-01", "thinking"),
        ),
        ("epoch_ai", "chutes/DeepSeek-R1-0528", ("deepseek-r1-0528", None, None)),
        ("epoch_ai", "fireworks/kimi-k2p5", ("kimi-k2.5", None, None)),
        ("epoch_ai", "openai/gpt-oss-120b_high", ("gpt-oss-120b", None, "high")),
        (
            "epoch_ai",
            "Qwen/Qwen3-235B-A22B-Thinking-2507",
            ("qwen3-235b-a22b-thinking-2507", None, None),
        ),
        ("epoch_ai", "gpt-5.1-2025-11-13_none", ("gpt-5.1", "2025-11-13", "nothinking")),
        (
            "epoch_ai",
            "gemini-2.5-flash-preview-04-17 (24K thinking)",
            ("gemini-2.5-flash-preview-04-17", None, "thinking-24k"),
        ),
        ("epoch_ai", "amazon.nova-pro-v1:0", ("nova-pro", None, None)),
        # ARC Prize: -thinking-16k, -thinking-none, -thinking-120K-high, provider suffixes
        (
            "arc_prize",
            "claude-opus-4-5-20251101-thinking-none",
            ("claude-opus-4.5", "2025-11-01", "nothinking"),
        ),
        (
            "arc_prize",
            "claude-opus-4-6-thinking-120K-high",
            ("claude-opus-4.6", None, "thinking-120k-high"),
        ),
        ("arc_prize", "gpt-5-1-2025-11-13-thinking-high", ("gpt-5.1", "2025-11-13", "high")),
        (
            "arc_prize",
            "gemini-2-5-pro-2025-06-17-thinking-32k",
            ("gemini-2.5-pro", "2025-06-17", "thinking-32k"),
        ),
        (
            "arc_prize",
            "Llama-4-Maverick-17B-128E-Instruct-FP8-together",
            ("llama-4-maverick-17b-128e-instruct", None, None),
        ),
        ("arc_prize", "anthropic-opus-4-6-max-effort", ("claude-opus-4.6", None, "max")),
        (
            "arc_prize",
            "xai-grok-4-20-beta-0309-reasoning",
            ("grok-4.20-beta-0309", None, "thinking"),
        ),
        ("arc_prize", "google-gemini-3-1-pro-preview", ("gemini-3.1-pro-preview", None, None)),
        # Aider display names: (32k thinking), (no think), (high), edit formats, ollama tags
        (
            "aider",
            "claude-3-7-sonnet-20250219 (32k thinking tokens)",
            ("claude-3.7-sonnet", "2025-02-19", "thinking-32k"),
        ),
        (
            "aider",
            "claude-opus-4-20250514 (no think)",
            ("claude-opus-4", "2025-05-14", "nothinking"),
        ),
        (
            "aider",
            "gemini-2.5-pro-preview-06-05 (default think)",
            ("gemini-2.5-pro-preview-06-05", None, "thinking"),
        ),
        ("aider", "gpt-4-turbo-2024-04-09 (udiff)", ("gpt-4-turbo", "2024-04-09", None)),
        ("aider", "Mistral Large 2 (2407)", ("mistral-large-2-2407", None, None)),
        ("aider", "Command R+ (08-24)", ("command-r-plus-08-2024", None, None)),
        ("aider", "DeepSeek-V3.2-Exp (Reasoner)", ("deepseek-v3.2-exp", None, "thinking")),
        ("aider", "DeepSeek-V3.2-Exp (Chat)", ("deepseek-v3.2-exp", None, "nothinking")),
        ("aider", "ollama/qwen2.5-coder:32b", ("qwen2.5-coder-32b", None, None)),
        ("aider", "codestral:22b-v0.1-q8_0", ("codestral-22b-v0.1", None, "quant-q8_0")),
        ("aider", "gpt-5 (high)", ("gpt-5", None, "high")),
        # LMArena: (20250514), (thinking-32k), -no-thinking, word order
        ("lmarena", "Claude Sonnet 4 (thinking-32k)", ("claude-sonnet-4", None, "thinking-32k")),
        ("lmarena", "Claude 3.5 Sonnet (20241022)", ("claude-3.5-sonnet", "2024-10-22", None)),
        ("lmarena", "Qwen3-235B-A22B-no-thinking", ("qwen3-235b-a22b", None, "nothinking")),
        ("lmarena", "Meta-Llama-3.1-405B-Instruct-fp8", ("llama-3.1-405b-instruct", None, None)),
        ("lmarena", "Command A (03-2025)", ("command-a-03-2025", None, None)),
        # LiveCodeBench: __high, (High)
        ("livecodebench", "o3-mini-2025-01-31__high", ("o3-mini", "2025-01-31", "high")),
        ("livecodebench", "O3-Mini-2025-01-31 (High)", ("o3-mini", "2025-01-31", "high")),
        # SWE-bench display names
        (
            "swebench",
            "Claude 4.5 Opus medium (20251101)",
            ("claude-opus-4.5", "2025-11-01", "medium"),
        ),
        ("swebench", "GPT-5 (2025-08-07) (medium reasoning)", ("gpt-5", "2025-08-07", "medium")),
        # EvalPlus: month-level dates, word order
        ("evalplus", "GPT 4o (Aug 2024)", ("gpt-4o", "2024-08", None)),
        ("evalplus", "Claude Sonnet 3.5 (June 2024)", ("claude-3.5-sonnet", "2024-06", None)),
        ("evalplus", "GPT-4-Turbo (Nov 2023)", ("gpt-4-turbo", "2023-11", None)),
        # ARC display names with year/month and month/day codes
        (
            "arc_prize",
            "Qwen3-235b-a22b Instruct (25/07)",
            ("qwen3-235b-a22b-instruct-2507", None, None),
        ),
        ("arc_prize", "Deepseek R1 (05/28)", ("deepseek-r1-0528", None, None)),
        # Open LLM Leaderboard: unknown organisations stay in the id, vendor orgs are dropped
        ("open_llm_leaderboard", "01-ai/Yi-1.5-34B-Chat", ("yi-1.5-34b-chat", None, None)),
        (
            "open_llm_leaderboard",
            "0-hero/Matter-0.2-7B-DPO",
            ("0-hero/matter-0.2-7b-dpo", None, None),
        ),
    ],
)
def test_source_grammar(source, name, expected) -> None:
    assert parsed(source, name) == expected


def test_livebench_base_is_a_setting_only_in_livebench() -> None:
    assert parsed("livebench", "claude-4-1-opus-20250805-base")[2] == "nothinking"
    assert parsed("llm_stats", "kimi-k2-base") == ("kimi-k2-base", None, None)  # a pretrained model


def test_size_words_are_not_efforts() -> None:
    assert parsed("lmarena", "mistral-medium")[0] == "mistral-medium"
    assert parsed("arc_prize", "magistral-medium-2506-thinking") == (
        "magistral-medium-2506",
        None,
        "thinking",
    )
    assert (
        parsed("epoch_ai", "qwen2.5-max")[0] == "qwen2.5-max"
    )  # -max is an effort only for Claude
    assert parsed("arc_prize", "anthropic-opus-4-8-max")[2] == "max"


def test_columns_fill_what_the_name_does_not_say() -> None:
    assert parsed("aider", "openai/gpt-5", effort="medium") == ("gpt-5", None, "medium")
    assert parsed("aider", "claude-sonnet-4-20250514 (32k thinking)", budget="32000")[2] == (
        "thinking-32k"
    )
    assert parsed("aider", "gemini-2.5-flash-preview-05-20 (no think)", budget="0")[2] == (
        "nothinking"
    )


def test_ensembles_and_systems_are_not_one_model() -> None:
    for name in (
        "o3 (high) + gpt-4.1",
        "DeepSeek R1 + claude-3-5-sonnet-20241022",
        "Lingxi v1.5 x Kimi K2",
    ):
        p = parse_name("aider", name)
        assert p.base is None and "several models" in (p.reason or "")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Claude 4 Sonnet", "claude-sonnet-4"),
        ("Claude Sonnet 4", "claude-sonnet-4"),
        ("Claude Sonnet 3.5", "claude-3.5-sonnet"),
        ("Claude 3.5 Sonnet", "claude-3.5-sonnet"),
        ("claude-4-1-opus", "claude-opus-4.1"),
        ("claude-opus-4-5", "claude-opus-4.5"),
        ("gpt-4-5", "gpt-4.5"),
        ("gpt-4-1106-preview", "gpt-4-1106-preview"),  # a date code, not a version
        ("gemini-2-5-pro", "gemini-2.5-pro"),
        ("Llama3.1-8B-instruct", "llama-3.1-8b-instruct"),
        ("qwen-2.5-72b-instruct", "qwen2.5-72b-instruct"),
        ("gpt4all-13b-snoozy", "gpt4all-13b-snoozy"),
        ("deepseek/deepseek-v3p2", "deepseek-v3.2"),
    ],
)
def test_word_order_and_dots(raw, expected) -> None:
    assert normalise_base(raw) == expected


def test_setting_spelling() -> None:
    assert Setting(thinking="on", effort="high").canonical() == "high"
    assert Setting(thinking="64k", effort="high").canonical() == "thinking-64k-high"
    assert Setting(effort="none").canonical() == "nothinking"
    assert Setting(thinking="auto").canonical() == "thinking-auto"
    assert Setting().canonical() is None
    assert budget_token("32000") == budget_token("32768") == budget_token("32K") == "32k"
    assert budget_token("24576") == "24k"
    assert parse_setting_text("Thinking, 16K") == Setting(thinking="16k")
    assert parse_setting_text("120K, High") == Setting(thinking="120k", effort="high")
    assert parse_setting_text("medium reasoning").canonical() == "medium"
    assert parse_setting_text("Preview") is None
