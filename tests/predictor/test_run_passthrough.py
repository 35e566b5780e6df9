"""`benchpress run --num-fewshot/--batch-size/--apply-chat-template/--gen-kwargs` (the API's
`num_fewshot=`, ...): passed to the harness, shown in the plan, recorded with each task's
results, and a re-run with other options runs the task again.

lm-eval runs for real against the loopback OpenAI-compatible server
(`tests/support/openai_server.py`), whose request log shows what the options did to the
requests; Inspect runs its `mockllm`, whose reply function sees the generation settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer, decode
from tests.support.probe_runs import render_tasks, run_cli, run_environment

pytestmark = pytest.mark.slow
TASK = "bp_probe_gsm8k"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_tasks(tmp_path_factory.mktemp("probe_tasks") / "tasks")


def completion_payloads(server: OpenAIServer, since: int) -> list[dict]:
    return [r.payload for r in server.requests[since:] if r.path == "/v1/completions"]


def test_lm_eval_gets_the_options_records_them_and_reruns_when_they_change(
    tmp_path: Path, tasks: Path
) -> None:
    env = run_environment(tmp_path, tasks)
    with OpenAIServer(model_names=("m",)) as server:
        base = ["run", "m", "--model-type", "local-completions", "--probes", "gsm8k"]
        base += ["--model-args", f"base_url={server.completions_url}", "--out", "runs/m"]
        base += ["--task", "gsm8k=bp_probe_gsm8k", "--no-progress"]
        options = ["--num-fewshot", "1", "--batch-size", "4"]
        options += ["--gen-kwargs", "max_gen_toks=8,temperature=0"]
        first = run_cli([*base, *options], env, tmp_path)
        assert first.returncode == 0, first.stderr[-3000:]
        payloads = completion_payloads(server, 0)
        again = run_cli([*base, *options], env, tmp_path)
        resumed_requests = len(completion_payloads(server, 0)) - len(payloads)
        changed = run_cli([*base, "--num-fewshot", "0"], env, tmp_path)
        zero_shot = completion_payloads(server, 0)[len(payloads) :]
    plan = first.stdout.splitlines()
    assert (
        "  options: --num-fewshot 1 --batch-size 4 --gen-kwargs max_gen_toks=8,temperature=0"
    ) in plan
    # what the server was asked: 8 items in batches of 4, at most 8 tokens, temperature 0,
    # each prompt with one worked example before the question
    assert [len(p["prompt"]) for p in payloads] == [4, 4]
    assert {(p["max_tokens"], p["temperature"]) for p in payloads} == {(8, 0)}
    prompt = decode(payloads[0]["prompt"][0])
    assert prompt.startswith("Question: What is ") and prompt.count("Question: What is") == 2
    # recorded in the results file: lm-eval's own fields and the options as given
    # (the changed run's file beside it)
    files = (tmp_path / "runs" / "m" / "bp_probe_gsm8k").glob("results_*.json")
    docs = sorted((json.loads(f.read_text()) for f in files), key=lambda d: d["n-shot"][TASK])
    zero, doc = docs
    assert zero["benchpress_options"] == {"num_fewshot": 0} and zero["n-shot"][TASK] == 0
    assert doc["n-shot"][TASK] == 1
    assert doc["config"]["batch_size"] == 4
    assert doc["benchpress_options"] == {
        "num_fewshot": 1,
        "batch_size": 4,
        "gen_kwargs": {"max_gen_toks": 8, "temperature": 0},
    }
    # the same options resume; other ones run the task again
    assert again.returncode == 0, again.stderr[-3000:]
    assert "nothing to run: every task finished in an earlier run" in again.stdout
    assert resumed_requests == 0
    assert changed.returncode == 0, changed.stderr[-3000:]
    assert "to run: 1 task" in changed.stdout
    assert all(decode(p).count("Question: What is") == 1 for z in zero_shot for p in z["prompt"])


def test_inspect_takes_gen_kwargs_as_its_settings_and_refuses_what_it_has_not(
    tmp_path: Path, tasks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_ai.model import ModelOutput

    from predictor.harnesses.endpoint import SettingsError
    from predictor.runs import run_probe_benchmarks

    for key, value in run_environment(tmp_path, tasks, BENCHPRESS_PROBE_TASKS="").items():
        monkeypatch.setenv(key, value)
    settings = tmp_path / "settings.txt"

    def reply(messages, tools, tool_choice, config):
        with settings.open("a") as log:
            log.write(f"{config.temperature} {config.max_tokens}\n")
        return ModelOutput.from_content(model="mockllm/model", content="0")

    def run(**options):
        return run_probe_benchmarks(
            "inspected",
            "gsm8k",
            harness="inspect",
            model_type="mockllm",
            model_args={"custom_outputs": reply},
            tasks={"gsm8k": "inspect_tasks.py@bp_probe_qa"},
            include_path=tasks,
            out=tmp_path / "runs",
            progress=False,
            limit=2,
            **options,
        )

    run(gen_kwargs="temperature=0.25,max_gen_toks=7")
    assert settings.read_text().splitlines() == ["0.25 7", "0.25 7"]
    with pytest.raises(SettingsError, match="^--num-fewshot: Inspect has no such option"):
        run(num_fewshot=3)
    with pytest.raises(SettingsError, match="^--gen-kwargs: Inspect has no generation setting"):
        run(gen_kwargs="do_sample=true")


def test_bad_options_are_refused_before_the_plan(tmp_path: Path, tasks: Path) -> None:
    env = run_environment(tmp_path, tasks)
    base = ["run", "m", "--model-type", "local-completions", "--probes", "gsm8k", "--dry-run"]
    base += ["--model-args", "base_url=http://127.0.0.1:9/v1/completions"]
    batch = run_cli([*base, "--batch-size", "many"], env, tmp_path)
    assert batch.returncode == 2
    assert "argument --batch-size: expected a positive whole number, 'auto' or 'auto:N', got " in (
        batch.stderr
    )
    kwargs = run_cli([*base, "--gen-kwargs", "temperature"], env, tmp_path)
    assert kwargs.returncode == 2
    assert kwargs.stderr.strip().splitlines()[-1] == (
        "benchpress: error: --gen-kwargs: expected key=value pairs, got 'temperature'"
    )
    inspect = ["run", "m", "--harness", "inspect", "--model-type", "openai-api"]
    inspect += ["--probes", "gpqa_diamond", "--dry-run", "--batch-size", "8"]
    refused = run_cli(inspect, env, tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1] == (
        "benchpress: error: --batch-size: Inspect sends requests concurrently instead of in "
        "batches (max_connections=N through the API's harness options)"
    )
    chat = run_cli([*base, "--apply-chat-template"], env, tmp_path)
    assert chat.returncode == 2
    assert chat.stderr.strip().splitlines()[-1] == (
        "benchpress: error: --apply-chat-template: lm-eval cannot apply a chat template "
        "through the server's tokenizer (tokenizer_backend=remote); pass --tokenizer HF_NAME "
        "as well, or use --model-type local-chat-completions (its server applies the template)"
    )
    templated = run_cli([*base, "--apply-chat-template", "--tokenizer", "acme/tok"], env, tmp_path)
    assert templated.returncode == 0, templated.stderr[-2000:]
    assert "  options: --apply-chat-template" in templated.stdout.splitlines()
    shown = run_cli([*base, "--batch-size", "auto:4", "--num-fewshot", "0"], env, tmp_path)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "  options: --num-fewshot 0 --batch-size auto:4" in shown.stdout.splitlines()
