"""`benchpress run --limit N` (a smoke test) with the real lm-evaluation-harness against a real
OpenAI-compatible server on loopback: its files go to `<out>/limited-N/`, apart from a full
run into the same `--out`; the `predict --from` line each run prints works as printed, and
`predict --from <out>` then uses the full run's score (issue 38: it failed with "scored twice
with different values")."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer
from tests.support.probe_runs import EXPECTED_SCORE, render_tasks, run_cli, run_environment

pytestmark = pytest.mark.slow
MODEL = "smoke"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_tasks(tmp_path_factory.mktemp("probe_tasks") / "tasks")


@pytest.fixture(scope="module")
def server():
    with OpenAIServer(model_names=(MODEL,)) as started:
        yield started


def hint(stdout: str) -> list[str]:
    """The `predict from them: benchpress predict ...` line, as the argv to run."""
    (line,) = [x for x in stdout.splitlines() if x.startswith("predict from them: ")]
    argv = shlex.split(line.removeprefix("predict from them: "))
    assert argv[0] == "benchpress"
    return argv[1:]


def test_a_smoke_test_and_a_full_run_into_one_out_stay_apart(
    tmp_path: Path, tasks: Path, server: OpenAIServer
) -> None:
    env = run_environment(tmp_path, tasks)
    base = ["run", MODEL, "--model-type", "local-completions", "--probes", "gsm8k"]
    base += ["--model-args", f"base_url={server.completions_url}", "--out", "runs/s"]

    smoke = run_cli([*base, "--limit", "2"], env, tmp_path)
    assert smoke.returncode == 0, smoke.stderr[-3000:]
    assert "files in runs/s/limited-2" in smoke.stdout.splitlines()[0]
    (smoke_file,) = (tmp_path / "runs" / "s").rglob("results_*.json")
    assert smoke_file.parent == tmp_path / "runs" / "s" / "limited-2" / "bp_probe_gsm8k"
    own = ["--map", "bp_probe_gsm8k=gsm8k"]  # the fixture task is the user's own task for gsm8k
    assert hint(smoke.stdout) == ["predict", "--from", "runs/s/limited-2", *own, "--allow-limited"]
    as_printed = run_cli(hint(smoke.stdout), env, tmp_path)
    assert as_printed.returncode == 0, as_printed.stderr[-3000:]
    first = as_printed.stdout.splitlines()[:2]
    assert first[0] == f"read 1 file (lm_eval) for {MODEL}: 1 score used: gsm8k=50"
    relative = smoke_file.relative_to(tmp_path)
    assert (
        first[1]
        == f"smoke-test scores used (--allow-limited): gsm8k (2 items per task, {relative})"
    )
    assert as_printed.stderr == (
        f"benchpress: warning: {relative}: gsm8k=50 from a run limited to 2 items per task "
        "(limit 2): a smoke test, not the model's scores, used as --allow-limited "
        "(allow_limited=True) asks\n"
    )
    refused = run_cli(["predict", "--from", "runs/s", *own], env, tmp_path)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        f"benchpress: error: {relative}, config.limit: the run was limited to 2 items per task "
        "(limit 2), a smoke test: gsm8k=50 is not the model's score (use a full run's files "
        "(without --limit), or pass --allow-limited (Python: allow_limited=True) to use them "
        "anyway)\n"
    )

    full = run_cli(base, env, tmp_path)  # the real run, into the same --out
    assert full.returncode == 0, full.stderr[-3000:]
    assert "to run: 1 task" in full.stdout  # the smoke test's file is not taken for it
    full_file = tmp_path / "runs" / "s" / "bp_probe_gsm8k"
    assert len(list(full_file.glob("results_*.json"))) == 1
    assert hint(full.stdout) == ["predict", "--from", "runs/s", *own]
    as_printed = run_cli(hint(full.stdout), env, tmp_path)
    assert as_printed.returncode == 0, as_printed.stderr[-3000:]
    assert as_printed.stderr == ""
    assert as_printed.stdout.splitlines()[:2] == [
        f"read 2 files (lm_eval) for {MODEL}: 1 score used: gsm8k={EXPECTED_SCORE:g}",
        f"smoke-test scores not used (a full run's are): gsm8k (2 items per task, {relative})",
    ]
