"""The key of a probe run never shows, however it arrives (`predictor.harnesses.redact`): split
across two writes to the terminal, or quoted in the error a failed task records
(`ProbeScores.failed`, what a library caller reads; the command's output is filtered as well).
Each let a planted bug through the rest of the suite (issue 39,
`benchmarks/mutation_audit.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from predictor.harnesses.redact import REDACTED, _Filter
from predictor.runs import run_probe_benchmarks
from tests.support.probe_runs import render_tasks, run_environment

pytest_plugins = ["tests.support.openai_server_fixtures"]  # make_openai_server
KEY = "sk-test-0ddba11c"


def test_a_key_split_across_writes_is_held_back_until_it_is_whole() -> None:
    """What could begin the key waits for the next write; what never became it comes out."""
    secret = KEY.encode()
    terminal = _Filter(secret)
    assert terminal.feed(b"key: " + secret[:5]) == b"key: "
    shown = terminal.feed(secret[5:] + b" and " + secret[:3])
    shown += terminal.feed(b"-not-the-key\n") + terminal.close()
    assert shown == f"{REDACTED} and sk--not-the-key\n".encode()
    ending = _Filter(secret)
    assert ending.feed(b"x" + secret[:-1]) == b"x"
    assert ending.close() == secret[:-1]  # the run ended: not the key after all


@pytest.mark.slow
def test_a_failed_tasks_recorded_error_does_not_hold_the_key(
    tmp_path: Path, make_openai_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An endpoint whose URL holds the key (a gateway that takes it in the path): every
    request there fails (404 here), and lm-eval's error quotes the URL; the failure recorded
    for the task has the key redacted. (lm-eval tokenizes nothing, `tokenizer_backend=none`:
    the server's tokenizer would be refused before the task, test_run_dataset_preflight.py.)"""
    tasks = render_tasks(tmp_path / "tasks")
    server = make_openai_server(model_names=("m",))
    settings = run_environment(tmp_path, tasks, BENCHPRESS_MODEL_API_KEY=KEY)
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    scores = run_probe_benchmarks(
        "m",
        "gsm8k",
        model_type="local-completions",
        model_args=f"base_url={server.url}/{KEY}/v1/completions,max_retries=1,"
        "tokenizer_backend=none",
        out=tmp_path / "runs",
        progress=False,
    )
    assert dict(scores) == {} and list(scores.failed) == ["gsm8k"]
    error = scores.failed["gsm8k"]
    assert f"{server.url}/{REDACTED}/" in error and KEY not in error
    assert {r.path.split("/")[1] for r in server.requests} == {KEY}  # the URL that was used
