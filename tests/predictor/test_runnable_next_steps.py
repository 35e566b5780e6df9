"""Runnable next steps: `probes` and `next` name the lm-eval and Inspect task of each proposed
benchmark and print ready command lines, and what those commands write is read back by the
`benchpress predict --from` they end with (the loop closes)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import polars as pl
import pytest

from predictor import BenchPress
from predictor.cli import main
from predictor.results import load_map
from predictor.results.runnable import inspect_task, lm_eval_task, next_steps, preferred_tasks
from predictor.trust import select_probes_for, what_to_run_next
from predictor.util.paths import bundled_snapshot_dir

STORE = str(bundled_snapshot_dir())
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "eval_formats"
LM_EVAL_FILE = FIXTURES / "lm_eval" / "results_2026-01-21T03-44-18.458309.json"
INSPECT_LOG = FIXTURES / "inspect" / "data_arc_sonnet.json"
ALLOW = "open_llm_gpqa,mmlu_pro,hle,gsm8k"
LM_EVAL = "lm_eval --model hf --model_args pretrained=YOUR_MODEL --tasks {} --output_path results/"
INSPECT = "inspect eval {} --model PROVIDER/MODEL --log-dir results/"


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=STORE)


@pytest.fixture(autouse=True)
def _home(benchpress_home: Path) -> Path:
    return benchpress_home


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--store", STORE])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------------------- the tables
@pytest.mark.parametrize(
    ("benchmark", "lm_eval", "inspect"),
    [
        ("open_llm_gpqa", "leaderboard_gpqa", None),  # the leaderboard's own task
        ("open_llm_mmlu_pro", "leaderboard_mmlu_pro", None),
        ("mmlu_pro", "mmlu_pro", "inspect_evals/mmlu_pro"),  # the task named as the benchmark
        ("gsm8k", "gsm8k_cot", "inspect_evals/gsm8k"),  # the reviewed closest setup
        ("gpqa_diamond", "gpqa_diamond_cot_zeroshot", "inspect_evals/gpqa_diamond"),
        ("bigbench_hard", "bbh", None),
        ("mmlu", "mmlu", "inspect_evals/mmlu_0_shot"),
        ("hle", None, None),
    ],
)
def test_each_benchmark_has_one_preferred_task(benchmark, lm_eval, inspect) -> None:
    assert (lm_eval_task(benchmark), inspect_task(benchmark)) == (lm_eval, inspect)


@pytest.mark.parametrize("fmt", ["lm_eval", "inspect"])
def test_every_preferred_task_maps_back_onto_its_benchmark(bp: BenchPress, fmt: str) -> None:
    table = load_map(fmt)
    chosen = preferred_tasks(fmt)
    mapped = {e.benchmark_id for entries in table.values() for e in entries if e.benchmark_id}
    assert set(chosen) == mapped  # every benchmark a task of the table scores
    for benchmark, task in chosen.items():
        assert benchmark in {e.benchmark_id for e in table[task]}
        assert benchmark in bp.benchmarks


def test_next_steps_lines() -> None:
    steps = next_steps(["open_llm_gpqa", "mmlu_pro", "hle"], predict_args=["--scores", "a=1"])
    assert steps.lines() == [
        "to run them with lm-eval:",
        "  " + LM_EVAL.format("leaderboard_gpqa,mmlu_pro"),
        "or with Inspect:",
        "  " + INSPECT.format("inspect_evals/mmlu_pro"),
        "then predict from what they write:",
        "  benchpress predict --from results/ --scores a=1",
    ]
    assert steps.unknown == ["hle"]
    assert next_steps(["hle"]).lines() == []  # nothing runnable: no commands at all
    assert next_steps(["simpleqa_verified"]).unregistered == ["simpleqa_verified"]


def test_next_steps_for_a_chat_endpoint_run_generative_tasks_with_its_template() -> None:
    steps = next_steps(["arc_challenge", "gsm8k"], chat_model_type="local-chat-completions")
    assert steps.lm_eval == (
        "lm_eval --model local-chat-completions --model_args "
        "model=YOUR_MODEL,base_url=YOUR_ENDPOINT --apply_chat_template "
        "--tasks arc_challenge_chat,gsm8k_cot --output_path results/"
    )
    # a local Hugging Face model scores ARC-Challenge by log-likelihood, as the matrix does
    assert "--tasks arc_challenge,gsm8k_cot " in next_steps(["arc_challenge", "gsm8k"]).lm_eval


# ---------------------------------------------------------------------------- probes, next
def test_probes_print_task_names_and_commands(capsys, bp: BenchPress) -> None:
    argv = ["probes", "--k", "3", "--targets", "reasoning", "--allow", ALLOW]
    code, out, err = cli(capsys, *argv)
    assert code == 0, err
    picked = select_probes_for(bp, k=3, targets="reasoning", allowlist=ALLOW.split(","))
    assert picked.benchmarks == ["mmlu_pro", "hle", "gsm8k"]
    lines = out.splitlines()
    assert lines[1].split()[-2:] == ["lm_eval_task", "inspect_task"]
    assert [line.split()[:2] + line.split()[5:] for line in lines[2:5]] == [
        ["1", "mmlu_pro", "mmlu_pro", "inspect_evals/mmlu_pro"],
        ["2", "hle"],
        ["3", "gsm8k", "gsm8k_cot", "inspect_evals/gsm8k"],
    ]
    assert lines[5:] == [
        "",
        "to run them with lm-eval:",
        "  " + LM_EVAL.format("mmlu_pro,gsm8k_cot"),
        "or with Inspect:",
        "  " + INSPECT.format("inspect_evals/mmlu_pro"),
        "  " + INSPECT.format("inspect_evals/gsm8k"),
        "then predict from what they write:",
        "  benchpress predict --from results/",
        "no lm-eval or Inspect task known for: hle",
    ]

    code, out, _ = cli(capsys, *argv, "--csv")
    got = pl.read_csv(out.encode(), schema_overrides={"lm_eval_task": pl.String})
    assert got.columns[-2:] == ["lm_eval_task", "inspect_task"]
    assert got["lm_eval_task"].to_list() == ["mmlu_pro", None, "gsm8k_cot"]
    code, out, _ = cli(capsys, *argv, "--json")
    doc = json.loads(out)
    assert doc["commands"]["lm_eval"] == LM_EVAL.format("mmlu_pro,gsm8k_cot")
    assert doc["commands"]["no_known_task"] == ["hle"]
    assert doc["tasks"][1] == {"benchmark": "hle", "lm_eval_task": None, "inspect_task": None}


def test_next_prints_commands_that_keep_the_known_scores(capsys, bp: BenchPress) -> None:
    argv = ["next", "--scores", "gpqa_diamond=45,hle=10", "--targets", "chat", "--top", "3"]
    code, out, err = cli(capsys, *argv, "--budget", "1")
    assert code == 0, err
    expected = what_to_run_next(bp, {"gpqa_diamond": 45, "hle": 10}, "chat", budget=1, top=3)
    assert "ifeval" in expected["benchmark"].to_list()  # the one with tool tasks
    assert expected.filter(pl.col("benchmark") == "ifeval").select(
        "lm_eval_task", "inspect_task"
    ).row(0) == ("ifeval", "inspect_evals/ifeval")
    assert out.splitlines()[-7:] == [
        "to run them with lm-eval:",
        "  " + LM_EVAL.format("ifeval"),
        "or with Inspect:",
        "  " + INSPECT.format("inspect_evals/ifeval"),
        "then predict from what they write:",
        "  benchpress predict --from results/ --scores gpqa_diamond=45,hle=10",
        "no lm-eval or Inspect task known for: "
        + ", ".join(b for b in expected["benchmark"].to_list() if b != "ifeval"),
    ]


# ---------------------------------------------------------------------------- closing the loop
def _lm_eval_results(tasks: list[str], values: dict[str, float], model: str) -> dict:
    """The real results file, rewritten as lm-eval writes a run of `tasks` for `model`."""
    doc = json.loads(LM_EVAL_FILE.read_text(encoding="utf-8"))
    config = next(iter(doc["configs"].values()))
    for key in ("results", "configs", "versions", "n-shot", "higher_is_better", "n-samples"):
        doc[key] = {}
    for task in tasks:
        metric = load_map("lm_eval")[task][0].metric
        name, _, filt = metric.partition(",")
        doc["results"][task] = {"alias": task, metric: values[task], f"{name}_stderr,{filt}": 0.01}
        meta = {**config["metadata"], "pretrained": model}
        doc["configs"][task] = {**config, "task": task, "metadata": meta}
        doc["versions"][task] = 1.0
        doc["n-shot"][task] = 0
        doc["higher_is_better"][task] = {name: True}
        doc["n-samples"][task] = {"original": 100, "effective": 100}
    doc["group_subtasks"] = {t: [] for t in tasks}
    doc["model_name"] = model
    doc["config"] = {**doc["config"], "model_args": f"pretrained={model}"}
    return doc


def test_what_the_lm_eval_command_writes_predict_reads_back(
    capsys, bp: BenchPress, tmp_path: Path, monkeypatch
) -> None:
    argv = ["probes", "--k", "3", "--targets", "reasoning", "--allow", ALLOW, "--json"]
    code, out, _ = cli(capsys, *argv)
    commands = json.loads(out)["commands"]
    command = shlex.split(commands["lm_eval"])
    tasks = command[command.index("--tasks") + 1].split(",")
    assert tasks and command[command.index("--output_path") + 1] == "results/"
    values = {task: 0.3 + 0.1 * k for k, task in enumerate(tasks)}
    run = tmp_path / "results" / "me__mine"  # where lm-eval puts one model's results
    run.mkdir(parents=True)
    doc = _lm_eval_results(tasks, values, "me/mine")
    (run / "results_2026-02-01T10-00-00.000000.json").write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path)
    predict = shlex.split(commands["predict"])
    assert predict[:2] == ["benchpress", "predict"]
    code, out, err = cli(capsys, *predict[1:], "--json")
    assert code == 0, err
    used = json.loads(out)["inputs"]["used"]
    by_task = {task: benchmark for benchmark, task in preferred_tasks("lm_eval").items()}
    assert [(r["benchmark_id"], r["task"], r["score"]) for r in used] == [
        (by_task[t], t, pytest.approx(100 * values[t])) for t in tasks
    ]
    scores = {by_task[t]: 100 * values[t] for t in tasks}
    rows = {r["benchmark"]: r for r in json.loads(out)["predictions"]}
    for benchmark, prediction in bp.predict(scores).items():
        assert rows[benchmark]["score"] == pytest.approx(prediction.score, abs=1e-9)


def test_what_the_inspect_command_writes_predict_reads_back(
    capsys, bp: BenchPress, tmp_path: Path, monkeypatch
) -> None:
    steps = next_steps(["gpqa_diamond"])
    (line,) = steps.inspect
    task = shlex.split(line)[2]
    log = json.loads(INSPECT_LOG.read_text(encoding="utf-8"))  # a real log, another task
    log["eval"]["task"] = task
    log["eval"]["config"]["limit"] = None  # it ran 5 samples: a smoke test `predict` refuses
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "2026-02-01T10-00-00_gpqa-diamond.json").write_text(json.dumps(log))
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, *shlex.split(steps.predict)[1:], "--targets", "mmlu_pro")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (
        "read 1 file (inspect) for anthropic/claude-sonnet-4-0: 1 score used: gpqa_diamond=100"
    )
    note = next(e.note for e in load_map("inspect")[task] if e.benchmark_id == "gpqa_diamond")
    assert lines[1] == f"note: gpqa_diamond: {note}"  # another harness than the matrix's
