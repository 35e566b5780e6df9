"""The lm-evaluation-harness reader on the vendored real results file, files derived from it,
and the reviewed mapping tables (lm-eval and Inspect).

Files written fresh by the installed lm-eval are read in test_fresh_tool_files.py."""

from __future__ import annotations

import copy
import csv
import hashlib
import json
from pathlib import Path

import pytest

from predictor.results import ResultsError, read_results
from predictor.results import lm_eval as reader
from predictor.results.mapping import MAP_COLUMNS, MAPS_DIR, TRANSFORMS
from predictor.results.paths import ResultFile

REPO = Path(__file__).resolve().parents[2]
VENDORED = REPO / "tests/fixtures/eval_formats/lm_eval/results_2026-01-21T03-44-18.458309.json"
MODEL = "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"
BENCHMARKS_CSV = REPO / "pipelines/identity/benchmarks.csv"
COLUMNS = (
    "model",
    "task",
    "metric",
    "raw_score",
    "unit",
    "n",
    "n_shot",
    "group",
    "status",
    "benchmark_id",
    "score",
    "stderr",
    "note",
    "tool",
    "tool_version",
    "evaluated_at",
)


def vendored() -> dict:
    return json.loads(VENDORED.read_bytes())


def write(tmp_path: Path, doc: dict | str, name: str = "results_x.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return path


def rows(frame, columns=COLUMNS) -> list[dict]:
    return frame.select(columns).to_dicts()


def test_vendored_file_rows_are_pinned() -> None:
    frame = read_results(VENDORED)
    common = {
        "model": MODEL,
        "unit": "fraction",
        "n": 5000,
        "n_shot": 0,
        "group": None,
        "status": "unmapped",
        "benchmark_id": None,
        "score": None,
        "stderr": None,
        "note": None,
        "tool": "lm-evaluation-harness",
        "tool_version": "0.4.9.2",
        "evaluated_at": "2026-01-21T02:59:43+00:00",
    }
    assert rows(frame) == [
        {**common, "task": "math_perturbed_full", "metric": "exact_match,none", "raw_score": 0.0},
        {
            **common,
            "task": "math_rephrased_full",
            "metric": "exact_match,none",
            "raw_score": 0.0004,
        },
    ]
    assert set(frame["file"]) == {str(VENDORED)}
    assert set(frame["file_sha256"]) == {hashlib.sha256(VENDORED.read_bytes()).hexdigest()}
    assert set(frame["format"]) == {"lm_eval"}


def test_vendored_file_raw_rows_keep_stderr_and_filter() -> None:
    file = ResultFile(str(VENDORED), VENDORED.read_bytes())
    raws = reader.read(file, json.loads(file.data))
    assert [(r.task, r.metric, r.value, r.stderr, r.lower_is_better) for r in raws] == [
        ("math_perturbed_full", "exact_match,none", 0.0, 0.0, False),
        ("math_rephrased_full", "exact_match,none", 0.0004, 0.0002828144211304471, False),
    ]
    assert raws[1].extra == {"filter": "none", "alias": "math_rephrased_full", "task_version": 1.0}


def test_a_mapped_task_gets_our_benchmark_percent_score_and_note(tmp_path: Path) -> None:
    """The vendored file with one task renamed to lm-eval's `minerva_math`."""
    doc = vendored()
    for key in ("results", "n-shot", "n-samples", "versions", "configs", "higher_is_better"):
        doc[key]["minerva_math"] = doc[key].pop("math_rephrased_full")
    frame = read_results(write(tmp_path, doc))
    mapped = frame.filter(frame["task"] == "minerva_math").to_dicts()[0]
    assert mapped["status"] == "mapped"
    assert mapped["benchmark_id"] == "math"
    assert mapped["score"] == pytest.approx(0.04)
    assert mapped["stderr"] == pytest.approx(0.02828144211304471)
    assert mapped["note"].startswith("4-shot Minerva prompt")


def mmlu_like() -> dict:
    """A hand-made file in lm-eval 0.4.13's layout (as its fresh files show): a group with
    one level of subgroups, `groups` repeating them, and a group's `sample_count`."""
    sub = {
        "mmlu_formal_logic": (0.25, 126),
        "mmlu_world_religions": (0.5, 171),
        "mmlu_anatomy": (0.4, 135),
    }
    results = {
        task: {"alias": task, "acc,none": acc, "acc_stderr,none": 0.03}
        for task, (acc, _) in sub.items()
    }
    groups = {
        "mmlu": {
            "alias": "mmlu",
            "acc,none": 0.39,
            "acc_stderr,none": "N/A",
            "sample_count": {"acc,none": 432},
        },
        "mmlu_humanities": {"alias": " - humanities", "acc,none": 0.39, "acc_stderr,none": 0.02},
        "mmlu_stem": {"alias": " - stem", "acc,none": 0.4, "acc_stderr,none": 0.04},
    }
    return {
        "results": {**results, **groups},
        "groups": copy.deepcopy(groups),
        "group_subtasks": {
            "mmlu_humanities": ["mmlu_formal_logic", "mmlu_world_religions"],
            "mmlu_stem": ["mmlu_anatomy"],
            "mmlu": ["mmlu_humanities", "mmlu_stem"],
        },
        "configs": {t: {"task": t, "metadata": {"pretrained": "org/model-7b"}} for t in sub},
        "versions": {t: 1.0 for t in sub},
        "n-shot": {t: 5 for t in sub},
        "n-samples": {t: {"original": n, "effective": n} for t, (_, n) in sub.items()},
        "higher_is_better": {t: {"acc": True} for t in [*sub, *groups]},
        "config": {"model": "hf", "model_args": {"pretrained": "org/model-7b"}},
        "date": 1700000000.5,
        "lm_eval_version": "0.4.13",
        "model_name": "org/model-7b",
    }


def test_group_score_is_the_benchmark_and_subtasks_name_their_group(tmp_path: Path) -> None:
    frame = read_results(write(tmp_path, mmlu_like()))
    got = rows(
        frame,
        (
            "task",
            "metric",
            "raw_score",
            "n",
            "n_shot",
            "group",
            "status",
            "benchmark_id",
            "score",
            "stderr",
        ),
    )
    assert got == [
        {
            "task": "mmlu_formal_logic",
            "metric": "acc,none",
            "raw_score": 0.25,
            "n": 126,
            "n_shot": 5,
            "group": "mmlu_humanities",
            "status": "unmapped",
            "benchmark_id": None,
            "score": None,
            "stderr": None,
        },
        {
            "task": "mmlu_world_religions",
            "metric": "acc,none",
            "raw_score": 0.5,
            "n": 171,
            "n_shot": 5,
            "group": "mmlu_humanities",
            "status": "unmapped",
            "benchmark_id": None,
            "score": None,
            "stderr": None,
        },
        {
            "task": "mmlu_anatomy",
            "metric": "acc,none",
            "raw_score": 0.4,
            "n": 135,
            "n_shot": 5,
            "group": "mmlu_stem",
            "status": "unmapped",
            "benchmark_id": None,
            "score": None,
            "stderr": None,
        },
        {
            "task": "mmlu",
            "metric": "acc,none",
            "raw_score": 0.39,
            "n": 432,
            "n_shot": 5,
            "group": None,
            "status": "mapped",
            "benchmark_id": "mmlu",
            "score": 39.0,
            "stderr": None,
        },
        {
            "task": "mmlu_humanities",
            "metric": "acc,none",
            "raw_score": 0.39,
            "n": 297,
            "n_shot": 5,
            "group": "mmlu",
            "status": "unmapped",
            "benchmark_id": None,
            "score": None,
            "stderr": None,
        },
        {
            "task": "mmlu_stem",
            "metric": "acc,none",
            "raw_score": 0.4,
            "n": 135,
            "n_shot": 5,
            "group": "mmlu",
            "status": "unmapped",
            "benchmark_id": None,
            "score": None,
            "stderr": None,
        },
    ]
    mmlu = frame.filter(frame["task"] == "mmlu").to_dicts()[0]
    assert "the matrix's MMLU numbers are mostly 5-shot" in mmlu["note"]
    assert mmlu["evaluated_at"] == "2023-11-14T22:13:20+00:00"


def test_ifeval_mean_of_strict_accuracies_is_the_open_llm_value(tmp_path: Path) -> None:
    doc = vendored()
    doc["results"] = {
        "leaderboard_ifeval": {
            "alias": "leaderboard_ifeval",
            "prompt_level_strict_acc,none": 0.7,
            "prompt_level_strict_acc_stderr,none": 0.02,
            "inst_level_strict_acc,none": 0.8,
            "inst_level_strict_acc_stderr,none": "N/A",
        }
    }
    doc["group_subtasks"], doc["configs"] = {}, {}
    frame = read_results(write(tmp_path, doc))
    assert rows(frame, ("metric", "raw_score", "status", "benchmark_id", "score")) == [
        {
            "metric": "prompt_level_strict_acc,none",
            "raw_score": 0.7,
            "status": "other_metric",
            "benchmark_id": None,
            "score": None,
        },
        {
            "metric": "inst_level_strict_acc,none",
            "raw_score": 0.8,
            "status": "other_metric",
            "benchmark_id": None,
            "score": None,
        },
        {
            "metric": "strict_acc_mean,none",
            "raw_score": pytest.approx(0.75),
            "status": "mapped",
            "benchmark_id": "open_llm_ifeval",
            "score": pytest.approx(75.0),
        },
    ]
    file = ResultFile("x.json", json.dumps(doc).encode())
    raws = {r.metric: r for r in reader.read(file, doc)}
    assert raws["inst_level_strict_acc,none"].stderr is None  # "N/A"
    assert raws["strict_acc_mean,none"].extra["derived_from"] == [
        "prompt_level_strict_acc,none",
        "inst_level_strict_acc,none",
    ]


def test_a_perplexity_is_a_value_and_is_not_range_checked(tmp_path: Path) -> None:
    doc = vendored()
    doc["results"]["math_perturbed_full"]["word_perplexity,none"] = 12.5
    doc["results"]["math_perturbed_full"]["word_perplexity_stderr,none"] = "N/A"
    frame = read_results(write(tmp_path, doc))
    row = frame.filter(frame["metric"] == "word_perplexity,none").to_dicts()[0]
    assert (row["raw_score"], row["unit"], row["status"]) == (12.5, "value", "unmapped")


@pytest.mark.parametrize(
    ("task", "metric", "unit"),
    [
        ("mmlu", "acc", "fraction"),
        ("hellaswag", "acc_norm", "fraction"),
        ("gsm8k", "exact_match", "fraction"),
        ("ifeval", "prompt_level_loose_acc", "fraction"),
        ("humaneval", "pass@1", "fraction"),
        ("mbpp", "pass_at_1", "fraction"),
        ("truthfulqa_mc2", "acc", "fraction"),
        ("drop", "f1", "fraction"),
        ("wikitext", "word_perplexity", "value"),
        ("wikitext", "bits_per_byte", "value"),
        ("wmt16-de-en", "bleu", "value"),
        ("cola", "mcc", "value"),
        ("squadv2", "f1", "percent"),
        ("squadv2", "best_f1_thresh", "value"),
        ("scrolls_qasper", "f1", "percent"),
    ],
)
def test_units_by_metric(task: str, metric: str, unit: str) -> None:
    assert reader.metric_unit(task, metric) == unit


def test_model_name_falls_back_to_model_args_then_model_type(tmp_path: Path) -> None:
    doc = vendored()
    del doc["model_name"]
    assert set(read_results(write(tmp_path, doc, "a.json"))["model"]) == {MODEL}
    doc["config"]["model_args"] = {"pretrained": MODEL, "dtype": "bfloat16"}
    assert set(read_results(write(tmp_path, doc, "b.json"))["model"]) == {MODEL}
    doc["config"]["model_args"] = "base_url=http://localhost:8000,model=my-served-model"
    for task in doc["configs"].values():
        task["metadata"].pop("pretrained")
    assert set(read_results(write(tmp_path, doc, "c.json"))["model"]) == {"my-served-model"}
    doc["config"]["model_args"] = ""
    assert set(read_results(write(tmp_path, doc, "d.json"))["model"]) == {"hf"}


# --- bad input: one clear error naming the file, the field and what to do -----------------


def refused(path: Path) -> str:
    with pytest.raises(ResultsError) as caught:
        read_results(path)
    return str(caught.value)


def test_truncated_file_is_refused(tmp_path: Path) -> None:
    data = VENDORED.read_bytes()
    path = tmp_path / "results_cut.json"
    path.write_bytes(data[: len(data) // 2])
    message = refused(path)
    assert message.startswith(f"{path}: truncated JSON")
    assert "cut short" in message


def test_a_metric_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    doc = vendored()
    doc["results"]["math_rephrased_full"]["exact_match,none"] = "0.0004%"
    path = write(tmp_path, doc)
    assert refused(path) == (
        f"{path}, results.math_rephrased_full.exact_match,none: a metric value must be a "
        "number, got '0.0004%' (was the file edited by hand? re-export it from the run)"
    )


def test_an_accuracy_of_1_3_is_refused(tmp_path: Path) -> None:
    doc = vendored()
    doc["results"]["math_rephrased_full"]["exact_match,none"] = 1.3
    path = write(tmp_path, doc)
    assert refused(path) == (
        f"{path}, task 'math_rephrased_full', metric 'exact_match,none': score 1.3 lies "
        "outside the fraction range 0-1 (is the metric's scale stated correctly?)"
    )


def test_a_file_whose_tasks_ran_on_two_models_is_refused(tmp_path: Path) -> None:
    doc = vendored()
    doc["configs"]["math_rephrased_full"]["metadata"]["pretrained"] = "other-org/other-model"
    path = write(tmp_path, doc)
    message = refused(path)
    assert message.startswith(
        f"{path}, configs.math_rephrased_full.metadata.pretrained: the file mixes models: "
        f"'{MODEL}' (config.model_args) and 'other-org/other-model' "
        "(configs.math_rephrased_full.metadata.pretrained)"
    )
    assert "read each run's own results file" in message


def test_a_task_listed_twice_with_two_scores_is_refused(tmp_path: Path) -> None:
    """JSON allows a key twice (a merged or hand-edited file); a parser keeps the last."""
    text = VENDORED.read_text(encoding="utf-8")
    start = '"results": {\n'
    assert text.count(start) == 1
    first = '"math_perturbed_full": {"alias": "math_perturbed_full", "exact_match,none": 0.5},\n'
    path = write(tmp_path, text.replace(start, start + first, 1))
    message = refused(path)
    assert message.startswith(
        f"{path}, results.math_perturbed_full: task 'math_perturbed_full' is listed twice "
        "with different scores for 'exact_match,none': 0.5 and 0.0"
    )
    assert "keep one run's file" in message


def test_a_group_whose_two_copies_disagree_is_refused(tmp_path: Path) -> None:
    doc = mmlu_like()
    doc["groups"]["mmlu"]["acc,none"] = 0.41
    path = write(tmp_path, doc)
    assert refused(path).startswith(
        f"{path}, groups.mmlu.acc,none: task 'mmlu' has two different scores for 'acc,none': "
        "0.39 in results, 0.41 in groups"
    )


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        (
            lambda d: d.__setitem__("results", ["math_perturbed_full"]),
            "results",
            "`results` must be an object of task name -> metrics",
        ),
        (
            lambda d: d["results"].__setitem__("math_perturbed_full", 0.0),
            "results.math_perturbed_full",
            "a task's entry must be an object, got float",
        ),
        (
            lambda d: d["results"]["math_perturbed_full"].__setitem__(
                "exact_match_stderr,none", "small"
            ),
            "results.math_perturbed_full.exact_match_stderr,none",
            "a standard error must be a number or 'N/A', got 'small'",
        ),
        (
            lambda d: d.__setitem__("group_subtasks", {"g": "math_perturbed_full"}),
            "group_subtasks",
            "`group_subtasks` must map each group to a list of task names",
        ),
    ],
)
def test_schema_violations_name_the_field(tmp_path: Path, change, field, problem) -> None:
    doc = vendored()
    change(doc)
    path = write(tmp_path, doc)
    assert refused(path).startswith(f"{path}, {field}: {problem}")


def test_an_lm_eval_0_3_file_is_refused_with_what_to_do(tmp_path: Path) -> None:
    doc = {
        "results": {"hellaswag": {"acc": 0.5, "acc_stderr": 0.01}},
        "versions": {"hellaswag": 0},
        "config": {"model": "hf-causal"},
    }
    path = write(tmp_path, doc)
    assert refused(path) == (
        f"{path}, results: an lm-eval 0.3 results file (metric keys without a filter, e.g. "
        "'acc' instead of 'acc,none') (re-run with lm-eval 0.4 or later, or write the "
        "scores as a model,benchmark,score CSV)"
    )


def test_an_unknown_json_format_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, {"accuracy": 0.5})
    assert refused(path).startswith(f"{path}: not a results file of a known format")


# --- the reviewed mapping tables ------------------------------------------------------------


def benchmark_ids() -> set[str]:
    with BENCHMARKS_CSV.open(newline="", encoding="utf-8") as handle:
        return {row["benchmark_id"] for row in csv.DictReader(handle)}


@pytest.mark.parametrize("table", ["lm_eval.csv", "inspect.csv"])
def test_map_rows_name_known_benchmarks_sorted_once_per_task(table: str) -> None:
    with (MAPS_DIR / table).open(newline="", encoding="utf-8") as handle:
        reader_ = csv.DictReader(handle)
        assert tuple(reader_.fieldnames) == MAP_COLUMNS
        entries = list(reader_)
    known = benchmark_ids()
    unknown = [(e["task"], e["benchmark_id"]) for e in entries if e["benchmark_id"] not in known]
    assert unknown == []
    keys = [(e["task"], e["metric"]) for e in entries]
    assert keys == sorted(keys)
    # one metric per task: two mapped metrics of one task would score one benchmark twice
    assert len({e["task"] for e in entries}) == len(entries)
    assert {e["transform"] for e in entries} <= set(TRANSFORMS)
    assert all(e["metric"] and e["metric"] != "*" for e in entries)


def test_lm_eval_table_covers_the_open_llm_leaderboard_v2_tasks() -> None:
    with (MAPS_DIR / "lm_eval.csv").open(newline="", encoding="utf-8") as handle:
        table = {
            row["task"]: (row["metric"], row["benchmark_id"]) for row in csv.DictReader(handle)
        }
    assert {task: table[task] for task in table if task.startswith("leaderboard_")} == {
        "leaderboard_bbh": ("acc_norm,none", "open_llm_bbh"),
        "leaderboard_gpqa": ("acc_norm,none", "open_llm_gpqa"),
        "leaderboard_ifeval": ("strict_acc_mean,none", "open_llm_ifeval"),
        "leaderboard_math_hard": ("exact_match,none", "open_llm_math_lvl5"),
        "leaderboard_mmlu_pro": ("acc,none", "open_llm_mmlu_pro"),
        "leaderboard_musr": ("acc_norm,none", "open_llm_musr"),
    }
