"""`benchpress run` against a server that misbehaves: the endpoint check's deadline, each task
in a process of its own held to a deadline and a memory cap, and log-probs that are not
finite (`predictor.runs.isolation`). The real lm-evaluation-harness against the real
loopback server (`tests/support/openai_server.py`), with the fixture tasks
(`tests/support/probe_runs.py`)."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.openai_server import COMPLETION_PATHS, OpenAIServer
from tests.support.probe_runs import BIN, EXPECTED_SCORE, render_tasks, run_cli, run_environment

pytest_plugins = ["tests.support.openai_server_fixtures"]  # make_openai_server
MODELS = ("m",)
KEY = "sk-test-9e7a1b"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_tasks(tmp_path_factory.mktemp("probe_tasks") / "tasks")


def run_args(server: OpenAIServer, probes: str, out: str, *extra: str) -> list[str]:
    return [
        "run",
        "m",
        "--model-type",
        "local-completions",
        "--model-args",
        f"base_url={server.completions_url},max_retries=1",
        "--probes",
        probes,
        "--out",
        out,
        *extra,
    ]


def completions(server: OpenAIServer) -> list:
    return [r for r in server.requests if r.path in COMPLETION_PATHS]


def test_the_endpoint_check_has_a_deadline_in_all_not_per_read(
    tmp_path: Path, tasks: Path, make_openai_server
) -> None:
    # /v1/models answered a byte a second, status line first: each read comes within the
    # 2 s timeout, so only a deadline on the whole check ends it (else ~200 s)
    dripping = make_openai_server(model_names=MODELS, drip_models=True)
    env = run_environment(tmp_path, tasks)
    done = run_cli(
        run_args(dripping, "gsm8k", "runs/p", "--timeout", "2"), env, tmp_path, timeout=150
    )
    ended = time.monotonic()
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == (
        f"benchpress: error: model endpoint {dripping.completions_url} (--model-args base_url) "
        "did not answer its model list within 2 s (--timeout, BENCHPRESS_MODEL_TIMEOUT)"
    )
    (check,) = [r for r in dripping.requests if r.path == "/v1/models"]
    # the deadline and the exit, with room for a loaded machine: the drip alone takes minutes
    assert 2 <= ended - check.started < 2 + 60
    assert not completions(dripping)


def test_a_task_past_its_deadline_is_killed_and_the_others_go_on(
    tmp_path: Path, tasks: Path, make_openai_server
) -> None:
    # the first completion request (gsm8k's first item) is answered a byte a second: within
    # the 30 s per-read timeout each time, so only the task's deadline ends it
    dripping = make_openai_server(model_names=MODELS, drip_after=0, drip_count=1)
    env = run_environment(tmp_path, tasks)
    args = run_args(dripping, "gsm8k,mmlu", "runs/d", "--timeout", "30", "--task-timeout", "3")
    done = run_cli(args, env, tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "  task_timeout: 3 s per task" in done.stdout
    assert (
        "gsm8k (bp_probe_gsm8k): failed: task bp_probe_gsm8k exceeded its 3 s deadline "
        "(--task-timeout)"
    ) in done.stdout
    assert "mmlu (bp_probe_mmlu): done" in done.stdout
    assert "1 probe failed, so what follows is from 1 of 2 probes:" in done.stdout
    assert f"probe scores: mmlu={EXPECTED_SCORE:g}" in done.stdout
    dripped, *others = completions(dripping)
    assert dripped.status is None  # never answered whole: the task's process was killed
    # the next task began soon after the kill (its process starting, slow on a loaded
    # machine), not after the drip (minutes); the 3 s count from the task's start, before its
    # first request, so the gap between the two requests may be a little under 3 s
    assert 0 < others[0].started - dripped.started < 3 + 90
    out = tmp_path / "runs" / "d"
    assert sorted(p.parent.name for p in out.rglob("results_*.json")) == ["bp_probe_mmlu"]
    assert not (out / ".staging").exists()  # the killed task's staging folder went too


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_killed_run_leaves_no_task_process_behind(
    tmp_path: Path, tasks: Path, make_openai_server
) -> None:
    dripping = make_openai_server(model_names=MODELS, drip_after=0)
    env = run_environment(tmp_path, tasks)
    process = subprocess.Popen(
        [str(BIN), *run_args(dripping, "gsm8k", "runs/o", "--timeout", "30")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not completions(dripping) and time.monotonic() < deadline:
            assert process.poll() is None
            time.sleep(0.1)
        (child,) = _children(process.pid)  # the task's process, its request under way
        assert os.getpgid(child) == child  # a process group of its own, killed as one
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        gone = time.monotonic() + 60
        while _alive(child) and time.monotonic() < gone:
            time.sleep(0.1)
        assert not _alive(child)  # it saw its parent go, and ended itself
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_an_answer_over_the_memory_cap_fails_its_task_saying_what_the_server_sent(
    tmp_path: Path, tasks: Path, make_openai_server
) -> None:
    # a 1 GiB answer: the task's process may take 768 MiB above what it started with
    huge = make_openai_server(model_names=MODELS, huge_answer_bytes=1 << 30)
    env = run_environment(tmp_path, tasks)
    done = run_cli(run_args(huge, "mmlu", "runs/h"), env, tmp_path, timeout=120)
    assert done.returncode == 1, done.stderr[-3000:]
    assert (
        "mmlu (bp_probe_mmlu): failed: the server's answer for task bp_probe_mmlu exceeded "
        "the 768 MiB memory cap"
    ) in done.stdout
    # a small answer without log-probs: said so, not lm-eval's bare KeyError text 'logprobs'
    small = make_openai_server(model_names=MODELS, huge_answer_bytes=1 << 16)
    done = run_cli(run_args(small, "mmlu,gsm8k", "runs/s"), env, tmp_path, timeout=120)
    assert done.returncode == 1, done.stderr[-3000:]
    assert (
        "mmlu (bp_probe_mmlu): failed: the server's answer for task bp_probe_mmlu had no 'logprobs'"
    ) in done.stdout
    assert "gsm8k (bp_probe_gsm8k): done" in done.stdout  # its long text scores 0
    assert not list((tmp_path / "runs").rglob("bp_probe_mmlu/*"))


@pytest.mark.parametrize("value", [math.nan, math.inf], ids=["nan", "inf"])
def test_log_probs_that_are_not_finite_fail_their_task_and_are_never_scored(
    tmp_path: Path, tasks: Path, make_openai_server, value: float
) -> None:
    # lm-eval sums the NaNs, takes the first of the tied choices and would score mmlu as 25
    broken = make_openai_server(model_names=MODELS, nonfinite_logprobs=value)
    env = run_environment(tmp_path, tasks)
    done = run_cli(run_args(broken, "mmlu,gsm8k", "runs/n"), env, tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    assert (
        "mmlu (bp_probe_mmlu): failed: the server's answer for task bp_probe_mmlu has a "
        f"log-probability that is not finite ({value}): the task is not scored"
    ) in done.stdout
    assert "gsm8k (bp_probe_gsm8k): done" in done.stdout  # generations have no log-probs
    assert f"probe scores: gsm8k={EXPECTED_SCORE:g}\n" in done.stdout
    assert not list((tmp_path / "runs").rglob("bp_probe_mmlu/*"))


def test_the_key_reaches_only_the_task_process(
    tmp_path: Path, tasks: Path, make_openai_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's own process never holds the key in its environment, even while a task runs
    (another thread of a library caller's process could read it there)."""
    from predictor.runs import run_probe_benchmarks
    from tests.support.openai_server import arithmetic_answer

    seen: list[str | None] = []

    def answer(prompt: str) -> str:  # called in the server's thread, in this process
        seen.append(os.environ.get("OPENAI_API_KEY"))
        return arithmetic_answer(prompt)

    keyed = make_openai_server(answer, model_names=MODELS, api_key=KEY, key_scope="v1")
    for name, value in run_environment(tmp_path, tasks, BENCHPRESS_MODEL_API_KEY=KEY).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    scores = run_probe_benchmarks(
        "m",
        "gsm8k",
        model_type="local-completions",
        model_args=f"base_url={keyed.completions_url}",
        out=tmp_path / "runs",
        progress=False,
    )
    assert dict(scores) == {"gsm8k": EXPECTED_SCORE}
    assert seen and set(seen) == {None}
    assert "OPENAI_API_KEY" not in os.environ
    assert {r.authorization for r in completions(keyed)} == {f"Bearer {KEY}"}
