"""The parts of `benchpress run` that need no tool: the task facts the plan is sized from,
the endpoint settings and the key's handling, the preflight's URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from predictor.harnesses import get_harness
from predictor.harnesses.endpoint import SettingsError, chat_only
from predictor.results.runnable import preferred_tasks
from predictor.results.task_facts import RUNS_MODEL_CODE, load_facts, task_facts
from predictor.runs.plan import format_duration, format_tokens, plan_task
from predictor.runs.preflight import models_url
from predictor.runs.settings import parse_task_overrides, resolve_endpoint


@pytest.mark.parametrize("tool", ["lm_eval", "inspect"])
def test_every_task_a_probe_runs_by_default_is_sized(tool: str) -> None:
    for generative in (False, True):
        for benchmark, task in preferred_tasks(tool, generative_only=generative).items():
            if tool == "inspect" and "/" not in task:
                continue  # a bare name is not runnable from the registry
            facts = task_facts(tool, task)
            assert facts is not None, (benchmark, task)
            assert facts.items and facts.tokens_per_item, (benchmark, task)
            assert facts.generative or not generative


def _lm_eval_configs() -> dict[str, Path]:
    """lm-eval's own task configs by task name (the installed package's YAML files)."""
    import lm_eval  # deferred: the optional tool this test reads the configs of

    found: dict[str, Path] = {}
    for path in sorted(Path(lm_eval.__file__).parent.joinpath("tasks").rglob("*.yaml")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("task:"):
                found.setdefault(line.split(":", 1)[1].strip().strip("'\""), path)
    return found


def _marked_unsafe(path: Path) -> bool:
    """`unsafe_code: true` in the config or in one it includes."""
    text = path.read_text(encoding="utf-8", errors="replace")
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "unsafe_code":
            return value.strip().lower() == "true"
        included = path.parent / value.strip()
        if key == "include" and included.is_file() and _marked_unsafe(included):
            return True
    return False


def test_the_tasks_that_run_model_code_are_the_ones_lm_eval_marks_unsafe() -> None:
    configs = _lm_eval_configs()
    ours = [task for tool, task in load_facts() if tool == "lm_eval"]
    unsafe = {task for task in ours if task in configs and _marked_unsafe(configs[task])}
    assert unsafe == {task for tool, task in RUNS_MODEL_CODE if tool == "lm_eval"}
    assert {("inspect", "inspect_evals/humaneval"), ("inspect", "inspect_evals/mbpp")} < (
        RUNS_MODEL_CODE
    )
    assert set(load_facts()) >= RUNS_MODEL_CODE


def test_facts_table_reads_known_sizes() -> None:
    facts = load_facts()
    assert facts["lm_eval", "mmlu"].items == 14042
    assert facts["lm_eval", "gpqa_diamond_cot_zeroshot"].generative
    assert not facts["lm_eval", "hellaswag"].generative


def test_plan_task_from_the_table_with_a_limit() -> None:
    task = plan_task("lm_eval", "gpqa_diamond", "gpqa_diamond_cot_zeroshot", False, 20)
    assert (task.items, task.shots, task.tokens) == (20, 0, 20 * 1500)
    assert task.note == "0-shot chain of thought, answer letter extracted"
    own = plan_task("lm_eval", "hle", "my_hle", True, None, lambda t: (40, 100))
    assert (own.items, own.tokens, own.note) == (40, 4000, "your own task definition")
    assert (format_tokens(7_020_000), format_tokens(2500), format_tokens(None)) == (
        "~7.0M",
        "~2k",
        "unknown",
    )
    assert (format_duration(30), format_duration(3660), format_duration(36000)) == (
        "~30 s",
        "~61 min",
        "~10.0 h",
    )


def test_endpoint_from_settings_keeps_the_key_out_of_model_args() -> None:
    env = {
        "BENCHPRESS_MODEL_BASE_URL": "http://127.0.0.1:8000/v1/completions",
        "BENCHPRESS_MODEL_TYPE": "local-completions",
        "BENCHPRESS_MODEL_API_KEY": "sk-secret",
        "BENCHPRESS_MODEL_TIMEOUT": "30",
    }
    endpoint = resolve_endpoint("new-model-v1", env=env)
    assert endpoint.model_args == {
        "model": "new-model-v1",
        "base_url": "http://127.0.0.1:8000/v1/completions",
        "tokenizer_backend": "remote",
        "timeout": 30,
        "max_retries": 3,
    }
    assert endpoint.base_url_origin == "BENCHPRESS_MODEL_BASE_URL"
    assert get_harness("lm_eval").tool.key_variables(endpoint) == {"OPENAI_API_KEY": "sk-secret"}
    assert "sk-secret" not in repr(endpoint)
    hf = resolve_endpoint("org/model-7b", model_type="hf", env={})
    assert hf.model_args == {"pretrained": "org/model-7b"} and not hf.is_api


@pytest.mark.parametrize(
    ("kwargs", "env", "message"),
    [
        ({}, {}, "no model type: pass --model-type"),
        ({"model_type": "local-completions"}, {}, "needs the endpoint: --model-args base_url"),
        (
            {"model_type": "local-completions", "model_args": "base_url=http://h/v1,api_key=x"},
            {},
            "do not pass api_key=",
        ),
        ({"model_type": "hf", "model_args": "pretrained"}, {}, "expected key=value pairs"),
        ({"model_type": "hf"}, {"BENCHPRESS_MODEL_TIMEOUT": "soon"}, "expected seconds"),
        ({"model_type": "hf", "timeout": -1}, {}, "expected seconds > 0"),
    ],
)
def test_bad_settings_name_what_to_fix(kwargs, env, message) -> None:
    with pytest.raises(SettingsError, match=message):
        resolve_endpoint("m", env=env, **kwargs)


def test_chat_types_and_task_overrides() -> None:
    assert chat_only("local-chat-completions") and not chat_only("local-completions")
    assert parse_task_overrides(["gpqa_diamond=my_gpqa", " hle = my_hle "]) == {
        "gpqa_diamond": "my_gpqa",
        "hle": "my_hle",
    }
    with pytest.raises(SettingsError, match="expected BENCHMARK=TASK"):
        parse_task_overrides(["gpqa_diamond"])


@pytest.mark.parametrize(
    ("base", "models"),
    [
        ("http://h:8000/v1/completions", "http://h:8000/v1/models"),
        ("http://h:8000/v1/chat/completions", "http://h:8000/v1/models"),
        ("http://h:8000/v1", "http://h:8000/v1/models"),
        ("https://api.example.org/proxy/v1/completions", "https://api.example.org/proxy/v1/models"),
    ],
)
def test_preflight_asks_the_model_list_of_the_server(base: str, models: str) -> None:
    assert models_url(base) == models


@pytest.mark.parametrize(
    ("kind", "url", "suggested"),
    [
        ("local-completions", "http://127.0.0.1:8000", "http://127.0.0.1:8000/v1/completions"),
        ("local-completions", "http://h:8000/v1/", "http://h:8000/v1/completions"),
        ("local-chat-completions", "http://h:8080/v1", "http://h:8080/v1/chat/completions"),
    ],
)
def test_a_base_url_without_its_route_is_refused_with_the_one_to_use(kind, url, suggested):
    with pytest.raises(SettingsError, match=f"e.g. base_url={suggested}$"):
        resolve_endpoint("m", model_type=kind, model_args=f"base_url={url}", env={})
