"""A probe-running harness is its module (tool class and descriptor) plus one registry line
(`predictor.harnesses`).

A toy harness's module (`tests/support/toy_harness.py`), registered for a test (`registered`),
is offered by `benchpress run --harness` and `benchpress probes --runnable`, runs its probes
(its tool writes a tidy scores file, no network), resumes, gets its own default probe set, a
task column in the probe tables and its label on the page (`/api/harnesses`), with no other
file touched; gone again after the block.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from predictor import BenchPress
from predictor.cli.main import main
from predictor.harnesses import HARNESSES, Harness, get_harness, harnesses, registered
from predictor.harnesses.tool import ProbeTool
from predictor.probe_sets import ProbeBenchmarks, ProbeSet
from predictor.results.task_facts import RUNS_MODEL_CODE, load_facts
from predictor.runs import run_probe_benchmarks
from predictor.util.extras import EXTRA_OF
from predictor.util.paths import bundled_snapshot_dir
from predictor.web import api
from predictor.web.catalog import Catalog
from tests.support.toy_harness import RESULTS, SCORES, TASKS, TOY, ToyTool

STORE = str(bundled_snapshot_dir())
STATIC = Path(api.__file__).parent / "static"


@pytest.fixture(autouse=True)
def _home(benchpress_home: Path) -> Path:
    return benchpress_home


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=STORE)


@pytest.fixture
def toy() -> Iterator[Harness]:
    with registered(TOY) as harness:
        yield harness


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main([*argv])
    except SystemExit as exc:  # --help and argparse's errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_toy(capsys: pytest.CaptureFixture[str], out: Path, *more: str) -> tuple[int, str, str]:
    argv = ["run", "toy-model", "--harness", "toy-eval", "--model-type", "echo"]
    return cli(capsys, *argv, "--out", str(out), "--no-progress", "--store", STORE, *more)


# ------------------------------------------------------------------------ the command line
def test_the_toy_is_offered_while_registered_and_only_then(
    toy: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "run", "--help")
    assert code == 0
    assert "--harness {inspect,lm-eval,toy-eval}" in out
    text = " ".join(out.split())
    assert "with lm-evaluation-harness, Inspect or the toy harness (the plan" in text
    assert "Inspect's openai-api, vllm, hf; ToyEval's echo (default:" in text
    code, out, _ = cli(capsys, "probes", "--help")
    assert code == 0 and "--runnable {lm-eval,inspect,toy-eval}" in out
    assert get_harness("TOY-EVAL") is toy and harnesses()[-1] is toy


def test_after_the_block_the_toy_is_gone(capsys: pytest.CaptureFixture[str]) -> None:
    with registered(TOY):
        pass
    assert harnesses() == HARNESSES
    code, _, err = cli(capsys, "run", "m", "--harness", "toy-eval", "--dry-run")
    assert code == 2 and "invalid choice: 'toy-eval'" in err
    with pytest.raises(ValueError, match=r"^harness must be 'lm_eval' or 'inspect', got 'toy'$"):
        get_harness("toy")
    with pytest.raises(TypeError, match="unexpected keyword argument 'toy'"):
        ProbeSet(default=(), low_cost=(), toy=("mmlu",))


def test_benchpress_run_plans_runs_and_resumes_through_the_toy(
    toy: Harness, bp: BenchPress, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    # the default probes: the snapshot's set selected among the toy's tasks
    probes = ProbeBenchmarks.runnable(bp, "toy")
    assert probes == tuple(bp.select_probes(k=5, runnable="toy-eval").benchmarks)
    assert len(probes) == 5 and set(probes) < set(TASKS)
    code, text, _ = run_toy(capsys, out, "--dry-run")
    assert code == 0
    lines = text.splitlines()
    assert lines[0] == f"plan: toy-model with ToyEval (echo), 5 probes, files in {out}"
    rows = [line.split() for line in lines if line.startswith(probes)]
    assert rows == [[b, TASKS[b], "8", "~400", "to", "run"] for b in probes]
    assert lines[-1] == "to run: 5 tasks, ~2k tokens, ~1 s at 2,000 tokens/s (estimates)"
    assert not out.exists()  # a dry run writes nothing

    code, _, err = run_toy(capsys, out, "--model-type", "ech")  # the tool's own check
    assert code == 2 and "the toy harness has no model type 'ech'" in err

    code, text, _ = run_toy(capsys, out, "--predict")
    assert code == 0, text
    for benchmark in probes:
        assert f"{benchmark} ({TASKS[benchmark]}): done" in text
        file = out / TASKS[benchmark] / RESULTS
        assert file.read_text().splitlines()[1] == f"toy-model,{benchmark},{SCORES[benchmark]}"
    assert "hle" in text.split("gsm8k (toy_gsm8k): done", 1)[1]  # the predictions follow

    code, text, _ = run_toy(capsys, out)
    assert code == 0
    assert "nothing to run: every task finished in an earlier run" in text
    shown = ", ".join(f"{b}={SCORES[b]:g}" for b in probes)
    assert f"probe scores: {shown}" in text

    scores = run_probe_benchmarks(
        "toy-model", harness="toy", out=out, model_type="echo", bp=bp, progress=False
    )
    assert dict(scores) == {b: SCORES[b] for b in probes}
    assert scores.resumed == list(probes) and scores.plan.harness == "toy"


# ------------------------------------------------------------------ probe tables and sets
def test_the_probe_tables_and_sets_pick_the_toy_up(
    toy: Harness, bp: BenchPress, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(
        capsys, "probes", "--runnable", "toy-eval", "--k", "2", "--json", "--store", STORE
    )
    assert code == 0
    payload = json.loads(out)
    picked = payload["benchmarks"]
    assert payload["tasks"] == [
        {"benchmark": b, "lm_eval_task": _lm_eval(b), "inspect_task": _inspect(b), "toy_task": t}
        for b, t in ((b, TASKS[b]) for b in picked)
    ]
    code, out, _ = cli(capsys, "probes", "--runnable", "toy-eval", "--k", "2", "--store", STORE)
    assert code == 0
    assert out.splitlines()[1].split()[-3:] == ["lm_eval_task", "inspect_task", "toy_task"]
    command = f"benchpress run MODEL --harness toy-eval --model-type TYPE --probes {picked[0]},"
    assert f"  {command}{picked[1]} --predict" in out.splitlines()

    frame = bp.what_to_run_next({"gpqa_diamond": 70.0}, top=3)
    assert frame.columns[-3:] == ["lm_eval_task", "inspect_task", "toy_task"]
    assert frame["toy_task"].to_list() == [TASKS.get(b) for b in frame["benchmark"]]

    sets = ProbeSet(default=("gpqa_diamond",), low_cost=(), toy=("mmlu", "gsm8k"))
    assert sets.runnable("toy-eval") == sets.runnable("toy", chat=True) == ("mmlu", "gsm8k")
    assert sets.runnable("lm_eval") == sets.lm_eval == ()


def _lm_eval(benchmark: str) -> str | None:
    return get_harness("lm_eval").tasks().get(benchmark)


def _inspect(benchmark: str) -> str | None:
    return get_harness("inspect").tasks().get(benchmark)


# ----------------------------------------------------------------------------- the page
def test_the_page_reads_the_toy_label_from_the_server(toy: Harness) -> None:
    catalog = Catalog(stores=[bundled_snapshot_dir()])
    answer: dict[str, Any] = api.handle(catalog, "/api/harnesses", {})
    assert answer == {
        "harnesses": [
            {"id": "lm_eval", "name": "lm-eval", "label": "lm-eval", "task_column": "lm_eval_task"},
            {"id": "inspect", "name": "inspect", "label": "Inspect", "task_column": "inspect_task"},
            {"id": "toy", "name": "toy-eval", "label": "ToyEval", "task_column": "toy_task"},
        ]
    }
    picked = api.handle(catalog, "/api/probes", {"k": "2", "targets": "reasoning"})
    assert [s["toy_task"] for s in picked["steps"]] == [TASKS.get(b) for b in picked["benchmarks"]]
    # the probe picker labels each task column as the server names it, none copied in
    script = (STATIC / "probes.js").read_text(encoding="utf-8")
    assert "/api/harnesses" in script
    assert not any(h.task_column in script or f"`{h.label} " in script for h in HARNESSES)


# ------------------------------------------------------------------------------ the registry
def test_a_harness_that_clashes_is_refused() -> None:
    same_name = Harness(**{**vars(TOY), "name": "lm-eval"})
    clash = "harnesses 'lm_eval' and 'toy' both use 'lm-eval'"
    with pytest.raises(ValueError, match=clash), registered(same_name):
        pass
    same_set = Harness(**{**vars(TOY), "aliases": ("lm_eval_chat",)})
    with pytest.raises(ValueError, match="both use 'lm_eval_chat'"), registered(same_set):
        pass
    assert harnesses() == HARNESSES


def test_a_harness_whose_tool_is_not_its_own_is_refused() -> None:
    """The descriptor and its class sit in one module: a tool of another name, or a class
    that is no `ProbeTool`, is a slip the registry names before anything runs."""
    renamed = replace(TOY, tool=type("Renamed", (ToyTool,), {"name": "other"}))
    with pytest.raises(TypeError, match="tool Renamed is not named so"), registered(renamed):
        pass
    not_a_tool = replace(TOY, tool=dict)
    with pytest.raises(TypeError, match="must be a ProbeTool class"), registered(not_a_tool):
        pass
    assert harnesses() == HARNESSES


@pytest.mark.parametrize("harness", HARNESSES, ids=lambda h: h.id)
def test_each_built_in_harness_names_its_tool_and_extra(harness: Harness) -> None:
    tool = harness.tool
    assert issubclass(tool, ProbeTool) and tool.name == harness.id
    assert EXTRA_OF[harness.package] == harness.extra  # the extra `pip install` names
    tasks = harness.runnable_tasks().values()
    assert tasks and all(harness.facts(task) for task in tasks)  # the plan sizes each


def test_every_task_fact_belongs_to_a_built_in_harness() -> None:
    """The facts table and the tasks that run the model's code name harnesses by their id."""
    ids = {h.id for h in HARNESSES}
    assert {tool for tool, _ in load_facts()} == ids
    assert {tool for tool, _ in RUNS_MODEL_CODE} <= ids
