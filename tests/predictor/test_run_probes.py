"""`benchpress run` and `run_probe_benchmarks`: a model's probes run with the real
lm-evaluation-harness against a real OpenAI-compatible HTTP server on loopback
(`tests/support/openai_server.py`), offline, with local task definitions standing in for the
public datasets (`tests/support/probe_runs.py` says how)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer
from tests.support.probe_runs import (
    BIN,
    CHAT_PROBES,
    EXPECTED_SCORE,
    LM_EVAL_PROBES,
    render_tasks,
    run_cli,
    run_environment,
    table_after,
)

pytest_plugins = ["tests.support.openai_server_fixtures"]  # make_openai_server
MODELS = ("m", "new-model-v1", "chatty", "keyed", "slow", "flaky", "killed", "smoke", "stored")
KEY = "sk-test-4f9d2c"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_tasks(tmp_path_factory.mktemp("probe_tasks") / "tasks")


@pytest.fixture(scope="module")
def server():
    """One healthy server for the module (a test reads its log as a slice, never resets)."""
    with OpenAIServer(model_names=MODELS) as started:
        yield started


def completion_requests(server: OpenAIServer, since: int = 0) -> int:
    return sum(1 for r in server.requests[since:] if r.path.startswith("/v1/") and "comp" in r.path)


def test_run_prints_the_plan_progress_and_predictions_then_resumes_running_nothing(
    tmp_path: Path, tasks: Path, server: OpenAIServer
) -> None:
    env = run_environment(tmp_path, tasks)
    args = [
        "run",
        "m",
        "--model-type",
        "local-completions",
        "--model-args",
        f"base_url={server.completions_url}",
        "--probes",
        "default",
        "--out",
        "runs/m",
        "--predict",
    ]
    before = len(server.requests)
    first = run_cli(args, env, tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    out = first.stdout
    # the plan, before any request: the default probe plan's tasks and sizes (every fixture
    # task has 8 items, fewer than the plan's subsets: each runs in full)
    plan = table_after(out, "benchmark task")
    assert [line.split()[0] for line in plan[1:]] == list(LM_EVAL_PROBES)
    assert all(line.split()[1] == f"bp_probe_{line.split()[0]}" for line in plan[1:])
    assert all(line.split()[2] == "8" and line.split()[-1] == "run" for line in plan[1:])
    assert f"to run: {len(LM_EVAL_PROBES)} tasks" in out
    # progress: each task as it finishes, and the bars on stderr
    for benchmark in LM_EVAL_PROBES:
        assert f"{benchmark} (bp_probe_{benchmark}): done" in out
    assert "probe tasks: 100%" in first.stderr
    # then the prediction table from the five files
    assert f"gpqa_diamond={EXPECTED_SCORE:g}" in out
    predicted = table_after(out, "benchmark score")
    assert len(predicted) > 50 and "predicted" in predicted[5]
    files = sorted((tmp_path / "runs" / "m").rglob("results_*.json"))
    assert sorted(f.parent.name for f in files) == sorted(f"bp_probe_{b}" for b in LM_EVAL_PROBES)
    sent = completion_requests(server, before)
    assert sent > 0

    # the same command again: nothing runs, the same table is printed
    again_before = len(server.requests)
    second = run_cli(args, env, tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    assert completion_requests(server, again_before) == 0
    assert "nothing to run" in second.stdout
    assert table_after(second.stdout, "benchmark score") == predicted
    assert sorted((tmp_path / "runs" / "m").rglob("results_*.json")) == files


def test_article_scenario_two_runs_verbatim_on_the_endpoint_settings(
    tmp_path: Path, tasks: Path, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in run_environment(
        tmp_path,
        tasks,
        BENCHPRESS_MODEL_BASE_URL=server.completions_url,
        BENCHPRESS_MODEL_TYPE="local-completions",
        BENCHPRESS_MODEL_API_KEY=KEY,
    ).items():
        monkeypatch.setenv(key, value)
    namespace: dict = {}
    exec(  # the article's scenario 2, as written, after its set-up lines
        "from benchpress import BenchPress, run_probe_benchmarks\n"
        "bp = BenchPress.load()\n"
        'new_model_scores = run_probe_benchmarks("new-model-v1")\n'
        "predictions = bp.predict(new_model_scores)\n"
        "comparison = bp.compare_with_known_models(predictions, "
        'reference_models=["claude-fable-5", "gpt-5-5"])\n',
        namespace,
    )
    scores = namespace["new_model_scores"]
    assert dict(scores) == dict.fromkeys(LM_EVAL_PROBES, EXPECTED_SCORE)
    assert scores.complete and not scores.limited
    assert scores.frame.filter(scores.frame["status"] == "mapped").height == len(LM_EVAL_PROBES)
    out = Path(os.environ["BENCHPRESS_HOME"]) / "runs" / "new-model-v1"
    assert sorted(p.parent.name for p in scores.files.values()) == sorted(
        f"bp_probe_{b}" for b in LM_EVAL_PROBES
    )
    assert all(out in p.parents for p in scores.files.values())
    predictions = namespace["predictions"]
    assert predictions["gpqa_diamond"].observed
    assert not predictions["hle"].observed
    assert namespace["comparison"].summary()
    # the key reached the server, and nothing else
    assert f"Bearer {KEY}" in server.authorizations
    home = Path(os.environ["BENCHPRESS_HOME"])
    for path in home.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_chat_endpoints_get_generative_probes_only(
    tmp_path: Path, tasks: Path, server: OpenAIServer
) -> None:
    env = run_environment(tmp_path, tasks)
    done = run_cli(
        [
            "run",
            "chatty",
            "--model-type",
            "local-chat-completions",
            "--model-args",
            f"base_url={server.chat_url}",
            "--out",
            "runs/chatty",
            "--compare",
            "claude-fable-5,gpt-5-5",
            "--targets",
            "hle",
        ],
        env,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    plan = table_after(done.stdout, "benchmark task")
    assert [line.split()[0] for line in plan[1:]] == list(CHAT_PROBES)
    used = ", ".join(f"{b}={EXPECTED_SCORE:g}" for b in CHAT_PROBES)
    assert f"{len(CHAT_PROBES)} scores used: {used}" in done.stdout
    assert "chatty among 2 reference models (90% intervals):" in done.stdout
    assert "  reference gpt-5-5 = gpt-5.5" in done.stdout
    assert "  hle: predicted " in done.stdout


def test_the_key_is_never_printed_nor_written(
    tmp_path: Path, tasks: Path, make_openai_server
) -> None:
    keyed = make_openai_server(model_names=MODELS, api_key=KEY, key_scope="v1")
    env = run_environment(tmp_path, tasks, BENCHPRESS_MODEL_API_KEY=KEY)
    args = ["run", "keyed", "--model-type", "local-completions", "--probes", "mmlu,gsm8k"]
    args += ["--model-args", f"base_url={keyed.completions_url}", "--out", "runs/keyed"]
    done = run_cli(args, env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    assert "api_key: set (BENCHPRESS_MODEL_API_KEY)" in done.stdout
    assert KEY not in done.stdout + done.stderr
    assert all(a == f"Bearer {KEY}" for a in keyed.authorizations if a)
    for path in tmp_path.rglob("*"):
        if path.is_file() and "hf" not in path.parts:
            assert KEY.encode() not in path.read_bytes(), path
    # in model_args it is refused, before anything is sent
    refused = run_cli([*args, "--model-args", f"api_key={KEY}"], env, tmp_path)
    assert refused.returncode == 2
    assert "set BENCHPRESS_MODEL_API_KEY instead" in refused.stderr


def test_a_down_endpoint_or_a_refused_key_fails_before_the_first_task(
    tmp_path: Path, tasks: Path, make_openai_server
) -> None:
    keyed = make_openai_server(model_names=MODELS, api_key=KEY, key_scope="v1")
    env = run_environment(tmp_path, tasks, BENCHPRESS_MODEL_API_KEY="sk-wrong")
    wrong = run_cli(
        ["run", "keyed", "--model-type", "local-completions", "--out", "runs/a"],
        {**env, "BENCHPRESS_MODEL_BASE_URL": keyed.completions_url},
        tmp_path,
    )
    assert wrong.returncode == 1
    assert wrong.stderr.strip().splitlines()[-1] == (
        f"benchpress: error: model endpoint {keyed.completions_url} refused the API key "
        "(HTTP 401); check BENCHPRESS_MODEL_API_KEY"
    )
    assert completion_requests(keyed) == 0
    assert not list((tmp_path / "runs").rglob("results_*.json"))

    typo = run_cli(
        ["run", "keyed", "--model-type", "local-completion", "--out", "runs/c"],
        {**env, "BENCHPRESS_MODEL_BASE_URL": keyed.completions_url},
        tmp_path,
    )
    assert typo.returncode == 2
    assert typo.stderr.strip().splitlines()[-1] == (
        "benchpress: error: lm-eval has no model type 'local-completion'; did you mean "
        "local-completions, local-chat-completions, openai-completions?"
    )
    assert len(keyed.requests) == 1  # the refused key's preflight only

    down = "http://127.0.0.1:9/v1/completions"
    refused = run_cli(
        ["run", "keyed", "--model-type", "local-completions", "--out", "runs/b"],
        {**env, "BENCHPRESS_MODEL_BASE_URL": down},
        tmp_path,
    )
    assert refused.returncode == 1
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"benchpress: error: cannot reach the model endpoint {down} (BENCHPRESS_MODEL_BASE_URL)"
    )


def test_a_task_failing_midway_is_listed_and_the_others_finish(
    tmp_path: Path, tasks: Path, make_openai_server
) -> None:
    # the first task takes 8 completion requests; every one after the 8th fails with a 500
    # or, for the stalled server, never answers (the 1 s timeout ends it)
    for variant in ({"fail_after": 8}, {"stall_after": 8}):
        flaky = make_openai_server(model_names=MODELS, **variant)
        env = run_environment(tmp_path, tasks, BENCHPRESS_MODEL_TIMEOUT="1")
        started = time.monotonic()
        done = run_cli(
            [
                "run",
                "flaky",
                "--model-type",
                "local-completions",
                "--model-args",
                f"base_url={flaky.completions_url},max_retries=1",
                "--probes",
                "gpqa_diamond,gsm8k",
                "--out",
                f"runs/{next(iter(variant))}",
                "--predict",
                "--targets",
                "hle",
            ],
            env,
            tmp_path,
        )
        assert time.monotonic() - started < 240  # on a loaded machine; the stall is an hour
        assert done.returncode == 1, (variant, done.stdout, done.stderr[-2000:])
        assert "gpqa_diamond (bp_probe_gpqa_diamond): done" in done.stdout
        assert "gsm8k (bp_probe_gsm8k): failed: " in done.stdout
        assert "1 probe failed, so what follows is from 1 of 2 probes:" in done.stdout
        assert table_after(done.stdout, "benchmark score")[1].split()[0] == "hle"


def test_a_killed_run_resumes_with_its_finished_tasks(
    tmp_path: Path, tasks: Path, make_openai_server, server: OpenAIServer
) -> None:
    stalls = make_openai_server(model_names=MODELS, stall_after=8)
    env = run_environment(tmp_path, tasks)
    args = ["run", "killed", "--model-type", "local-completions", "--out", "runs/k"]
    args += ["--probes", "gpqa_diamond,gsm8k,mmlu"]
    process = subprocess.Popen(
        [str(BIN), *args, "--model-args", f"base_url={stalls.completions_url}"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    first = tmp_path / "runs" / "k" / "bp_probe_gpqa_diamond"
    deadline = time.monotonic() + 120
    # until the second task's first request (the 9th) waits on the stalled server
    while stalls.counts["/v1/completions"] <= 8 and time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read()
        time.sleep(0.2)
    assert list(first.glob("results_*.json")), "the first task did not finish"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    process.stdout.close()
    assert len(list(first.glob("results_*.json"))) == 1

    before = len(server.requests)
    done = run_cli([*args, "--model-args", f"base_url={server.completions_url}"], env, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    plan = table_after(done.stdout, "benchmark task")
    assert [line.split()[-1] for line in plan[1:]] == ["done", "run", "run"]
    assert "gpqa_diamond (bp_probe_gpqa_diamond)" not in done.stdout
    assert completion_requests(server, before) == 8 + 8 * 4  # gsm8k's 8, mmlu's 8 x 4 choices
    assert "probe scores: gpqa_diamond=62.5, gsm8k=62.5, mmlu=62.5" in done.stdout


def test_limit_is_a_smoke_test_that_is_never_stored_unasked(
    tmp_path: Path, tasks: Path, server: OpenAIServer
) -> None:
    env = run_environment(tmp_path, tasks)
    base = ["run", "smoke", "--model-type", "local-completions", "--probes", "gsm8k"]
    base += ["--model-args", f"base_url={server.completions_url}", "--limit", "2"]
    before = len(server.requests)
    refused = run_cli([*base, "--add", "smoke"], env, tmp_path)
    assert refused.returncode == 2
    assert "--add refuses them; add --allow-limited" in refused.stderr
    assert completion_requests(server, before) == 0
    done = run_cli(base, env, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "2 items per task (a smoke test)" in done.stdout
    assert "scores from 2 items per task (--limit): a smoke test" in done.stdout
    assert completion_requests(server, before) == 2


def test_dry_run_prints_the_plan_and_sends_nothing(tmp_path: Path, server: OpenAIServer) -> None:
    env = run_environment(tmp_path, tmp_path, BENCHPRESS_PROBE_TASKS="")
    before = len(server.requests)
    done = run_cli(
        ["run", "m", "--model-type", "local-completions", "--dry-run", "--out", "runs/m"]
        + ["--model-args", f"base_url={server.completions_url}", "--probes", "mmlu,gpqa_diamond"],
        env,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert table_after(done.stdout, "benchmark task") == [
        "benchmark     task                       items  shots  tokens  status",
        "mmlu          mmlu                       14042  0      ~7.0M   to run",
        "gpqa_diamond  gpqa_diamond_cot_zeroshot  198    0      ~297k   to run",
    ]
    assert "the matrix's MMLU numbers are mostly 5-shot" in done.stdout
    assert "to run: 2 tasks, ~7.3M tokens, ~61 min at 2,000 tokens/s (estimates)" in done.stdout
    assert len(server.requests) == before
    assert not (tmp_path / "runs").exists()


def test_own_task_by_option_and_the_dummy_model(tmp_path: Path, tasks: Path) -> None:
    env = run_environment(tmp_path, tmp_path, BENCHPRESS_PROBE_TASKS="")
    done = run_cli(
        ["run", "plumbing", "--model-type", "dummy", "--probes", "hle", "--out", "runs/d"]
        + ["--task", "hle=bp_probe_gsm8k", "--include-path", str(tasks)],
        env,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "hle (bp_probe_gsm8k): done" in done.stdout
    assert "probe scores: hle=0" in done.stdout  # lm-eval's dummy model answers "lol"
    unknown = run_cli(
        ["run", "plumbing", "--model-type", "dummy", "--probes", "hle"], env, tmp_path
    )
    assert unknown.returncode == 2
    assert "no lm_eval task runs hle; give one with --task BENCHMARK=TASK" in unknown.stderr


def test_inspect_runs_a_probe_through_its_python_api_and_resumes(
    tmp_path: Path, tasks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inspect's `mockllm` provider (no model behind it) with replies of our own: token usage
    set, so Inspect fetches no tokenizer to count them."""
    from inspect_ai.model import ModelOutput, ModelUsage

    from predictor.runs import run_probe_benchmarks

    for key, value in run_environment(tmp_path, tasks, BENCHPRESS_PROBE_TASKS="").items():
        monkeypatch.setenv(key, value)

    def reply(messages, tools, tool_choice, config):
        asked = messages[-1].text
        right = "+ 1?" in asked or "+ 2?" in asked  # 3 + 1 and 4 + 2: two of the eight
        a, b = (int(x) for x in asked.split("What is ")[1].rstrip("?\nAnswer:").split(" + "))
        output = ModelOutput.from_content(model="mockllm/model", content=str(a + b + (not right)))
        output.usage = ModelUsage(input_tokens=9, output_tokens=1, total_tokens=10)
        return output

    def run():
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
        )

    scores = run()
    assert dict(scores) == {"gsm8k": 25.0}
    assert scores.files["gsm8k"].suffix == ".eval"
    assert scores.frame["format"].to_list() == ["inspect"]
    again = run()
    assert again.resumed == ["gsm8k"] and dict(again) == {"gsm8k": 25.0}


def test_probes_runnable_chooses_among_tasks_the_tool_can_run(tmp_path: Path) -> None:
    from predictor.results.runnable import preferred_tasks
    from predictor.results.task_facts import task_facts

    # the five a greedy search picks among what lm-eval runs (one GPQA of the three: they
    # share questions); `run` runs the probe plan by cost instead (test_probe_budget.py)
    greedy = ("gpqa_diamond", "mmlu", "aime_2025", "math_500", "hellaswag")
    chat_greedy = ("gpqa_diamond", "bigbench_hard", "aime_2025", "math", "aime_2024")
    env = run_environment(tmp_path, tmp_path)
    plain = run_cli(["probes", "--runnable", "lm-eval", "--json"], env, tmp_path)
    assert plain.returncode == 0, plain.stderr[-2000:]
    payload = json.loads(plain.stdout)
    assert [r["benchmark"] for r in payload["tasks"]] == list(greedy)
    assert all(r["lm_eval_task"] for r in payload["tasks"])
    chat = run_cli(
        ["probes", "--runnable", "lm-eval", "--model-type", "local-chat-completions", "--json"],
        env,
        tmp_path,
    )
    chat_tasks = json.loads(chat.stdout)["tasks"]
    assert [r["benchmark"] for r in chat_tasks] == list(chat_greedy)
    generative = preferred_tasks("lm_eval", generative_only=True)
    assert all(task_facts("lm_eval", generative[b]).generative for b in chat_greedy)
    # the table names the task `run` will run on a chat endpoint, not the log-likelihood one
    assert [r["lm_eval_task"] for r in chat_tasks] == [generative[b] for b in chat_greedy]
    assert "gpqa_diamond_cot_zeroshot" in [r["lm_eval_task"] for r in chat_tasks]
    command = json.loads(chat.stdout)["commands"]["lm_eval"]
    assert command.startswith("lm_eval --model local-chat-completions ")
    assert f"--tasks {','.join(generative[b] for b in chat_greedy)} " in command
    typo = ["probes", "--runnable", "lm-eval", "--model-type", "local-chat-completion"]
    refused = run_cli(typo, env, tmp_path)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip().splitlines()[-1] == (
        "benchpress: error: lm-eval has no model type 'local-chat-completion'; did you mean "
        "local-chat-completions, local-completions, openai-chat-completions?"
    )


def test_run_stores_a_private_model_and_adds_checkpoints_to_a_run(
    tmp_path: Path, tasks: Path, server: OpenAIServer
) -> None:
    """`--add` and `--track` go through the private store's own commands (`models add`,
    `track --step`): each run adds its checkpoint and the run's others stay."""
    env = run_environment(tmp_path, tasks)
    base = ["run", "stored", "--model-type", "local-completions", "--probes", "gpqa_diamond,gsm8k"]
    base += ["--model-args", f"base_url={server.completions_url}"]
    added = run_cli([*base, "--add", "stored-model", "--out", "runs/a"], env, tmp_path)
    assert added.returncode == 0, added.stderr[-2000:]
    listed = run_cli(["models", "list", "--json"], env, tmp_path)
    assert [m["name"] for m in json.loads(listed.stdout)] == ["stored-model"]
    mlflow_uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    for step in (100, 200):
        tracked = run_cli(
            [*base, "--track", "ft", "--step", str(step), "--out", f"runs/s{step}"]
            + ["--targets", "hle", "--mlflow", mlflow_uri],
            env,
            tmp_path,
        )
        assert tracked.returncode == 0, tracked.stderr[-2000:]
    assert "checkpoint 200 stored as private model ft@step-200; the run has 2 checkpoints" in (
        tracked.stdout
    )
    rows = table_after(tracked.stdout, "step probes")
    assert [line.split()[:2] for line in rows[1:3]] == [["100", "2"], ["200", "2"]]
    assert rows[3].startswith("run ft: ")  # what the fold-in used, under the table
    run = run_cli(["models", "list", "--run", "ft", "--json"], env, tmp_path)
    assert [m["name"] for m in json.loads(run.stdout)] == ["ft@step-100", "ft@step-200"]
    # the MLflow run holds the whole run: both steps, after the second checkpoint
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=mlflow_uri)
    (logged,) = client.search_runs(
        [client.get_experiment_by_name("benchpress").experiment_id],
        filter_string="tags.`benchpress.run` = 'ft'",
    )
    history = client.get_metric_history(logged.info.run_id, "predicted/hle")
    assert sorted(m.step for m in history) == [100, 200]
