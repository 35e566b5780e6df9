"""Resuming `benchpress run`: a task's earlier file is taken as done only when it is a run of
the same model, model type, task version and item limit; otherwise the plan runs the task.

Real files: a smoke test (`--limit 2`) of the real lm-evaluation-harness against the loopback
OpenAI-compatible server (`tests/support/openai_server.py`), and one of Inspect with its
`mockllm` provider, over the fixture tasks (`tests/support/probe_runs.py`). The plans that
follow are `plan_probe_run`'s (what `benchpress run` prints as `done` or `to run`). Each guard
let a planted bug through the rest of the suite (issue 39, `benchmarks/mutation_audit.py`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from predictor import BenchPress
from predictor.runs import plan_probe_run, run_probe_benchmarks
from tests.support.openai_server import OpenAIServer
from tests.support.probe_runs import render_tasks, run_cli, run_environment

pytestmark = pytest.mark.slow
MODEL = "resumed"
TASK = "bp_probe_gsm8k"
INSPECT_TASK = "inspect_tasks.py@bp_probe_qa"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_tasks(tmp_path_factory.mktemp("probe_tasks") / "tasks")


@pytest.fixture(scope="module")
def server():
    with OpenAIServer(model_names=(MODEL, "another")) as started:
        yield started


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load()


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory, tasks: Path, server: OpenAIServer) -> Path:
    """The results file of `benchpress run --limit 2` (gsm8k, as its fixture task) into
    `runs/s`: in `runs/s/limited-2/bp_probe_gsm8k/`."""
    root = tmp_path_factory.mktemp("smoke")
    args = ["run", MODEL, "--model-type", "local-completions", "--probes", "gsm8k"]
    args += ["--model-args", f"base_url={server.completions_url}", "--out", "runs/s"]
    done = run_cli([*args, "--limit", "2"], run_environment(root, tasks), root)
    assert done.returncode == 0, done.stderr[-3000:]
    (file,) = (root / "runs" / "s").rglob("results_*.json")
    assert file.parent == root / "runs" / "s" / "limited-2" / TASK
    return file


@pytest.fixture
def planned(tmp_path: Path, tasks: Path, server: OpenAIServer, bp, monkeypatch):
    """`planned(out, ...)`: the file the plan takes as the task's finished run (None: the
    task is to run)."""
    for name, value in run_environment(tmp_path, tasks).items():
        monkeypatch.setenv(name, value)

    def plan(
        out: Path,
        limit: int | None = None,
        model: str = MODEL,
        model_type: str = "local-completions",
        include: Path = tasks,
    ) -> Path | None:
        url = server.chat_url if "chat" in model_type else server.completions_url
        run, _, _ = plan_probe_run(
            model,
            "gsm8k",
            out=out,
            limit=limit,
            model_type=model_type,
            model_args=f"base_url={url}",
            tasks={"gsm8k": TASK},
            include_path=include,
            bp=bp,
        )
        (task,) = run.tasks
        assert task.task == TASK
        return task.done

    return plan


def test_a_smoke_test_resumes_only_as_a_smoke_test(smoke: Path, planned) -> None:
    out = smoke.parents[2]  # runs/s
    assert planned(out, limit=2) == smoke  # the same smoke test again: nothing to run
    assert planned(out) is None  # the full run: its own folder, nothing there yet
    # a full run pointed at the smoke test's folder, or a smoke test's file where a full
    # run's goes (as runs laid out their files before limited-N folders): still to run
    assert planned(smoke.parents[1]) is None
    old_layout = out.parent / "old-layout"
    shutil.copytree(smoke.parent, old_layout / TASK)
    assert planned(old_layout) is None
    # nor is a smoke test of 2 items taken for one of 3
    shutil.copytree(smoke.parent, old_layout / "limited-3" / TASK)
    assert planned(old_layout, limit=3) is None


def test_another_models_file_is_not_taken_for_this_ones(smoke: Path, planned) -> None:
    out = smoke.parents[2]
    assert planned(out, limit=2, model="another") is None


def test_a_file_of_another_model_type_is_not_taken(smoke: Path, planned) -> None:
    out = smoke.parents[2]
    assert planned(out, limit=2, model_type="local-chat-completions") is None


def test_a_file_of_an_older_task_version_is_run_again(
    smoke: Path, planned, tasks: Path, tmp_path: Path
) -> None:
    out = smoke.parents[2]
    same, newer = tmp_path / "same", tmp_path / "newer"
    shutil.copytree(tasks, same)
    shutil.copytree(tasks, newer)
    definition = newer / f"{TASK}.yaml"
    text = definition.read_text(encoding="utf-8")
    assert text.count("version: 1.0") == 1
    definition.write_text(text.replace("version: 1.0", "version: 2.0"), encoding="utf-8")
    assert planned(out, limit=2, include=same) == smoke  # the same definition elsewhere
    assert planned(out, limit=2, include=newer) is None


def test_an_inspect_smoke_test_is_not_taken_for_the_full_run(
    tmp_path: Path, tasks: Path, bp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inspect's `mockllm` provider with replies of our own (usage set: no tokenizer)."""
    from inspect_ai.model import ModelOutput, ModelUsage  # deferred: the inspect extra

    for name, value in run_environment(tmp_path, tasks, BENCHPRESS_PROBE_TASKS="").items():
        monkeypatch.setenv(name, value)

    def reply(messages, tools, tool_choice, config):
        output = ModelOutput.from_content(model="mockllm/model", content="7")
        output.usage = ModelUsage(input_tokens=9, output_tokens=1, total_tokens=10)
        return output

    options = {
        "harness": "inspect",
        "model_type": "mockllm",
        "tasks": {"gsm8k": INSPECT_TASK},
        "include_path": tasks,
        "bp": bp,
    }
    out = tmp_path / "runs"
    scores = run_probe_benchmarks(
        "inspected",
        "gsm8k",
        out=out,
        limit=2,
        model_args={"custom_outputs": reply},
        progress=False,
        **options,
    )
    assert scores.limited and list(scores) == ["gsm8k"]
    file = scores.files["gsm8k"]
    assert file.parents[1] == out / "limited-2"

    def done(folder: Path, limit: int | None, model: str = "inspected") -> Path | None:
        run, _, _ = plan_probe_run(model, "gsm8k", out=folder, limit=limit, **options)
        (task,) = run.tasks
        return task.done

    assert done(out, 2) == file
    assert done(out / "limited-2", None) is None
    assert done(out, 2, model="another") is None
