"""The ten "same model, different strings" examples of the leaderboards README resolve as a
person would expect: one identity per (model, snapshot, setting), BenchPress ids where
BenchPress has the model at that setting, and moving aliases left unresolved.

Each case is (source, the name as the source spells it, expected model id); `None` = must stay
unresolved. Names are checked twice: through `resolve_model_name` and, where the string is in
the recorded payloads, on the rows `resolve()` produced for it."""

from __future__ import annotations

import polars as pl
import pytest

from pipelines.identity.resolve import resolve_model_name
from pipelines.sources import NAME_FIELD

# (source, name, expected id, keyword arguments for resolve_model_name)
CASES: dict[str, list[tuple]] = {
    "Claude Sonnet 4 (2025-05-14)": [
        ("livebench", "claude-4-sonnet-20250514-base", "claude-sonnet-4@nothinking", {}),
        ("livebench", "claude-4-sonnet-20250514-thinking-64k", "claude-sonnet-4", {}),
        (
            "swebench",
            "claude-sonnet-4-20250514",
            "claude-sonnet-4@nothinking",
            {"display": "Claude 4 Sonnet (20250514)"},
        ),
        ("aider", "claude-sonnet-4-20250514 (no thinking)", "claude-sonnet-4@nothinking", {}),
        (
            "aider",
            "claude-sonnet-4-20250514 (32k thinking)",
            "claude-sonnet-4@thinking-32k",
            {"thinking_budget": "32000"},
        ),
        ("lmarena", "Claude Sonnet 4 (20250514)", "claude-sonnet-4@nothinking", {}),
        ("lmarena", "Claude Sonnet 4 (thinking-32k)", "claude-sonnet-4@thinking-32k", {}),
        ("epoch_ai", "claude-sonnet-4-20250514_32K", "claude-sonnet-4@thinking-32k", {}),
        ("epoch_ai", "claude-sonnet-4-20250514_59K", "claude-sonnet-4@thinking-59k", {}),
        (
            "arc_prize",
            "claude-sonnet-4-20250514-thinking-8k-bedrock",
            "claude-sonnet-4@thinking-8k",
            {},
        ),
        ("llm_stats", "claude-sonnet-4-20250514", "claude-sonnet-4", {}),
        ("benchpress_matrix", "claude-sonnet-4", "claude-sonnet-4", {}),
    ],
    "Claude Opus 4.5": [
        ("livebench", "claude-opus-4-5-20251101-thinking-64k-high-effort", "claude-opus-4.5", {}),
        (
            "livebench",
            "claude-opus-4-5-20251101-thinking-64k-low-effort",
            "claude-opus-4.5@thinking-64k-low",
            {},
        ),
        ("livebench", "claude-opus-4-5-20251101-medium-effort", "claude-opus-4.5@medium", {}),
        (
            "swebench",
            "claude-opus-4-5-20251101",
            "claude-opus-4.5@medium",
            {"display": "Claude 4.5 Opus medium (20251101)"},
        ),
        ("epoch_ai", "claude-opus-4-5-20251101_32K", "claude-opus-4.5@thinking-32k", {}),
        ("epoch_ai", "claude-opus-4-5-20251101_unknown", "claude-opus-4.5@thinking", {}),
        ("arc_prize", "claude-opus-4-5-20251101-thinking-16k", "claude-opus-4.5@thinking-16k", {}),
        ("benchpress_matrix", "claude-opus-4.5", "claude-opus-4.5", {}),
    ],
    "GPT-5": [
        ("aider", "gpt-5 (high)", "gpt-5", {"reasoning_effort": "high"}),
        ("aider", "openai/gpt-5", "gpt-5", {"reasoning_effort": "high"}),  # the older name
        ("aider", "openai/gpt-5", "gpt-5@low", {"reasoning_effort": "low"}),
        (
            "swebench",
            "gpt-5-2025-08-07",
            "gpt-5@medium",
            {"display": "GPT-5 (2025-08-07) (medium reasoning)"},
        ),
        ("epoch_ai", "gpt-5-2025-08-07_high", "gpt-5", {}),
        ("arc_prize", "gpt-5-2025-08-07-high", "gpt-5", {}),
        ("llm_stats", "gpt-5-2025-08-07", "gpt-5", {}),
        ("benchpress_matrix", "gpt-5", "gpt-5", {}),
    ],
    "Gemini 2.5 Pro (several checkpoints)": [
        ("aider", "Gemini 2.5 Pro Preview 03-25", "gemini-2.5-pro-exp-03-25", {}),
        (
            "aider",
            "gemini-2.5-pro-preview-06-05 (32k think)",
            "gemini-2.5-pro@thinking-32k",
            {"thinking_budget": "32768"},
        ),
        ("aider", "gemini-2.5-pro-preview-06-05 (default think)", "gemini-2.5-pro", {}),
        ("livebench", "gemini-2.5-pro-06-05-highthinking", "gemini-2.5-pro@high", {}),
        ("lmarena", "Gemini-2.5-Pro", None, {}),  # moving alias, no evaluation date
        ("lmarena", "Gemini-2.5-Pro-Preview-05-06", "gemini-2.5-pro-preview-05-06", {}),
        (
            "swebench",
            "gemini-2.5-pro",
            "gemini-2.5-pro-preview-05-06",
            {"display": "Gemini 2.5 Pro (2025-05-06)", "eval_date": "2025-07-26"},
        ),
        ("arc_prize", "gemini-2.5-pro-exp-03-25", "gemini-2.5-pro-exp-03-25", {}),
        (
            "arc_prize",
            "gemini-2-5-pro-2025-06-17-thinking-32k",
            "gemini-2.5-pro@thinking-32k",
            {},
        ),
        ("livecodebench", "gemini-2.5-pro-exp-03-25", "gemini-2.5-pro-exp-03-25", {}),
        ("benchpress_matrix", "gemini-2.5-pro", "gemini-2.5-pro", {}),
    ],
    "DeepSeek-R1 (+0528)": [
        ("aider", "DeepSeek R1", "deepseek-r1", {}),
        ("aider", "DeepSeek R1 (0528)", "deepseek-r1-0528", {}),
        ("lmarena", "DeepSeek-R1-0528", "deepseek-r1-0528", {}),
        ("epoch_ai", "DeepSeek-R1-0528", "deepseek-r1-0528", {}),
        ("epoch_ai", "chutes/DeepSeek-R1-0528", "deepseek-r1-0528", {}),
        ("epoch_ai", "deepseek-reasoner", None, {}),  # moving alias, no evaluation date
        ("epoch_ai", "deepseek-reasoner", "deepseek-r1-0528", {"eval_date": "2025-06-15"}),
        ("arc_prize", "R1", "deepseek-r1", {}),
        ("arc_prize", "deepseek_r1_0528-openrouter", "deepseek-r1-0528", {}),
        ("llm_stats", "deepseek-r1-0528", "deepseek-r1-0528", {}),
        ("benchpress_matrix", "deepseek-r1-0528", "deepseek-r1-0528", {}),
    ],
    "Qwen3-235B-A22B (Apr 2025)": [
        ("aider", "Qwen3 235B A22B diff, no think, Alibaba API", "qwen3-235b@nothinking", {}),
        ("lmarena", "Qwen3-235B-A22B", "qwen3-235b", {}),
        ("lmarena", "Qwen3-235B-A22B-no-thinking", "qwen3-235b@nothinking", {}),
        ("epoch_ai", "Qwen3-235B-A22B", "qwen3-235b", {}),
        ("epoch_ai", "qwen3-235b-a22b", "qwen3-235b", {}),
        ("epoch_ai", "chutes/Qwen3-235B-A22B", "qwen3-235b", {}),
        ("llm_stats", "qwen3-235b-a22b", "qwen3-235b", {}),
        ("benchpress_matrix", "qwen3-235b", "qwen3-235b", {}),
        # the -2507 releases are other models
        ("livebench", "qwen3-235b-a22b-instruct-2507", "qwen3-235b-a22b-instruct-2507", {}),
        ("arc_prize", "qwen3-235b-a22b-instruct-2507", "qwen3-235b-a22b-instruct-2507", {}),
        (
            "epoch_ai",
            "parasail-qwen3-235b-a22b-instruct-2507",
            "qwen3-235b-a22b-instruct-2507",
            {},
        ),
    ],
    "o3-mini (high)": [
        ("aider", "o3-mini (high)", "o3-mini-high", {}),
        ("lmarena", "o3-mini-high", "o3-mini-high", {}),
        ("arc_prize", "o3-mini-high", "o3-mini-high", {}),
        ("arc_prize", "o3-mini-2025-01-31-high", "o3-mini-high", {}),
        ("livecodebench", "O3-Mini-2025-01-31 (High)", "o3-mini-high", {}),
        ("livecodebench", "o3-mini-2025-01-31__high", "o3-mini-high", {}),
        ("epoch_ai", "o3-mini-2025-01-31_high", "o3-mini-high", {}),
        ("llm_stats", "o3-mini", "o3-mini-high", {}),  # vendor headline = high effort
        ("benchpress_matrix", "o3-mini-high", "o3-mini-high", {}),
    ],
    "GPT-4o (2024-08-06)": [
        ("evalplus", "GPT 4o (Aug 2024)", "gpt-4o-20240806", {}),
        ("livecodebench", "GPT-4O-2024-08-06", "gpt-4o-20240806", {}),
        ("lmarena", "GPT-4o-2024-08-06", "gpt-4o-20240806", {}),
        ("aider", "gpt-4o-2024-08-06", "gpt-4o-20240806", {}),
        ("epoch_ai", "gpt-4o-2024-08-06", "gpt-4o-20240806", {}),
        ("llm_stats", "gpt-4o-2024-08-06", "gpt-4o-20240806", {}),
    ],
    "Claude 3.5 Sonnet (Oct 2024)": [
        ("aider", "claude-3-5-sonnet-20241022", "claude-3.5-sonnet", {}),
        ("lmarena", "Claude 3.5 Sonnet (20241022)", "claude-3.5-sonnet", {}),
        ("livecodebench", "Claude-3.5-Sonnet-20241022", "claude-3.5-sonnet", {}),
        ("benchpress_matrix", "claude-3.5-sonnet", "claude-3.5-sonnet", {}),
        ("llm_stats", "claude-3-5-sonnet-20241022", "claude-3.5-sonnet", {}),
        ("llm_stats", "claude-3-5-sonnet-20240620", "claude-3.5-sonnet-20240620", {}),
        ("evalplus", "Claude Sonnet 3.5 (June 2024)", "claude-3.5-sonnet-20240620", {}),
        ("lmarena", "Claude 3.5 Sonnet", None, {}),  # two snapshots share the name
    ],
    "Kimi K2 (Jul 2025)": [
        ("aider", "Kimi K2", "kimi-k2", {}),
        ("lmarena", "kimi-k2-0711-preview", "kimi-k2", {}),
        ("livebench", "kimi-k2-instruct", "kimi-k2", {}),
        ("swebench", "Kimi-K2-Instruct", "kimi-k2", {"display": "Kimi K2 Instruct"}),
        ("epoch_ai", "Kimi-K2-Instruct", "kimi-k2", {}),
        ("epoch_ai", "kimi-k2-0711-preview", "kimi-k2", {}),
        ("llm_stats", "kimi-k2-instruct", "kimi-k2", {}),
        ("benchpress_matrix", "kimi-k2", "kimi-k2", {}),
        # the September update is another snapshot, listed twice by llm-stats
        ("llm_stats", "kimi-k2-0905", "kimi-k2-0905", {}),
        ("llm_stats", "kimi-k2-instruct-0905", "kimi-k2-0905", {}),
    ],
}
ALL = [(model, *case) for model, cases in CASES.items() for case in cases]


@pytest.mark.parametrize(("model", "source", "name", "expected", "kwargs"), ALL)
def test_readme_example_resolves(registry, model, source, name, expected, kwargs) -> None:
    identity = resolve_model_name(source, name, registry, **kwargs)
    assert identity.model_id == expected, (model, source, name, identity)
    if expected is None:
        assert identity.route == "unresolved" and identity.note


def test_each_readme_model_is_one_identity_per_setting(registry) -> None:
    """No two settings of one model share an id, and one setting never gets two ids."""
    for model, cases in CASES.items():
        ids = {
            resolve_model_name(source, name, registry, **kwargs).model_id
            for source, name, expected, kwargs in cases
            if expected is not None
        }
        assert ids == {e for _, _, e, _ in cases if e is not None}, model


def test_readme_names_in_the_recorded_payloads_resolve_the_same_way(normalized) -> None:
    """Where a README string is a recorded row, the pipeline's rows carry the same id."""
    dated = {(source, name) for _, source, name, _, kwargs in ALL if "eval_date" in kwargs}
    checked = 0
    for _model, source, name, expected, kwargs in ALL:
        if kwargs or source == "swebench" or (source, name) in dated:
            continue  # these depend on columns the recorded row carries itself
        field = NAME_FIELD.get(source, "model_key")
        rows = normalized.filter(
            (pl.col("source") == source)
            & (pl.col(field) == name)
            # a row stating its own setting (llm-stats' analysis_method) is another model
            & pl.col("thinking_budget").is_null()
            & pl.col("reasoning_effort").is_null()
        )
        if rows.height == 0:
            continue
        checked += 1
        placed = rows.filter(pl.col("resolution").is_in(["resolved", "rejected"]))
        if expected is None:
            assert rows["model_id"].is_null().all(), (source, name)
        else:
            assert placed.height and set(placed["model_id"].to_list()) == {expected}, (
                source,
                name,
                rows.select("model_id", "resolution", "note").unique().rows(),
            )
    assert checked >= 50


def test_codenames_wrong_ids_and_duplicates(registry) -> None:
    assert (
        resolve_model_name("livebench", "claude-fudge-eap-auto-thinking-high-effort", registry)
    ).model_id == "claude-opus-4.6@thinking-auto-high"
    for source, name in [
        ("lmarena", "chocolate (Early Grok-3)"),
        ("aider", "Quasar Alpha"),
        ("aider", "Optimus Alpha"),
        ("livebench", "elephant-alpha"),
    ]:
        identity = resolve_model_name(source, name, registry)
        assert identity.model_id is None and identity.route == "unresolved", name
    # llm-stats' wrong id for Claude Haiku 4.5 is the same model as Anthropic's id
    wrong = resolve_model_name("llm_stats", "claude-haiku-4-5-20251015", registry)
    right = resolve_model_name("llm_stats", "claude-haiku-4-5-20251001", registry)
    assert wrong.model_id == right.model_id == "claude-haiku-4.5"
