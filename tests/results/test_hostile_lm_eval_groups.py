"""Hostile lm-eval `group_subtasks`: a group graph that expands exponentially, nests without
end, or contains itself. Each group is expanded once; a cycle and nesting past
`MAX_GROUP_DEPTH` are refused naming the group."""

from __future__ import annotations

import json
import time

import pytest

from predictor.results import ResultsError, read_results

SECONDS = 2.0


def write(tmp_path, subtasks: dict[str, list[str]], results: dict[str, dict]):
    doc = {
        "results": results,
        "group_subtasks": subtasks,
        "n-samples": {"g7": {"original": 10, "effective": 10}},
        "model_name": "m",
        "lm_eval_version": "0.4.9",
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_child_repeated_at_every_level_is_expanded_once(tmp_path) -> None:
    subtasks = {f"g{i}": [f"g{i + 1}"] * 10 for i in range(7)}
    path = write(tmp_path, subtasks, {"g0": {"acc,none": 0.5}, "g7": {"acc,none": 0.5}})
    assert path.stat().st_size < 700
    start = time.perf_counter()
    frame = read_results([path])
    assert time.perf_counter() - start < SECONDS
    assert frame.select("task", "n").rows() == [("g0", 10), ("g7", 10)]


def test_a_chain_of_groups_too_deep_is_refused_naming_the_group(tmp_path) -> None:
    subtasks = {f"g{i}": [f"g{i + 1}"] for i in range(5000)}
    path = write(tmp_path, subtasks, {"g0": {"acc,none": 0.5}})
    with pytest.raises(ResultsError) as caught:
        read_results([path])
    assert str(caught.value) == (
        f"{path}, group_subtasks.g32: groups nest more than 32 levels deep (g0 > g1 > ... > "
        "g32) (lm-eval nests a few levels; was the file edited?)"
    )


def test_a_group_containing_itself_is_refused(tmp_path) -> None:
    subtasks = {"a": ["b"], "b": ["t", "a"]}
    path = write(tmp_path, subtasks, {"a": {"acc,none": 0.5}, "t": {"acc,none": 0.5}})
    with pytest.raises(ResultsError) as caught:
        read_results([path])
    assert str(caught.value) == (
        f"{path}, group_subtasks.b: group 'a' contains itself (a > b > a) (lm-eval nests a "
        "few levels; was the file edited?)"
    )
