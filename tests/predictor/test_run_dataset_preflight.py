"""`benchpress run` checks every planned task's dataset before anything runs, and a server
without `/tokenizer_info` (llama.cpp's) before any task.

The Hub is a fake one on loopback, reached through `HF_ENDPOINT`, the variable
`huggingface_hub` itself honours: a real HTTP path, nothing leaves the machine. It answers the
two Hub API routes the check reads, `GET /api/datasets/REPO` (with `gated`) and
`GET /api/datasets/REPO/auth-check` (403 for a token whose account has not accepted the
terms), as huggingface.co does. The tasks are lm-eval YAMLs of our own whose `dataset_path`
names Hub datasets, run through `--task ... --include-path`."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from predictor.harnesses.endpoint import Endpoint
from predictor.runs.dataset_preflight import DatasetError, TaskDataset, check_datasets
from predictor.runs.preflight import EndpointError, check_tokenizer
from tests.support.openai_server import OpenAIServer
from tests.support.probe_runs import render_tasks, run_cli, run_environment
from tests.support.quiet_server import QuietThreadingHTTPServer

GRANTED = "hf_granted_token_123"
REFUSED = "hf_not_accepted_456"
# repo -> gated ("manual", "auto" or False); a repo not here answers 404 (401 without a token)
REPOS = {"acme/open-set": False, "Idavidrein/gpqa": "manual"}


class FakeHub:
    """The Hub API routes the check reads, logging (path, Authorization) of each request."""

    def __init__(self, delay: float = 0.0) -> None:
        self.requests: list[tuple[str, str | None]] = []
        self.delay = delay
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                auth = self.headers.get("Authorization")
                hub.requests.append((self.path, auth))
                time.sleep(hub.delay)
                status, body = hub.answer(self.path, auth)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(OSError):  # a client past its deadline is gone
                    self.wfile.write(data)

        self.httpd = QuietThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, path: str, auth: str | None) -> tuple[int, dict]:
        route = path.removeprefix("/api/datasets/")
        check = route.endswith("/auth-check")
        repo = route.removesuffix("/auth-check")
        if repo not in REPOS:
            return (401 if auth is None else 404), {"error": "Repository not found"}
        gated = REPOS[repo]
        if not check:
            return 200, {"id": repo, "gated": gated, "private": False}
        if gated and auth != f"Bearer {GRANTED}":
            return 403, {"error": "Access to this dataset is restricted"}
        return 200, {}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    fake = FakeHub()
    yield fake
    fake.close()


def hub_task(folder: Path, name: str, dataset: str, config: str | None = None) -> None:
    """An lm-eval task of our own over a Hub dataset (it never gets to load it)."""
    lines = [f"task: {name}", f"dataset_path: {dataset}"]
    lines += [f"dataset_name: {config}"] if config else []
    lines += [
        "test_split: test",
        "output_type: generate_until",
        'doc_to_text: "{{question}}"',
        'doc_to_target: "{{answer}}"',
        "metric_list:",
        "  - metric: exact_match",
        "metadata:",
        "  version: 1.0",
    ]
    (folder / f"{name}.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def env_without_offline(root: Path, tasks: Path, **settings: str) -> dict[str, str]:
    """The run's environment online (the Hub is `settings`' HF_ENDPOINT), tasks given."""
    env = run_environment(root, tasks, **settings)
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        env.pop(name, None)
    env.pop("BENCHPRESS_PROBE_TASKS", None)
    return env


def run_args(server: OpenAIServer, tasks: Path, *task_args: str) -> list[str]:
    """`benchpress run` of gpqa_diamond and gsm8k on `server` (fixture tasks unless
    `task_args` name others)."""
    return [
        "run",
        "m",
        "--model-type",
        "local-completions",
        "--model-args",
        f"base_url={server.completions_url}",
        "--probes",
        "gpqa_diamond,gsm8k",
        *task_args,
        "--include-path",
        str(tasks),
        "--out",
        "runs/m",
        "--no-progress",
    ]


def completions(server: OpenAIServer) -> int:
    return sum(1 for r in server.requests if "completions" in r.path)


def test_run_fails_fast_naming_each_gated_or_missing_dataset_and_what_to_do(
    tmp_path: Path, hub: FakeHub
) -> None:
    tasks = render_tasks(tmp_path / "tasks")
    hub_task(tasks, "bp_hub_gpqa", "Idavidrein/gpqa", "gpqa_diamond")
    hub_task(tasks, "bp_hub_missing", "acme/no-such-set")
    env = env_without_offline(tmp_path, tasks, HF_ENDPOINT=hub.url)
    own = ("--task", "gpqa_diamond=bp_hub_gpqa", "--task", "gsm8k=bp_hub_missing")
    with OpenAIServer(model_names=("m",)) as server:
        args = run_args(server, tasks, *own)
        started = time.monotonic()
        done = run_cli(args, env, tmp_path)
        took = time.monotonic() - started
        sent = completions(server)
    assert done.returncode == 1, done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("benchpress: error:")]
    assert errors == [
        "benchpress: error: task bp_hub_gpqa: dataset Idavidrein/gpqa (gpqa_diamond) is gated: "
        f"accept its terms at {hub.url}/datasets/Idavidrein/gpqa with your Hugging Face "
        "account, then set HF_TOKEN to a token of that account; or run your own local copy of "
        "the task (--task BENCHMARK=TASK --include-path DIR)",
        "benchpress: error: task bp_hub_missing: dataset acme/no-such-set is not on the Hub, or "
        "it is private (HTTP 401): check the name, or set HF_TOKEN to a token of an account "
        f"that can open {hub.url}/datasets/acme/no-such-set",
        "benchpress: error: nothing was run (2 dataset problems)",
    ]
    assert sent == 0  # not one request to the model
    assert sorted(p for p, _ in hub.requests) == [
        "/api/datasets/Idavidrein/gpqa",
        "/api/datasets/acme/no-such-set",
    ]
    assert took < 60  # lm-eval's own retries took minutes


def test_offline_run_names_each_dataset_missing_from_the_cache_without_asking_the_hub(
    tmp_path: Path, hub: FakeHub
) -> None:
    tasks = render_tasks(tmp_path / "tasks")
    hub_task(tasks, "bp_hub_gpqa", "Idavidrein/gpqa", "gpqa_diamond")
    # gsm8k's task reads a local json file: nothing to check
    env = run_environment(tmp_path, tasks, HF_ENDPOINT=hub.url)
    env.pop("BENCHPRESS_PROBE_TASKS")
    with OpenAIServer(model_names=("m",)) as server:
        args = run_args(
            server, tasks, "--task", "gpqa_diamond=bp_hub_gpqa", "--task", "gsm8k=bp_probe_gsm8k"
        )
        done = run_cli(args, env, tmp_path)
        sent = completions(server)
    assert done.returncode == 1, done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("benchpress: error:")]
    assert errors == [
        "benchpress: error: task bp_hub_gpqa: dataset Idavidrein/gpqa (gpqa_diamond) is not in "
        "the local Hugging Face cache and HF_HUB_OFFLINE=1 forbids downloading it: download "
        "it once online (unset HF_HUB_OFFLINE), or run your own local copy of the task (--task "
        "BENCHMARK=TASK --include-path DIR)",
        "benchpress: error: nothing was run (1 dataset problem)",
    ]
    assert sent == 0 and hub.requests == []


def test_a_cached_dataset_passes_offline_and_a_local_builder_needs_no_check(
    tmp_path: Path,
) -> None:
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    gpqa = TaskDataset("gpqa_diamond_cot_zeroshot", "Idavidrein/gpqa", "gpqa_diamond")
    with pytest.raises(DatasetError):
        check_datasets([gpqa], env)
    snapshot = tmp_path / "hf" / "hub" / "datasets--Idavidrein--gpqa" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    check_datasets([gpqa, TaskDataset("mine", "json")], env)  # nothing raised


def test_a_token_without_access_is_told_to_accept_the_terms_and_a_granted_one_passes(
    hub: FakeHub,
) -> None:
    gpqa = TaskDataset("leaderboard_gpqa_diamond", "Idavidrein/gpqa", "gpqa_diamond")
    env = {"HF_ENDPOINT": hub.url, "HF_TOKEN": REFUSED, "HF_HOME": "/nonexistent-hf-home"}
    with pytest.raises(DatasetError) as caught:
        check_datasets([gpqa, TaskDataset("open", "acme/open-set")], env)
    assert caught.value.problems == [
        "task leaderboard_gpqa_diamond: dataset Idavidrein/gpqa (gpqa_diamond) is gated and the "
        "account of your HF_TOKEN has not been granted access: accept its terms at "
        f"{hub.url}/datasets/Idavidrein/gpqa; or run your own local copy of the task (--task "
        "BENCHMARK=TASK --include-path DIR)"
    ]
    assert REFUSED not in str(caught.value)
    check_datasets([gpqa], {**env, "HF_TOKEN": GRANTED})  # nothing raised
    assert hub.requests[-1] == ("/api/datasets/Idavidrein/gpqa/auth-check", f"Bearer {GRANTED}")


def test_an_unreachable_hub_fails_at_once_and_a_silent_one_within_the_deadline(
    tmp_path: Path,
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    env = {"HF_ENDPOINT": closed, "HF_HOME": str(tmp_path / "hf")}
    cached = tmp_path / "hf" / "hub" / "datasets--openai--gsm8k" / "snapshots" / "x"
    cached.mkdir(parents=True)
    datasets = [
        TaskDataset("gpqa_diamond_cot_zeroshot", "Idavidrein/gpqa", "gpqa_diamond"),
        TaskDataset("gsm8k", "openai/gsm8k", "main"),
    ]
    started = time.monotonic()
    with pytest.raises(DatasetError) as caught:
        check_datasets(datasets, env)
    assert time.monotonic() - started < 5
    first, second = caught.value.problems
    assert first.startswith(
        "task gpqa_diamond_cot_zeroshot: dataset Idavidrein/gpqa (gpqa_diamond): cannot reach "
        f"the Hugging Face Hub {closed} ("
    )
    assert first.endswith(
        "and it is not in the local cache: connect once, or run your own local copy of the "
        "task (--task BENCHMARK=TASK --include-path DIR)"
    )
    assert second.endswith(
        "it is in the local cache: set HF_HUB_OFFLINE=1 to load it from there without asking "
        "the Hub"
    )
    # a group's configurations of one dataset are one line
    bbh = [TaskDataset("leaderboard_bbh", "SaylorTwift/bbh", n) for n in ("navigate", "snarks")]
    with pytest.raises(DatasetError) as caught:
        check_datasets(bbh, env)
    (line,) = caught.value.problems
    assert line.startswith("task leaderboard_bbh: dataset SaylorTwift/bbh (2 configurations): ")
    slow = FakeHub(delay=5.0)
    try:
        started = time.monotonic()
        with pytest.raises(DatasetError) as caught:
            check_datasets(datasets[:1], {**env, "HF_ENDPOINT": slow.url}, seconds=1.0)
        assert time.monotonic() - started < 3
        assert "no answer within" in caught.value.problems[0]
    finally:
        slow.close()


def test_a_server_without_tokenizer_info_is_refused_before_any_task_with_what_to_do(
    tmp_path: Path,
) -> None:
    tasks = render_tasks(tmp_path / "tasks")
    env = run_environment(tmp_path, tasks)
    with OpenAIServer(model_names=("m",), serve_tokenizer_info=False) as server:
        args = run_args(server, tasks)
        done = run_cli(args, env, tmp_path)
        sent, url = completions(server), server.url
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == (
        f"benchpress: error: the model endpoint has no tokenizer at {url}/tokenizer_info "
        "(HTTP 404; llama.cpp's server has none), which lm-eval needs to score multiple-choice "
        "tasks on it (tokenizer_backend=remote): pass --tokenizer HF_NAME (the model's "
        "tokenizer on the Hugging Face Hub or a local folder), or run generation tasks on the "
        "chat endpoint (--model-type local-chat-completions with "
        "base_url=.../v1/chat/completions)"
    )
    assert sent == 0


def test_with_tokenizer_lm_eval_tokenizes_locally_and_the_server_is_not_asked(
    tmp_path: Path,
) -> None:
    tasks = render_tasks(tmp_path / "tasks")
    env = run_environment(tmp_path, tasks)
    with OpenAIServer(model_names=("m",), serve_tokenizer_info=False) as server:
        args = [*run_args(server, tasks), "--tokenizer", "acme/tok", "--dry-run"]
        done = run_cli(args, env, tmp_path)
        endpoint = Endpoint(
            "m",
            "local-completions",
            {"tokenizer": "acme/tok", "tokenizer_backend": "huggingface"},
            server.completions_url,
            "--model-args base_url",
            5.0,
        )
        check_tokenizer(endpoint)  # nothing raised, nothing asked
        assert server.requests == []
        remote = Endpoint(
            "m",
            "local-completions",
            {"tokenizer_backend": "remote"},
            server.completions_url,
            "--model-args base_url",
            5.0,
        )
        with pytest.raises(EndpointError, match="no tokenizer at"):
            check_tokenizer(remote)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "tokenizer=acme/tok" in done.stdout
    assert "tokenizer_backend=huggingface" in done.stdout


def test_the_tokenizer_check_redacts_a_key_in_the_endpoints_url() -> None:
    key = "sk-in-the-path-9f8e7d"
    with OpenAIServer(model_names=("m",)) as server:
        endpoint = Endpoint(
            "m",
            "local-completions",
            {"tokenizer_backend": "remote"},
            f"{server.url}/{key}/v1/completions",
            "--model-args base_url",
            5.0,
            key,
        )
        with pytest.raises(EndpointError) as caught:
            check_tokenizer(endpoint)
        asked, url = [r.path for r in server.requests], server.url
    assert asked == [f"/{key}/tokenizer_info"]  # where lm-eval's remote tokenizer asks
    assert key not in str(caught.value)
    assert f"no tokenizer at {url}/***/tokenizer_info (HTTP 404" in str(caught.value)


@pytest.mark.slow
def test_lm_eval_built_in_gpqa_tasks_name_the_gated_dataset() -> None:
    """The datasets read from lm-eval's own configs (a group's tasks each)."""
    from predictor.harnesses.lm_eval import LmEvalTool

    tool = LmEvalTool(["gpqa_diamond_cot_zeroshot", "leaderboard_gpqa"])
    assert tool.datasets("gpqa_diamond_cot_zeroshot") == [("Idavidrein/gpqa", "gpqa_diamond")]
    assert sorted(tool.datasets("leaderboard_gpqa")) == [
        ("Idavidrein/gpqa", "gpqa_diamond"),
        ("Idavidrein/gpqa", "gpqa_extended"),
        ("Idavidrein/gpqa", "gpqa_main"),
    ]
