"""Model families read off ids (`predictor.names.families`) and their encoding for the prior."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.methods.hierarchy import encode_groups
from predictor.names.families import model_families, model_family


@pytest.mark.parametrize(
    ("model_id", "base", "line"),
    [
        ("o3-high", "o3", "o3"),  # BenchPress's headline setting in the id
        ("o3@low", "o3", "o3"),
        ("o3@medium", "o3", "o3"),
        ("o3-mini-high", "o3-mini", "o3"),
        ("gpt-4o-20240806", "gpt4o", "gpt4o"),  # a dated snapshot
        ("gpt-4o-0513", "gpt4o", "gpt4o"),
        ("gpt-4o-mini", "gpt4o-mini", "gpt4o"),
        ("gpt-4.1-nano", "gpt4.1-nano", "gpt4.1"),
        ("claude-opus-4.5@thinking-64k-low", "claude-opus-4.5", "claude4.5"),
        ("claude-sonnet-4.5", "claude-sonnet-4.5", "claude4.5"),
        ("claude-3.7-sonnet", "claude3.7-sonnet", "claude3.7"),
        ("qwen3-30b-a3b", "qwen3-30b-a3b", "qwen3"),
        ("qwen3-235b-a22b-thinking-2507", "qwen3-235b-a22b-thinking", "qwen3"),
        ("qwen-2.5-7b", "qwen2.5-7b", "qwen2.5"),  # both spellings of Qwen 2.5
        ("qwen2.5-72b-instruct", "qwen2.5-72b-instruct", "qwen2.5"),
        ("deepseek-r1-0528", "deepseek-r1", "deepseek-r1"),
        ("deepseek-v3.2-exp@thinking", "deepseek-v3.2", "deepseek-v3.2"),
        ("gemini-2.5-flash-preview-09-2025@high", "gemini2.5-flash", "gemini2.5"),
        ("gemini-1.5-pro-002", "gemini1.5-pro", "gemini1.5"),
        ("mixtral-8x7b-instruct-v0.1", "mixtral8x7b-instruct-v0.1", "mixtral"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama3.1-8b-instruct", "llama3.1"),
        ("gemma-3-1b-it", "gemma3-1b-it", "gemma3"),
    ],
)
def test_family_names_follow_fixed_rules(model_id: str, base: str, line: str) -> None:
    assert model_family(model_id, "base") == base
    assert model_family(model_id) == line  # "line" is the default


def test_family_level_is_checked() -> None:
    with pytest.raises(ValueError, match="level must be one of"):
        model_family("o3", "vendor")


def test_encoding_groups_shared_names_and_does_not_depend_on_row_order() -> None:
    ids = ["gpt-5", "o3-high", "gpt-5-mini", "o3@medium", "kimi-k2"]
    groups = encode_groups(model_families(ids), len(ids), "row_groups")
    assert groups is not None
    assert groups.labels == ("gpt5", "kimi-k2", "o3")  # sorted; kimi-k2 is a family of one
    assert groups.codes.tolist() == [0, 2, 0, 2, 1]
    assert groups.size.tolist() == [2, 1, 2]
    assert groups.n_named == 2
    shuffled = encode_groups(model_families(ids[::-1]), len(ids), "row_groups")
    assert shuffled.labels == groups.labels
    assert shuffled.codes.tolist() == groups.codes[::-1].tolist()
    # None (or "") = no family: a group of its own, after the named ones
    mixed = encode_groups(["a", None, "a", ""], 4, "row_groups")
    assert mixed.labels == ("a", None, None) and mixed.codes.tolist() == [0, 1, 0, 2]
    assert mixed.index("a") == 0 and mixed.index(None) is None and mixed.index("b") is None


def test_encoding_without_any_shared_family_is_no_grouping() -> None:
    assert encode_groups(["a", "b", None], 3, "row_groups") is None
    assert encode_groups(None, 3, "row_groups") is None
    with pytest.raises(ValueError, match="row_groups has 2 entries, expected 3"):
        encode_groups(["a", "a"], 3, "row_groups")
    with pytest.raises(ValueError, match=r"col_groups\[1\] is 7"):
        encode_groups(["a", 7, "a"], 3, "col_groups")
    assert encode_groups(["a", float("nan"), "a"], 3, "row_groups").codes.tolist() == [0, 1, 0]
    assert np.array_equal(encode_groups(["x", "x"], 2, "g").order, [0, 1])
