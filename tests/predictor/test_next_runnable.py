"""`benchpress next --runnable lm-eval|inspect` and `what_to_run_next(runnable=)`: only the
benchmarks that tool can run, as `probes --runnable` chooses them."""

from __future__ import annotations

import json

import polars as pl
import pytest

from predictor import BenchPress
from predictor.cli import main
from predictor.results.task_facts import is_generative, runs_model_code
from predictor.trust.next_benchmark import what_to_run_next
from predictor.util.paths import bundled_snapshot_dir

STORE = str(bundled_snapshot_dir())
KNOWN = {"gpqa_diamond": 70.0, "mmlu_pro": 75.0}


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=STORE)


def test_runnable_keeps_only_what_the_tool_runs_in_the_same_order(bp: BenchPress) -> None:
    every = what_to_run_next(bp, KNOWN, targets="coding_assistant", top=None)
    # unrestricted, the top of the list is what no tool here runs (aider) or code tasks
    top = every.head(5)
    assert top["lm_eval_task"].null_count() >= 3
    lm = what_to_run_next(bp, KNOWN, targets="coding_assistant", top=None, runnable="lm-eval")
    assert lm.height > 0 and lm["lm_eval_task"].null_count() == 0
    assert not any(runs_model_code("lm_eval", t) for t in lm["lm_eval_task"])
    # the same candidates ranked the same way: the rows of `every` lm-eval can run
    kept = every.filter(
        every["lm_eval_task"].is_not_null()
        & ~every["lm_eval_task"].map_elements(
            lambda t: runs_model_code("lm_eval", t), return_dtype=pl.Boolean
        )
    )
    assert kept.height < every.filter(every["lm_eval_task"].is_not_null()).height  # humaneval
    assert lm["benchmark"].to_list() == kept["benchmark"].to_list()
    assert lm["reduction_per_cost"].to_list() == kept["reduction_per_cost"].to_list()
    assert lm["rank"].to_list() == list(range(1, lm.height + 1))
    five = what_to_run_next(bp, KNOWN, targets="coding_assistant", runnable="lm_eval")
    assert five["benchmark"].to_list() == lm["benchmark"].head(5).to_list()


def test_runnable_inspect_and_a_chat_endpoint(bp: BenchPress) -> None:
    inspect = what_to_run_next(bp, KNOWN, targets="reasoning", top=None, runnable="inspect")
    assert inspect.height > 0
    assert all(t.startswith("inspect_evals/") for t in inspect["inspect_task"])
    assert "inspect_evals/humaneval" not in inspect["inspect_task"].to_list()
    chat = what_to_run_next(bp, KNOWN, targets="reasoning", top=None, runnable="lm_eval", chat=True)
    assert chat.height > 0
    # the chat tasks that run them (the lm_eval_task column names the default ones)
    from predictor.harnesses import get_harness

    chat_tasks = get_harness("lm_eval").runnable_tasks(chat=True)
    assert all(is_generative("lm_eval", chat_tasks[b]) for b in chat["benchmark"])
    assert "mmlu" not in chat["benchmark"].to_list()  # multiple choice: log-likelihoods


def test_a_mistyped_tool_is_refused_naming_the_choices(bp: BenchPress) -> None:
    with pytest.raises(ValueError, match="runnable must be 'lm_eval' or 'inspect', got 'lmeval'"):
        what_to_run_next(bp, KNOWN, runnable="lmeval")


def test_cli_next_runnable(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["next", "--scores", "gpqa_diamond=70,mmlu_pro=75", "--targets", "coding_assistant"]
    argv += ["--store", STORE]
    assert main([*argv, "--runnable", "lm-eval", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = doc["rows"]
    assert len(rows) == 5 and all(r["lm_eval_task"] for r in rows)
    assert doc["runnable"] == "lm_eval"
    first = rows[0]["benchmark"]
    run = f"benchpress run MODEL --model-type TYPE --probes {first} --predict"
    assert doc["commands"]["run"] == run
    assert "--confirm_run_unsafe_code" not in doc["commands"]["lm_eval"]

    assert main([*argv, "--runnable", "lm-eval"]) == 0
    out = capsys.readouterr().out
    assert f"or let benchpress run the first with lm-eval and predict:\n  {run}\n" in out
    table = out[: out.index("\nmodel:")].splitlines()[2:]
    assert [line.split()[1] for line in table] == [r["benchmark"] for r in rows]

    assert main([*argv, "--runnable", "inspect", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert all(r["inspect_task"] for r in doc["rows"])
    assert doc["commands"]["run"].startswith("benchpress run MODEL --harness inspect ")


def test_cli_next_model_type_needs_runnable(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["next", "--scores", "gpqa_diamond=70", "--store", STORE]
    code = main([*argv, "--model-type", "local-chat-completions"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--model-type says what the --runnable tool runs on: add --runnable" in err
