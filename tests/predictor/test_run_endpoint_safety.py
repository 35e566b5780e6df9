"""`benchpress run` keeps the key to the endpoint the plan shows (issue 38, items 1-3, 8, 9):
a model name cannot redirect requests, no redirect is followed, a key the server echoes is
redacted wherever it would show, a bad `--out` fails before any request, and the Inspect path
checks its provider's package before the first task.

Each run is the real `benchpress` with the real lm-evaluation-harness or Inspect against real
OpenAI-compatible servers on loopback (`tests/support/openai_server.py`: its `redirect_to` and
`echo_authorization` variants play the hostile server), offline, with the local task
definitions of `tests/support/probe_runs.py`."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from predictor.harnesses.redact import REDACTED, plain_text, redact, redacted_output
from predictor.runs.preflight import EndpointError, check_endpoint
from predictor.runs.settings import resolve_endpoint
from tests.support.openai_server import OpenAIServer
from tests.support.probe_runs import EXPECTED_SCORE, render_tasks, run_cli, run_environment

pytest_plugins = ["tests.support.openai_server_fixtures"]  # make_openai_server
KEY = "sk-test-9c1e77ab"
REPO_ROOT = Path(__file__).resolve().parents[2]
INSPECT_TASK = "gsm8k=inspect_tasks.py@bp_probe_qa"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_tasks(tmp_path_factory.mktemp("probe_tasks") / "tasks")


def completion_requests(server: OpenAIServer) -> int:
    return sum(1 for r in server.requests if "completions" in r.path)


def files_holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_a_model_name_cannot_redirect_the_requests_nor_the_key(
    tmp_path: Path, tasks: Path, make_openai_server
) -> None:
    """The red team's `run 'm,base_url=<other>' --model-args base_url=<shown>`: lm-eval gets
    its model arguments as a dict, so the name is a name, sent to the endpoint the plan shows."""
    decoy = make_openai_server(model_names=("m",))
    hostile = f"m,base_url={decoy.completions_url}"
    shown = make_openai_server(model_names=(hostile,), api_key=KEY, key_scope="v1")
    env = run_environment(tmp_path, tasks, BENCHPRESS_MODEL_API_KEY=KEY)
    done = run_cli(
        ["run", hostile, "--model-type", "local-completions", "--probes", "gsm8k"]
        + ["--model-args", f"base_url={shown.completions_url}", "--out", "runs/m"],
        env,
        tmp_path,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert decoy.requests == []
    assert completion_requests(shown) == 8
    assert {r.authorization for r in shown.requests if r.path.startswith("/v1/")} == {
        f"Bearer {KEY}"
    }
    assert {p["model"] for p in shown.payloads("/v1/completions")} == {hostile}
    # the plan shows the name as one value, and the endpoint used
    assert f"  endpoint: {shown.completions_url} (--model-args base_url)" in done.stdout
    assert f"model_args: base_url={shown.completions_url},model='{hostile}'," in done.stdout
    assert f"probe scores: gsm8k={EXPECTED_SCORE:g}" in done.stdout


def test_options_that_would_replace_the_endpoint_are_refused(
    tmp_path: Path, tasks: Path, make_openai_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool option naming another endpoint (Inspect's `model_base_url`) would send the
    requests and the key past the one the plan shows: refused before any request."""
    from predictor.runs import SettingsError, run_probe_benchmarks

    shown = make_openai_server(model_names=("m",))
    decoy = make_openai_server(model_names=("m",))
    for key, value in run_environment(tmp_path, tasks, BENCHPRESS_MODEL_API_KEY=KEY).items():
        monkeypatch.setenv(key, value)
    with pytest.raises(SettingsError, match="model_base_url: set by benchpress"):
        run_probe_benchmarks(
            "m",
            "gsm8k",
            harness="inspect",
            model_type="openai-api",
            model_args={"base_url": f"{shown.url}/v1"},
            tasks={"gsm8k": "inspect_tasks.py@bp_probe_qa"},
            include_path=tasks,
            out=tmp_path / "runs",
            progress=False,
            model_base_url=f"{decoy.url}/v1",
        )
    assert shown.requests == decoy.requests == []


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_the_preflight_follows_no_redirect(status: int, make_openai_server) -> None:
    target = make_openai_server()
    redirecting = make_openai_server(redirect_to=target.url, redirect_status=status)
    endpoint = resolve_endpoint(
        "m",
        model_type="local-completions",
        model_args=f"base_url={redirecting.completions_url}",
        env={"BENCHPRESS_MODEL_API_KEY": KEY},
    )
    with pytest.raises(EndpointError) as raised:
        check_endpoint(endpoint)
    assert str(raised.value) == (
        f"model endpoint {redirecting.completions_url} (--model-args base_url) answered "
        f"{redirecting.models_url} with a redirect (HTTP {status}) to "
        f"{target.models_url}: benchpress follows no redirect (it would send the key "
        "elsewhere); give the endpoint's own URL"
    )
    assert target.requests == []
    assert len(redirecting.requests) == 1


def test_run_stops_at_a_redirect_and_the_key_never_leaves(
    tmp_path: Path, tasks: Path, make_openai_server
) -> None:
    elsewhere = make_openai_server(model_names=("m",))
    redirecting = make_openai_server(redirect_to=elsewhere.url)
    env = run_environment(tmp_path, tasks, BENCHPRESS_MODEL_API_KEY=KEY)
    done = run_cli(
        ["run", "m", "--model-type", "local-completions", "--probes", "gsm8k"]
        + ["--model-args", f"base_url={redirecting.completions_url}", "--out", "runs/m"],
        env,
        tmp_path,
    )
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"benchpress: error: model endpoint {redirecting.completions_url} (--model-args "
        f"base_url) answered {redirecting.models_url} with a redirect (HTTP 302) to "
        f"{elsewhere.models_url}"
    )
    assert elsewhere.requests == []
    assert [r.path for r in redirecting.requests] == ["/v1/models"]
    assert KEY not in done.stdout + done.stderr


def test_an_echoed_key_is_redacted_and_a_failed_task_leaves_nothing(
    tmp_path: Path, tasks: Path, make_openai_server
) -> None:
    """A server whose 500 quotes the Authorization header: lm-eval logs the body, the task's
    failure says it; none of it shows the key, and no file under --out or the homes holds it."""
    echoing = make_openai_server(
        model_names=("m",), api_key=KEY, key_scope="v1", echo_authorization=True
    )
    env = run_environment(tmp_path, tasks, BENCHPRESS_MODEL_API_KEY=KEY)
    base = ["run", "m", "--probes", "gsm8k", "--no-progress"]
    lm_eval = run_cli(
        [*base, "--model-type", "local-completions", "--out", "runs/lm"]
        + ["--model-args", f"base_url={echoing.completions_url},max_retries=1"],
        env,
        tmp_path,
    )
    assert lm_eval.returncode == 1, lm_eval.stdout[-2000:] + lm_eval.stderr[-3000:]
    assert "gsm8k (bp_probe_gsm8k): failed: " in lm_eval.stdout
    assert f"Authorization: Bearer {REDACTED}" in lm_eval.stderr  # lm-eval's own log lines
    # Inspect retries a 500 for a minute: a 400 (not retried) quotes the header as well
    echoing_400 = make_openai_server(
        model_names=("m",), api_key=KEY, echo_authorization=True, echo_status=400
    )
    inspect = run_cli(
        [*base, "--harness", "inspect", "--model-type", "openai-api", "--out", "runs/insp"]
        + ["--task", INSPECT_TASK, "--include-path", str(tasks)]
        + ["--model-args", f"base_url={echoing_400.url}/v1"],
        {**env, "BENCHPRESS_PROBE_TASKS": ""},
        tmp_path,
    )
    assert inspect.returncode == 1, inspect.stdout[-2000:] + inspect.stderr[-3000:]
    assert "gsm8k (inspect_tasks.py@bp_probe_qa): failed: Inspect: " in inspect.stdout
    for done in (lm_eval, inspect):
        assert KEY not in done.stdout + done.stderr
    for server in (echoing, echoing_400):
        assert sum(1 for a in server.authorizations if a == f"Bearer {KEY}") > 1
    assert files_holding(tmp_path, KEY) == []
    assert not list((tmp_path / "runs").rglob(".staging"))
    assert not list((tmp_path / "runs").rglob("*.eval"))


def test_redaction_holds_across_writes(tmp_path: Path) -> None:
    """The filter on the process's stdout and stderr (file descriptors 1 and 2, what a tool's
    loggers, progress bars and child processes write to): a key split across writes, or
    written by a child process, comes out redacted; short keys are left alone."""
    assert redact(f"Bearer {KEY} and {KEY}", KEY) == f"Bearer {REDACTED} and {REDACTED}"
    assert redact("a 1 b", "1") == "a 1 b"
    script = (
        "import os, subprocess, sys\n"
        "from predictor.harnesses.redact import redacted_output\n"
        f"key = {KEY!r}\n"
        "with redacted_output(key):\n"
        "    os.write(2, key[:5].encode()); os.write(2, key[5:].encode() + b'|')\n"
        "    print('out', key, flush=True)\n"
        "    subprocess.run([sys.executable, '-c', f'import sys; sys.stderr.write({key!r})'])\n"
        "    sys.stderr.write('sk-')\n"
        "print('after', flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"out {REDACTED}\nafter\n"
    assert done.stderr == f"{REDACTED}|{REDACTED}sk-"
    assert redacted_output is not None


def test_a_bad_out_fails_before_any_request(
    tmp_path: Path, tasks: Path, make_openai_server
) -> None:
    server = make_openai_server(model_names=("m",))
    env = run_environment(tmp_path, tasks)
    (tmp_path / "taken").write_text("a file, not a folder\n")
    for out in ("taken", "taken/sub"):
        done = run_cli(
            ["run", "m", "--model-type", "local-completions", "--probes", "gsm8k"]
            + ["--model-args", f"base_url={server.completions_url}", "--out", out],
            env,
            tmp_path,
        )
        assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-3000:]
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith(f"benchpress: error: --out {out}: "), last
        assert "not a folder" in last or "cannot write" in last, last
        assert server.requests == []
    assert (tmp_path / "taken").read_text() == "a file, not a folder\n"


def test_the_inspect_extra_brings_the_client_of_its_openai_compatible_providers() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    extra = project["optional-dependencies"]["inspect"]
    assert any(r.split("=")[0].split(">")[0].strip() == "openai" for r in extra), extra
    pins = (REPO_ROOT / "constraints.txt").read_text().splitlines()
    assert any(line.startswith("openai==") for line in pins)


def test_inspect_on_an_openai_compatible_endpoint(
    tmp_path: Path, tasks: Path, make_openai_server
) -> None:
    """The documented Inspect path, `--harness inspect --model-type openai-api`, end to end
    on the loopback server, with the key; then the same without the `openai` package: one
    plain line naming it and the extra, before any request."""
    server = make_openai_server(model_names=("m",), api_key=KEY)
    env = run_environment(tmp_path, tasks, BENCHPRESS_MODEL_API_KEY=KEY, BENCHPRESS_PROBE_TASKS="")
    args = ["run", "m", "--harness", "inspect", "--model-type", "openai-api", "--probes", "gsm8k"]
    args += ["--task", INSPECT_TASK, "--include-path", str(tasks), "--no-progress"]
    args += ["--model-args", f"base_url={server.url}/v1"]
    done = run_cli([*args, "--out", "runs/ok"], env, tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert f"probe scores: gsm8k={EXPECTED_SCORE:g}" in done.stdout
    assert completion_requests(server) == 8
    assert set(server.authorizations) == {f"Bearer {KEY}"}
    assert KEY not in done.stdout + done.stderr

    before = len(server.requests)
    blocked = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nsys.modules['openai'] = None\n"
            "from predictor.cli import main\nsys.exit(main(sys.argv[1:]))\n",
            *args,
            "--out",
            "runs/no-client",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert blocked.returncode == 2, blocked.stdout[-2000:] + blocked.stderr[-3000:]
    assert blocked.stderr.strip().splitlines()[-1] == (
        "benchpress: error: Inspect's openai-api provider needs the Python package openai, "
        "which is not installed: pip install 'benchpress-llm[inspect]'"
    )
    assert "[bold]" not in blocked.stdout + blocked.stderr
    assert len(server.requests) == before


def test_inspect_messages_lose_their_rich_markup() -> None:
    from inspect_ai._util.error import pip_dependency_error

    message = str(pip_dependency_error("Some API", ["somepkg"]))
    assert "[bold]" in message  # Inspect's own text, written for its Rich console
    assert plain_text(message) == (
        "ERROR: Some API requires optional dependencies. Install with: pip install somepkg"
    )
    assert plain_text("scores [1, 2] of list[int]") == "scores [1, 2] of list[int]"


def test_model_args_text_is_typed_as_lm_eval_types_it_and_shown_unambiguously() -> None:
    from predictor.runs.settings import format_model_args

    endpoint = resolve_endpoint(
        "a,b=c",
        model_type="local-completions",
        model_args="base_url=http://h/v1/completions,max_retries=1,trust_remote_code=true",
        env={},
    )
    assert endpoint.model_args == {
        "base_url": "http://h/v1/completions",
        "max_retries": 1,
        "trust_remote_code": True,
        "model": "a,b=c",
        "tokenizer_backend": "remote",
        "timeout": 120,
    }
    assert format_model_args(endpoint.model_args) == (
        "base_url=http://h/v1/completions,max_retries=1,trust_remote_code=True,"
        "model='a,b=c',tokenizer_backend=remote,timeout=120"
    )
