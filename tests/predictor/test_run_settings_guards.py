"""What `benchpress run` refuses before it sends anything, and what its endpoint check says
(`predictor.runs.settings`, `.preflight`, `.isolation`): a secret in `--model-args`, a request
timeout of 0, a key the server refuses (401 and 403), a server that is not ready (any 5xx),
a limit of no items, and the deadline of a task (`--task-timeout 0` is none, the default at
least an hour; what a task killed at it wrote is removed). Each of these let a planted bug
through the rest of the suite (issue 39, `benchmarks/mutation_audit.py`)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from predictor.runs import EndpointError, SettingsError, plan_probe_run, run_probe_benchmarks
from predictor.runs.isolation import (
    MIN_TASK_SECONDS,
    UNSIZED_TASK_SECONDS,
    check_task_timeout,
    describe_task_timeout,
    task_deadline,
)
from predictor.runs.preflight import check_endpoint
from predictor.runs.settings import KEY_ENV, TIMEOUT_ENV, resolve_endpoint
from tests.support.probe_runs import render_tasks, run_environment

KEY = "sk-test-51c0ffee"


# ------------------------------------------------------------------ --model-args
@pytest.mark.parametrize("secret", ["api_key", "auth_token"])
@pytest.mark.parametrize(
    ("harness", "model_type"), [("lm_eval", "local-completions"), ("inspect", "openai-api")]
)
def test_a_secret_in_model_args_is_refused(secret: str, harness: str, model_type: str) -> None:
    """lm-eval writes `model_args` into its results file: a key there would be kept."""
    args = f"base_url=http://127.0.0.1:8000/v1/completions,{secret}=sk-in-the-file"
    with pytest.raises(SettingsError) as caught:
        resolve_endpoint("m", harness, model_type, args, env={})
    assert str(caught.value) == (
        f"--model-args: do not pass {secret}= (lm-eval writes model_args into its results "
        f"file); set {KEY_ENV} instead"
    )


# ------------------------------------------------------------------ the request timeout
@pytest.mark.parametrize("seconds", [0, 0.0, -1.0, math.nan, math.inf])
def test_a_request_timeout_must_be_seconds_above_zero(seconds: float) -> None:
    with pytest.raises(SettingsError) as caught:
        resolve_endpoint("m", model_type="hf", timeout=seconds, env={})
    assert str(caught.value) == f"timeout: expected seconds > 0, got {seconds!r}"


@pytest.mark.parametrize("text", ["0", "0.0", "-0"])
def test_a_timeout_setting_of_zero_is_refused(text: str) -> None:
    with pytest.raises(SettingsError) as caught:
        resolve_endpoint("m", model_type="hf", env={TIMEOUT_ENV: text})
    assert str(caught.value) == f"{TIMEOUT_ENV}: expected seconds > 0, got {float(text)!r}"


def test_a_small_timeout_is_taken() -> None:
    endpoint = resolve_endpoint("m", model_type="hf", env={TIMEOUT_ENV: "0.5"})
    assert endpoint.timeout == 0.5


# ------------------------------------------------------------------ the endpoint check
class _Status(BaseHTTPRequestHandler):
    """Answers GET /v1/models (the endpoint check) with the server's `status`."""

    def do_GET(self) -> None:
        status = self.server.status  # type: ignore[attr-defined]
        self.server.authorizations.append(self.headers.get("Authorization"))  # type: ignore[attr-defined]
        body = b'{"object": "list", "data": []}' if status == 200 else b'{"error": "no"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture(scope="module")
def status_server() -> Iterator[ThreadingHTTPServer]:
    """A loopback server whose model list answers `server.status` (set by each test)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Status)
    server.status = 200  # type: ignore[attr-defined]
    server.authorizations = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def endpoint_of(server: ThreadingHTTPServer, status: int, key: str | None, path: str = ""):
    server.status = status  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{server.server_address[1]}{path}/v1/completions"
    env = {KEY_ENV: key} if key else {}
    return resolve_endpoint("m", "lm_eval", "local-completions", f"base_url={url}", env=env), url


@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.parametrize("key", [KEY, None])
def test_a_refused_key_fails_the_check_with_the_setting_to_fix(
    status_server: ThreadingHTTPServer, status: int, key: str | None
) -> None:
    endpoint, url = endpoint_of(status_server, status, key)
    with pytest.raises(EndpointError) as caught:
        check_endpoint(endpoint)
    hint = f"check {KEY_ENV}" if key else f"set {KEY_ENV}"
    assert str(caught.value) == (
        f"model endpoint {url} refused the API key (HTTP {status}); {hint}"
    )
    expected = f"Bearer {key}" if key else None
    assert status_server.authorizations[-1] == expected  # type: ignore[attr-defined]


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_server_error_fails_the_check_as_not_ready(
    status_server: ThreadingHTTPServer, status: int
) -> None:
    endpoint, url = endpoint_of(status_server, status, KEY)
    with pytest.raises(EndpointError) as caught:
        check_endpoint(endpoint)
    assert str(caught.value) == (
        f"model endpoint {url} (--model-args base_url) answered HTTP {status}: the server "
        "is not ready"
    )


@pytest.mark.parametrize("status", [200, 404, 499])
def test_a_server_without_a_model_list_passes_the_check(
    status_server: ThreadingHTTPServer, status: int
) -> None:
    """404 and the like: a server without a model list; its first task will tell."""
    endpoint, _ = endpoint_of(status_server, status, KEY)
    assert check_endpoint(endpoint) is None


def test_the_checks_message_never_shows_the_key(status_server: ThreadingHTTPServer) -> None:
    """A proxy that takes the key in its path: the URL in the message has it redacted."""
    endpoint, url = endpoint_of(status_server, 503, KEY, path=f"/{KEY}")
    with pytest.raises(EndpointError) as caught:
        check_endpoint(endpoint)
    assert KEY not in str(caught.value)
    assert str(caught.value) == (
        f"model endpoint {url.replace(KEY, '***')} (--model-args base_url) answered HTTP "
        "503: the server is not ready"
    )


# ------------------------------------------------------------------ the item limit
@pytest.mark.parametrize("limit", [0, -2, True])
def test_a_limit_of_no_items_is_refused_before_anything_loads(limit: int) -> None:
    with pytest.raises(SettingsError) as caught:
        plan_probe_run("m", "gsm8k", limit=limit, model_type="hf")
    assert str(caught.value) == f"limit must be a positive number of items, got {limit!r}"


# ------------------------------------------------------------------ a task's deadline
def test_a_task_timeout_of_zero_is_no_deadline() -> None:
    assert check_task_timeout(0) == 0.0
    assert task_deadline(5_000, 2_000.0, 0.0) is None
    assert describe_task_timeout(0.0) == "none"
    assert task_deadline(5_000, 2_000.0, 30.0) == 30.0
    assert describe_task_timeout(30.0) == "30 s per task"


def test_the_default_deadline_is_ten_times_the_estimate_and_at_least_an_hour() -> None:
    assert MIN_TASK_SECONDS == 3600.0
    assert task_deadline(5_000, 2_000.0) == MIN_TASK_SECONDS  # a 2.5 s task: an hour
    assert task_deadline(7_200_000, 2_000.0) == 36_000.0  # a one-hour task: ten hours
    assert task_deadline(None, 2_000.0) == UNSIZED_TASK_SECONDS  # Inspect's: unsized


@pytest.mark.slow
def test_a_task_killed_at_its_deadline_leaves_nothing_under_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inspect writes its log as the task runs: what the killed task's process wrote (it
    cannot clean up after itself) is removed by the run."""
    tasks = render_tasks(tmp_path / "tasks")
    for name, value in run_environment(tmp_path, tasks, BENCHPRESS_PROBE_TASKS="").items():
        monkeypatch.setenv(name, value)

    def never(messages, tools, tool_choice, config):  # mockllm's reply: none in time
        time.sleep(3600)

    out = tmp_path / "runs"
    scores = run_probe_benchmarks(
        "slow",
        "gsm8k",
        harness="inspect",
        model_type="mockllm",
        model_args={"custom_outputs": never},
        tasks={"gsm8k": "inspect_tasks.py@bp_probe_qa"},
        include_path=tasks,
        out=out,
        task_timeout=3,
        progress=False,
    )
    assert scores.failed == {
        "gsm8k": "task inspect_tasks.py@bp_probe_qa exceeded its 3 s deadline (--task-timeout)"
    }
    assert list(out.rglob("*")) == []


@pytest.mark.parametrize("value", [-1, math.nan, math.inf, True, "soon"])
def test_a_task_timeout_that_is_not_seconds_is_refused(value: object) -> None:
    with pytest.raises(SettingsError) as caught:
        check_task_timeout(value)  # type: ignore[arg-type]
    assert str(caught.value) == (
        f"task_timeout: expected seconds >= 0 (0: no deadline), got {value!r}"
    )
