"""Tasks scored by running the model's code (HumanEval, MBPP): the lm-eval line benchpress
prints tells lm-eval to run them (`--confirm_run_unsafe_code`, `HF_ALLOW_CODE_EVAL=1`), and
`benchpress run --probes humaneval` runs one with the real lm-evaluation-harness.

The run uses a task named `humaneval` in a local folder (the public dataset cannot be
downloaded here), marked `unsafe_code: true` as lm-eval's own is, whose scoring refuses to run
without `HF_ALLOW_CODE_EVAL=1` as Hugging Face's `code_eval` metric does; the model is the
loopback OpenAI-compatible test server (`tests/support/openai_server.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from predictor.cli import main
from predictor.results.runnable import next_steps
from predictor.util.paths import bundled_snapshot_dir
from tests.support.openai_server import OpenAIServer
from tests.support.probe_runs import EXPECTED_SCORE, render_tasks, run_cli, run_environment

STORE = str(bundled_snapshot_dir())

CODE_TASK = """task: humaneval
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data_dir}/items.jsonl
test_split: test
output_type: generate_until
unsafe_code: true
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{answer}}}}"
process_results: !function code_utils.process_results
generation_kwargs:
  until: ["\\n"]
  max_gen_toks: 16
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""

CODE_UTILS = """import os


def process_results(doc, results):
    if os.environ.get("HF_ALLOW_CODE_EVAL") != "1":  # as Hugging Face's code_eval refuses
        raise ValueError("code_eval runs untrusted code: set HF_ALLOW_CODE_EVAL=1")
    return {"exact_match": float(results[0].strip() == doc["answer"])}
"""


def test_the_lm_eval_line_confirms_code_tasks_and_only_those() -> None:
    steps = next_steps(["humaneval", "gsm8k"])
    assert steps.lm_eval == (
        "HF_ALLOW_CODE_EVAL=1 lm_eval --model hf --model_args pretrained=YOUR_MODEL "
        "--tasks humaneval,gsm8k_cot --output_path results/ --confirm_run_unsafe_code"
    )
    assert steps.lines()[2] == (
        "  (humaneval runs the code the model writes, on this machine: hence "
        "--confirm_run_unsafe_code and HF_ALLOW_CODE_EVAL=1)"
    )
    plain = next_steps(["gsm8k", "mmlu_pro"])
    assert plain.lm_eval == (
        "lm_eval --model hf --model_args pretrained=YOUR_MODEL --tasks gsm8k_cot,mmlu_pro "
        "--output_path results/"
    )
    assert not any("unsafe" in line for line in plain.lines())


def test_next_prints_the_confirmed_line_for_humaneval(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["next", "--scores", "gpqa_diamond=70,mmlu_pro=75", "--targets", "humaneval,mbpp_plus"]
    assert main([*argv, "--store", STORE, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "humaneval" in [r["benchmark"] for r in doc["rows"]]
    line = doc["commands"]["lm_eval"]
    assert line.startswith("HF_ALLOW_CODE_EVAL=1 lm_eval ")
    assert line.endswith(" --confirm_run_unsafe_code") and "--tasks humaneval," in line


@pytest.mark.slow
def test_run_runs_a_code_task_named_as_a_probe(tmp_path: Path) -> None:
    tasks = render_tasks(tmp_path / "tasks")
    (tasks / "humaneval.yaml").write_text(
        CODE_TASK.format(data_dir=tasks),
        encoding="utf-8",
    )
    (tasks / "code_utils.py").write_text(CODE_UTILS, encoding="utf-8")
    env = run_environment(tmp_path, tasks, BENCHPRESS_PROBE_TASKS="humaneval=humaneval")
    assert "HF_ALLOW_CODE_EVAL" not in env
    with OpenAIServer(model_names=("m",)) as server:
        args = ["run", "m", "--model-type", "local-completions"]
        args += ["--model-args", f"base_url={server.completions_url}"]
        args += ["--probes", "humaneval", "--out", "runs/m", "--store", STORE]
        done = run_cli(args, env, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "humaneval (humaneval): done" in done.stdout
    (found,) = sorted((tmp_path / "runs" / "m").rglob("results_*.json"))
    results = json.loads(found.read_text(encoding="utf-8"))["results"]["humaneval"]
    assert results["exact_match,none"] * 100 == pytest.approx(EXPECTED_SCORE)
