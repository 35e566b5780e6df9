"""`benchpress run --items N` (`run_probe_benchmarks(items=N)`): a seeded random subset of each
task's items, run for real with lm-evaluation-harness against the loopback OpenAI-compatible
server (`tests/support/openai_server.py`) and lm-eval's `dummy` model, and with Inspect's
`mockllm`. The subset is recorded in the results file, its score is a usable probe with its
standard error (not a `--limit` smoke test), re-running resumes and a larger N extends the
same items.

The tasks are local: `bp_probe_wide` asks 240 "What is A + B?" questions (A = i, B = 7i mod
11 for item i), and the group `bp_probe_parts` splits the same questions into two tasks of
150 and 90. The server answers wrong when A + B leaves 1 when divided by 3, so the score of
any set of items is known from which items they are."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from predictor.cli.main import main
from predictor.harnesses import registered
from predictor.results import ResultsError, read_results
from predictor.util.item_subsets import ItemSubset, draw
from predictor.util.paths import bundled_snapshot_dir
from predictor.values import Measured
from tests.support.openai_server import OpenAIServer, decode
from tests.support.probe_runs import render_tasks, run_cli, run_environment, table_after
from tests.support.toy_harness import TOY

pytest_plugins = ["tests.support.openai_server_fixtures"]
pytestmark = pytest.mark.slow
MODELS = ("m", "plumbing")
ITEMS = 240
PARTS = {"bp_probe_part_a": range(0, 150), "bp_probe_part_b": range(150, 240)}
TASK_YAML = """task: {task}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["\\n"]
  max_gen_toks: 16
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: true
metadata:
  version: 1.0
"""
GROUP_YAML = """group: bp_probe_parts
task:
  - bp_probe_part_a
  - bp_probe_part_b
aggregate_metric_list:
  - metric: exact_match
    aggregation: mean
    weight_by_size: true
metadata:
  version: 1.0
"""
QUESTION = re.compile(r"What is (\d+) \+ (\d+)\?")


def question(i: int) -> tuple[int, int]:
    return i, (i * 7) % 11


def right(i: int) -> bool:
    """Whether the server answers item i right (the module docstring)."""
    return sum(question(i)) % 3 != 1


def items_file(path: Path, items) -> Path:
    lines = []
    for i in items:
        a, b = question(i)
        lines.append(json.dumps({"question": f"What is {a} + {b}?", "answer": str(a + b)}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = render_tasks(tmp_path_factory.mktemp("probe_tasks") / "tasks")
    wide = items_file(folder / "wide.jsonl", range(ITEMS))
    (folder / "bp_probe_wide.yaml").write_text(TASK_YAML.format(task="bp_probe_wide", data=wide))
    for task, items in PARTS.items():
        data = items_file(folder / f"{task}.jsonl", items)
        (folder / f"{task}.yaml").write_text(TASK_YAML.format(task=task, data=data))
    (folder / "bp_probe_parts.yaml").write_text(GROUP_YAML)
    return folder


@pytest.fixture(scope="module")
def server():
    with OpenAIServer(model_names=MODELS) as started:
        yield started


def asked(server: OpenAIServer, since: int) -> list[int]:
    """The items the server was asked, by their A (item i asks "What is i + ...?")."""
    found = []
    for record in server.requests[since:]:
        if record.path == "/v1/completions":
            prompts = record.payload["prompt"]  # token ids (lm-eval's remote tokenizer)
            for prompt in prompts if isinstance(prompts[0], list) else [prompts]:
                found.append(int(QUESTION.findall(decode(prompt))[-1][0]))
    return sorted(found)


def probe_line(stdout: str) -> str:
    (line,) = [x for x in stdout.splitlines() if x.startswith("probe scores: ")]
    return line


def test_items_100_runs_a_recorded_subset_that_resumes_and_extends(
    tmp_path: Path, tasks: Path, server: OpenAIServer
) -> None:
    env = run_environment(tmp_path, tasks)
    args = ["run", "m", "--model-type", "local-completions", "--probes", "gsm8k"]
    args += ["--model-args", f"base_url={server.completions_url}", "--out", "runs/m"]
    args += ["--task", "gsm8k=bp_probe_wide"]
    before = len(server.requests)
    first = run_cli([*args, "--items", "100"], env, tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    out = first.stdout
    assert out.splitlines()[0] == (
        "plan: m with lm-eval (local-completions), 1 probe, 100 items per task (a seeded "
        "random subset, seed 0), files in runs/m/items-100"
    )
    (row,) = table_after(out, "benchmark task")[1:]
    assert row.split()[:5] == ["gsm8k", "bp_probe_wide", "100", "of", "240"]
    # exactly the drawn items were asked, once each: the subset the file records
    hundred = draw(ItemSubset(100), {"bp_probe_wide": ITEMS})["bp_probe_wide"]
    assert asked(server, before) == hundred
    assert sum(map(right, hundred)) == 69  # so the score is 69.0
    assert "scores from a seeded random subset of the items (--items 100, seed 0): usable " in out
    assert probe_line(out) == "probe scores: gsm8k=69.0 ±4.6 (100 of 240 items)"
    assert "predict from them: benchpress predict --from runs/m/items-100 --map " in out
    assert "--allow-limited" not in out
    (file,) = (tmp_path / "runs" / "m" / "items-100" / "bp_probe_wide").glob("results_*.json")
    doc = json.loads(file.read_text())
    record = doc["benchpress_subset"]
    assert {k: record[k] for k in ("seed", "items", "total", "scored")} == {
        "seed": 0,
        "items": 100,
        "total": 240,
        "scored": 100,
    }
    assert record["indices"] == {"bp_probe_wide": hundred}
    assert doc["n-samples"]["bp_probe_wide"] == {"original": 240, "effective": 100}
    frame = read_results(file, {("bp_probe_wide", None): "gsm8k"})
    (read,) = frame.filter(frame["status"] == "mapped").to_dicts()
    assert (read["score"], read["n"], read["items_total"]) == (69.0, 100, 240)
    assert read["limited"] is False
    assert read["stderr"] == pytest.approx(100 * (0.69 * 0.31 / 99) ** 0.5)  # lm-eval's own
    assert read["subset"] == f"seed 0, sha256 {record['sha256'][:12]}"

    # the same command again: nothing is asked, the same scores are read
    again_before = len(server.requests)
    again = run_cli([*args, "--items", "100"], env, tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(server.requests) == again_before
    assert "nothing to run" in again.stdout
    assert probe_line(again.stdout) == probe_line(out)

    # a full run is not taken from the subset's file, nor another seed's subset
    full = run_cli([*args, "--out", "runs/m/items-100", "--dry-run"], env, tmp_path)
    assert table_after(full.stdout, "benchmark task")[1].split()[-2:] == ["to", "run"]
    seeded = run_cli([*args, "--items", "100", "--items-seed", "1", "--dry-run"], env, tmp_path)
    assert "seed 1), files in runs/m/items-100-seed-1" in seeded.stdout.splitlines()[0]
    assert table_after(seeded.stdout, "benchmark task")[1].split()[-2:] == ["to", "run"]

    # 150 items: the 100 again and 50 more, in a folder of their own
    more_before = len(server.requests)
    more = run_cli([*args, "--items", "150"], env, tmp_path)
    assert more.returncode == 0, more.stderr[-3000:]
    extended = asked(server, more_before)
    assert len(extended) == 150 and set(hundred) < set(extended)
    assert extended == draw(ItemSubset(150), {"bp_probe_wide": ITEMS})["bp_probe_wide"]
    assert sum(map(right, extended)) == 101
    assert probe_line(more.stdout) == "probe scores: gsm8k=67.3 ±3.8 (150 of 240 items)"

    # the whole folder: the larger subset's score, the smaller one listed as not used
    both = run_cli(
        ["predict", "--from", "runs/m", "--map", "bp_probe_wide=gsm8k", "--targets", "hle"],
        env,
        tmp_path,
    )
    assert both.returncode == 0, both.stderr[-3000:]
    lines = both.stdout.splitlines()
    assert lines[0] == (
        "read 2 files (lm_eval) for m: 1 score used: gsm8k=67.3 ±3.8 (150 of 240 items)"
    )
    assert lines[1] == (
        "subset scores not used (a run over more items is): gsm8k (100 of 240 items, "
        f"{file.relative_to(tmp_path)})"
    )

    # stored as a private model: usable without --allow-limited, with the subset recorded
    stored = run_cli([*args, "--items", "150", "--add", "sub"], env, tmp_path)
    assert stored.returncode == 0, stored.stderr[-3000:]
    shown = run_cli(["models", "show", "sub", "--json"], env, tmp_path)
    (cell,) = [c for c in json.loads(shown.stdout)["cells"] if c["status"] == "mapped"]
    assert (cell["n"], cell["items_total"], cell["limited"]) == (150, 240, False)
    assert cell["subset"].startswith("seed 0, sha256 ")


def test_the_dummy_model_runs_subsets_of_a_task_and_of_a_group(
    tmp_path: Path, tasks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from predictor.api import BenchPress
    from predictor.runs import run_probe_benchmarks

    for key, value in run_environment(tmp_path, tasks, BENCHPRESS_PROBE_TASKS="").items():
        monkeypatch.setenv(key, value)

    def run(items: int):
        return run_probe_benchmarks(
            "plumbing",
            "gsm8k,gpqa_diamond",
            model_type="dummy",
            tasks={"gsm8k": "bp_probe_wide", "gpqa_diamond": "bp_probe_parts"},
            include_path=tasks,
            out=tmp_path / "runs",
            progress=False,
            items=items,
        )

    scores = run(100)
    # lm-eval's dummy model answers "lol": 0 of every subset, with lm-eval's stderr of 0
    assert dict(scores) == {"gsm8k": Measured(0.0, 0.0), "gpqa_diamond": Measured(0.0, 0.0)}
    assert {b: (s["items"], s["items_total"]) for b, s in scores.subsets.items()} == {
        "gsm8k": (100, 240),
        "gpqa_diamond": (100, 240),
    }
    assert scores.plan.out == tmp_path / "runs" / "items-100"
    doc = json.loads(scores.files["gpqa_diamond"].read_text())
    indices = doc["benchpress_subset"]["indices"]
    assert indices == draw(ItemSubset(100), {t: len(r) for t, r in PARTS.items()})
    assert {t: len(v) for t, v in indices.items()} == {"bp_probe_part_a": 64, "bp_probe_part_b": 36}
    assert {t: c["effective"] for t, c in doc["n-samples"].items()} == {
        "bp_probe_part_a": 64,
        "bp_probe_part_b": 36,
    }
    # a usable probe: predict takes it as it is (no allow_limited), its error with it
    predictions = BenchPress.load().predict(scores, targets="hle")
    assert predictions.stderr == {"gsm8k": 0.0, "gpqa_diamond": 0.0}
    assert run(100).resumed == ["gsm8k", "gpqa_diamond"]

    # the file's record is checked against what lm-eval says ran
    edited = tmp_path / "edited" / "results_edited.json"
    edited.parent.mkdir()
    source = json.loads(scores.files["gsm8k"].read_text())
    source["benchpress_subset"]["indices"]["bp_probe_wide"].pop()
    edited.write_text(json.dumps(source))
    with pytest.raises(ResultsError) as caught:
        read_results(edited)
    assert str(caught.value) == (
        f"{edited}, benchpress_subset.sha256: a broken subset record: the digest does not "
        "match the indices (was the file edited?) (benchpress run --items writes it; was the "
        "file edited? re-run the task)"
    )
    # lm-eval's own samples= run, without a record: still a subset, said to be unrecorded
    del source["benchpress_subset"]
    edited.write_text(json.dumps(source))
    (row,) = read_results(edited).to_dicts()
    assert (row["n"], row["items_total"], row["limited"]) == (100, 240, False)
    assert row["subset"] == "not recorded (items chosen outside benchpress)"


def test_inspect_runs_a_subset_by_sample_id_and_extends_it(
    tmp_path: Path, tasks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inspect's `mockllm` answers every question right, writing down each question (the
    task runs in a process of its own); the run's log names the samples."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage

    from predictor.runs import run_probe_benchmarks

    for key, value in run_environment(tmp_path, tasks, BENCHPRESS_PROBE_TASKS="").items():
        monkeypatch.setenv(key, value)
    questions = tmp_path / "asked.txt"

    def seen() -> list[str]:
        return questions.read_text().splitlines() if questions.exists() else []

    def reply(messages, tools, tool_choice, config):
        a, b = (int(x) for x in QUESTION.findall(messages[-1].text)[-1])
        with questions.open("a") as log:
            log.write(f"{a} + {b}\n")
        output = ModelOutput.from_content(model="mockllm/model", content=str(a + b))
        output.usage = ModelUsage(input_tokens=9, output_tokens=1, total_tokens=10)
        return output

    def run(items: int):
        return run_probe_benchmarks(
            "inspected",
            "gsm8k",
            harness="inspect",
            model_type="mockllm",
            model_args={"custom_outputs": reply},
            tasks={"gsm8k": "inspect_tasks.py@bp_probe_qa"},
            include_path=tasks,
            out=tmp_path / "runs",
            progress=False,
            items=items,
        )

    scores = run(3)
    # the fixture's eight items are "What is k + ...?" for k = 2..9, item k - 2
    chosen = draw(ItemSubset(3), {"bp_probe_qa": 8})["bp_probe_qa"]
    assert chosen == [0, 1, 4]
    assert sorted(int(s.split(" + ")[0]) - 2 for s in seen()) == chosen
    assert dict(scores) == {"gsm8k": Measured(100.0, 0.0)}
    assert scores.subsets["gsm8k"]["items"] == 3 and scores.subsets["gsm8k"]["items_total"] == 8
    log = read_eval_log(str(scores.files["gsm8k"]), header_only=True)
    assert log.eval.config.sample_id == [i + 1 for i in chosen]  # Inspect's own ids: 1 to 8
    assert log.eval.metadata["benchpress_subset"]["indices"] == {"bp_probe_qa": chosen}
    again = run(3)
    assert again.resumed == ["gsm8k"] and len(seen()) == 3
    run(5)
    assert len(seen()) == 3 + 5 and set(seen()[:3]) < set(seen()[3:])


def test_the_plan_sizes_a_subset_and_items_is_no_limit(tmp_path: Path) -> None:
    env = run_environment(tmp_path, tmp_path, BENCHPRESS_PROBE_TASKS="")
    base = ["run", "m", "--model-type", "local-completions", "--out", "runs/m"]
    base += ["--model-args", "base_url=http://127.0.0.1:9/v1/completions"]
    base += ["--probes", "mmlu,gpqa_diamond", "--dry-run", "--items", "100"]
    done = run_cli(base, env, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert table_after(done.stdout, "benchmark task") == [
        "benchmark     task                       items         shots  tokens  status",
        "mmlu          mmlu                       100 of 14042  0      ~50k    to run",
        "gpqa_diamond  gpqa_diamond_cot_zeroshot  100 of 198    0      ~150k   to run",
    ]
    assert "to run: 2 tasks, ~200k tokens, ~2 min at 2,000 tokens/s (estimates)" in done.stdout
    both = run_cli([*base, "--limit", "5"], env, tmp_path)
    assert both.returncode == 2
    assert both.stderr.strip().splitlines()[-1] == (
        "benchpress: error: --items and --limit (items=, limit=) cannot go together: --items "
        "runs a seeded random subset (usable probes), --limit the first items (a smoke test)"
    )


def test_a_harness_that_runs_no_subsets_refuses_items(
    benchpress_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "toy-model", "--harness", "toy-eval", "--model-type", "echo", "--dry-run"]
    with registered(TOY):
        code = main([*argv, "--items", "5", "--store", str(bundled_snapshot_dir())])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "benchpress: error: items: ToyEval cannot run a subset of a task's items"
    )
