"""Session fixtures that run the installed lm-eval and Inspect, offline, into a temp folder.

The files the tests read here are written by the tools themselves, not by hand:

- lm-eval: its `dummy` model over local task YAMLs and a local jsonl file (a 2-shot multiple
  choice task, a generative task, a group over both, and a task with IFEval's two strict
  accuracies computed by a local `process_results`, named `leaderboard_ifeval` so that the
  mapping onto `open_llm_ifeval` is exercised end to end). The run calls what `lm-eval run`
  calls (`simple_evaluate` with an `EvaluationTracker`, then `save_results_aggregated`), with a
  `TaskManager` over the local folder only: the command line first indexes all ~14,700
  built-in tasks, which alone takes 20 s of CPU.
- Inspect: a local task file evaluated with the `mockllm/model` provider, once per log format
  (`.eval`, `.json`), plus a task whose solver raises, which Inspect logs with status
  `error`. The mock's replies are given by a function (with token usage set, so Inspect does
  not fetch a tokenizer to count them).

Everything runs with the Hugging Face and Inspect caches, HOME and XDG folders inside the temp
folder and the Hugging Face libraries offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

RUN_TIMEOUT = 300  # seconds; a cold run on a busy 2-core machine takes ~30 s

LM_EVAL_MODEL = "bp-fresh-dummy"
# IFEval stand-in: (prompt-level strict ok, instruction-level strict results) per document
IFEVAL_DOCS = [
    (True, [True, True]),
    (False, [True, False, False]),
    (True, [True]),
    (False, [False, True]),
]
# Inspect stand-in: sample input -> (target, the mock model's reply)
INSPECT_SAMPLES = {
    "q0": ("42", "The answer is 42"),
    "q1": ("7", "It is 7"),
    "q2": ("9", "9"),
    "q3": ("5", "I think 5"),
    "q4": ("3", "3 is my guess, or maybe not"),  # includes(): right; match() at the end: wrong
    "q5": ("8", "no idea"),
}


@dataclass(frozen=True)
class FreshRun:
    """Where one tool wrote its files."""

    folder: Path
    files: tuple[Path, ...]


def offline_env(root: Path) -> dict[str, str]:
    """The environment of a tool run: offline, every cache and home inside `root`."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "INSPECT_"))}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_CONFIG_HOME=str(home / "config"),
        HF_HOME=str(root / "hf"),
        HF_DATASETS_OFFLINE="1",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        TOKENIZERS_PARALLELISM="false",
        INSPECT_DISPLAY="none",
        INSPECT_LOG_DIR=str(root / "inspect-default-logs"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


def _run(script: Path, args: list[str], root: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=root,
        env=offline_env(root),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(
            f"{script.name} failed ({done.returncode}):\n{done.stdout[-3000:]}\n"
            f"{done.stderr[-6000:]}"
        )


LM_EVAL_DRIVER = """
import sys

from lm_eval import simple_evaluate
from lm_eval.loggers import EvaluationTracker
from lm_eval.tasks import TaskManager

tasks_dir, out_dir, model = sys.argv[1], sys.argv[2], sys.argv[3]
tracker = EvaluationTracker(output_path=out_dir)
manager = TaskManager(include_path=tasks_dir, include_defaults=False)
results = simple_evaluate(
    model="dummy",
    model_args=f"pretrained={model}",
    tasks=["bp_fresh_group", "leaderboard_ifeval"],
    task_manager=manager,
    evaluation_tracker=tracker,
)
tracker.save_results_aggregated(results=results, samples=None)
"""

LM_EVAL_TASKS = {
    "bp_fresh_mc.yaml": """
        task: bp_fresh_mc
        dataset_path: json
        dataset_kwargs:
          data_files:
            train: {data}
            test: {data}
        test_split: test
        fewshot_split: train
        output_type: multiple_choice
        doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
        doc_to_choice: "{{{{choices}}}}"
        doc_to_target: label
        num_fewshot: 2
        metric_list:
          - metric: acc
            aggregation: mean
            higher_is_better: true
          - metric: acc_norm
            aggregation: mean
            higher_is_better: true
        metadata:
          version: 1.0
    """,
    "bp_fresh_gen.yaml": """
        task: bp_fresh_gen
        dataset_path: json
        dataset_kwargs:
          data_files:
            test: {data}
        test_split: test
        output_type: generate_until
        doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
        doc_to_target: "{{{{answer}}}}"
        generation_kwargs:
          until: ["\\n"]
        metric_list:
          - metric: exact_match
            aggregation: mean
            higher_is_better: true
        metadata:
          version: 2.0
    """,
    "bp_fresh_group.yaml": """
        group: bp_fresh_group
        task:
          - bp_fresh_mc
          - bp_fresh_gen
        aggregate_metric_list:
          - metric: acc
            weight_by_size: true
        metadata:
          version: 1.0
    """,
    "bp_fresh_ifeval.yaml": """
        task: leaderboard_ifeval
        dataset_path: json
        dataset_kwargs:
          data_files:
            test: {ifeval_data}
        test_split: test
        output_type: generate_until
        num_fewshot: 0
        doc_to_text: "{{{{prompt}}}}"
        doc_to_target: 0
        generation_kwargs:
          until: []
        process_results: !function bp_fresh_utils.process_results
        metric_list:
          - metric: prompt_level_strict_acc
            aggregation: mean
            higher_is_better: true
          - metric: inst_level_strict_acc
            aggregation: !function bp_fresh_utils.agg_inst_level_acc
            higher_is_better: true
        metadata:
          version: 3.0
    """,
}

LM_EVAL_UTILS = '''
def process_results(doc, results):
    """IFEval's two strict accuracies, read from the document instead of checked."""
    return {
        "prompt_level_strict_acc": doc["prompt_ok"],
        "inst_level_strict_acc": doc["inst_ok"],
    }


def agg_inst_level_acc(items):
    flat = [ok for item in items for ok in item]
    return sum(flat) / len(flat)
'''


def write_lm_eval_tasks(folder: Path) -> Path:
    """The local task folder: YAMLs, their data and the IFEval stand-in's functions."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "arith.jsonl"
    with data.open("w", encoding="utf-8") as handle:
        for i in range(10):
            row = {
                "question": f"What is {i} + {i}?",
                "choices": [str(2 * i), str(2 * i + 1), str(2 * i + 3)],
                "label": 0,
                "answer": "lol" if i < 3 else str(2 * i),  # the dummy model answers "lol"
            }
            handle.write(json.dumps(row) + "\n")
    ifeval_data = folder / "ifeval.jsonl"
    with ifeval_data.open("w", encoding="utf-8") as handle:
        for i, (prompt_ok, inst_ok) in enumerate(IFEVAL_DOCS):
            row = {"prompt": f"Write {i} words.", "prompt_ok": prompt_ok, "inst_ok": inst_ok}
            handle.write(json.dumps(row) + "\n")
    for name, text in LM_EVAL_TASKS.items():
        body = textwrap.dedent(text).format(data=data, ifeval_data=ifeval_data)
        (folder / name).write_text(body.lstrip(), encoding="utf-8")
    (folder / "bp_fresh_utils.py").write_text(LM_EVAL_UTILS.lstrip(), encoding="utf-8")
    return folder


INSPECT_TASKS = """
from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.scorer import includes, match
from inspect_ai.solver import generate, solver


@task
def bp_fresh_qa():
    return Task(
        dataset=json_dataset("qa.jsonl"), solver=generate(), scorer=[match(), includes()]
    )


@solver
def broken():
    async def solve(state, generate):
        raise RuntimeError("the solver broke on purpose")

    return solve


@task
def bp_fresh_broken():
    return Task(dataset=json_dataset("qa.jsonl"), solver=broken(), scorer=match())
"""

INSPECT_DRIVER = """
import json
import sys

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

log_dir = sys.argv[1]
replies = json.loads(sys.argv[2])


def reply(messages, tools, tool_choice, config):
    asked = messages[-1].text.strip()
    output = ModelOutput.from_content(model="mockllm/model", content=replies[asked])
    output.usage = ModelUsage(input_tokens=3, output_tokens=2, total_tokens=5)
    return output


model = get_model("mockllm/model", custom_outputs=reply, memoize=False)
for log_format in ("eval", "json"):
    inspect_eval("tasks.py@bp_fresh_qa", model=model, log_dir=log_dir, log_format=log_format,
                 display="none")
inspect_eval("tasks.py@bp_fresh_broken", model=model, log_dir=log_dir, log_format="eval",
             display="none")
"""


@pytest.fixture(scope="session")
def lm_eval_run(tmp_path_factory: pytest.TempPathFactory) -> FreshRun:
    """One lm-eval run with the dummy model; its `results_*.json`."""
    root = tmp_path_factory.mktemp("lm_eval_run")
    tasks = write_lm_eval_tasks(root / "tasks")
    driver = root / "run_lm_eval.py"
    driver.write_text(LM_EVAL_DRIVER, encoding="utf-8")
    out = root / "out"
    _run(driver, [str(tasks), str(out), LM_EVAL_MODEL], root)
    files = tuple(sorted(out.rglob("results_*.json")))
    assert len(files) == 1, f"lm-eval wrote {files}"
    return FreshRun(out, files)


@pytest.fixture(scope="session")
def inspect_run(tmp_path_factory: pytest.TempPathFactory) -> FreshRun:
    """Inspect logs of one local task (`.eval` and `.json`) and of one that fails."""
    root = tmp_path_factory.mktemp("inspect_run")
    with (root / "qa.jsonl").open("w", encoding="utf-8") as handle:
        for asked, (target, _) in INSPECT_SAMPLES.items():
            handle.write(json.dumps({"input": asked, "target": target}) + "\n")
    (root / "tasks.py").write_text(INSPECT_TASKS.lstrip(), encoding="utf-8")
    driver = root / "run_inspect.py"
    driver.write_text(INSPECT_DRIVER, encoding="utf-8")
    logs = root / "logs"
    replies = {asked: answer for asked, (_, answer) in INSPECT_SAMPLES.items()}
    _run(driver, [str(logs), json.dumps(replies)], root)
    files = tuple(sorted(p for p in logs.iterdir() if p.suffix in (".eval", ".json")))
    assert len(files) == 3, f"Inspect wrote {files}"
    return FreshRun(logs, files)
