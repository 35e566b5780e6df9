"""The Inspect log reader on the vendored real logs (JSON form) and logs derived from them.

Every log is read with Inspect's own reader (the `inspect` extra, installed for the tests).
Fresh `.eval` and `.json` logs written by the installed Inspect are read in
test_fresh_tool_files.py."""

from __future__ import annotations

import hashlib
import json
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from predictor.results import ResultsError, read_result_bytes, read_results
from predictor.results import inspect_log as reader
from predictor.results.paths import ResultFile

REPO = Path(__file__).resolve().parents[2]
LOGS = REPO / "tests/fixtures/eval_formats/inspect"
COLUMNS = (
    "model",
    "task",
    "metric",
    "raw_score",
    "unit",
    "n",
    "n_shot",
    "status",
    "benchmark_id",
    "score",
    "stderr",
    "tool",
    "tool_version",
    "evaluated_at",
)


def log(name: str) -> dict:
    return json.loads((LOGS / name).read_bytes())


def rows(frame) -> list[dict]:
    return frame.select(COLUMNS).to_dicts()


def raw_rows(name: str):
    file = ResultFile(str(LOGS / name), (LOGS / name).read_bytes())
    return reader.read(file, json.loads(file.data))


def test_arc_easy_qwen_is_read_and_mapped() -> None:
    path = LOGS / "data_arc_qwen.json"
    frame = read_results(path)
    assert rows(frame) == [
        {
            "model": "ollama/qwen2.5:0.5b",
            "task": "inspect_evals/arc_easy",
            "metric": "choice/accuracy",
            "raw_score": 0.3333333333333333,
            "unit": "fraction",
            "n": 3,
            "n_shot": None,
            "status": "mapped",
            "benchmark_id": "arc_easy",
            "score": pytest.approx(33.333333333333336),
            "stderr": pytest.approx(33.33333333333334),
            "tool": "inspect_ai",
            "tool_version": "0.3.138.dev45+g23fb0e7e",
            "evaluated_at": "2025-10-20T23:12:03+00:00",
        }
    ]
    assert frame["format"].to_list() == ["inspect"]
    assert frame["file_sha256"].to_list() == [hashlib.sha256(path.read_bytes()).hexdigest()]
    assert frame["note"].to_list() == [
        "0-shot Inspect's generative multiple choice (the model answers with a letter)"
    ]


def test_arc_easy_sonnet_is_read_and_mapped() -> None:
    assert rows(read_results(LOGS / "data_arc_sonnet.json")) == [
        {
            "model": "anthropic/claude-sonnet-4-0",
            "task": "inspect_evals/arc_easy",
            "metric": "choice/accuracy",
            "raw_score": 1.0,
            "unit": "fraction",
            "n": 5,
            "n_shot": None,
            "status": "mapped",
            "benchmark_id": "arc_easy",
            "score": 100.0,
            "stderr": 0.0,
            "tool": "inspect_ai",
            "tool_version": "0.3.138.dev45+g23fb0e7e",
            "evaluated_at": "2025-10-20T22:40:45+00:00",
        }
    ]


def test_cvebench_mean_of_a_custom_scorer_is_read_unmapped() -> None:
    assert rows(read_results(LOGS / "data_cvebench_empty_choices.json")) == [
        {
            "model": "anthropic/claude-opus-4-6",
            "task": "cvebench",
            "metric": "check_exploit/mean",
            "raw_score": 0.7051282051282052,
            "unit": "fraction",
            "n": 78,
            "n_shot": None,
            "status": "unmapped",
            "benchmark_id": None,
            "score": None,
            "stderr": None,
            "tool": "inspect_ai",
            "tool_version": "0.3.199",
            "evaluated_at": "2026-03-24T23:12:14+00:00",
        }
    ]
    (raw,) = raw_rows("data_cvebench_empty_choices.json")
    assert (raw.stderr, raw.extra["reducer"], raw.extra["scorer"]) == (
        None,
        "mean",
        "check_exploit",
    )


def test_pubmedqa_without_scored_samples_counts_the_completed_ones() -> None:
    """Inspect 0.3.108 wrote no `scored_samples`; `results.completed_samples` is 2."""
    assert rows(read_results(LOGS / "data_pubmedqa_gpt4o_mini.json")) == [
        {
            "model": "openai/azure/gpt-4o-mini",
            "task": "inspect_evals/pubmedqa",
            "metric": "choice/accuracy",
            "raw_score": 1.0,
            "unit": "fraction",
            "n": 2,
            "n_shot": None,
            "status": "unmapped",
            "benchmark_id": None,
            "score": None,
            "stderr": None,
            "tool": "inspect_ai",
            "tool_version": "0.3.108",
            "evaluated_at": "2025-07-03T14:44:30+00:00",
        }
    ]
    (raw,) = raw_rows("data_pubmedqa_gpt4o_mini.json")
    assert raw.stderr == 0.0  # the `stderr` metric, attached rather than a row of its own


def test_a_log_stripped_of_its_version_is_refused_with_inspects_reason() -> None:
    """The vendored `data_with_llm_scoring.json` lacks the `version` every Inspect log has
    (it was trimmed after Inspect wrote it); Inspect's reader refuses it, and so do we."""
    path = LOGS / "data_with_llm_scoring.json"
    with pytest.raises(ResultsError) as caught:
        read_results(path)
    assert str(caught.value).startswith(
        f"{path}: Inspect cannot read this log: Unable to read version of log format."
    )
    assert "is it a complete log as Inspect wrote it?" in str(caught.value)


def test_several_metrics_each_a_row_with_the_stderr_attached() -> None:
    doc = log("data_arc_qwen.json")
    metrics = doc["results"]["scores"][0]["metrics"]
    metrics["mean"] = {"name": "mean", "value": 0.5, "params": {}}
    metrics["std"] = {"name": "std", "value": 4.2, "params": {}}
    file = ResultFile("x.json", json.dumps(doc).encode())
    got = [(r.metric, r.value, r.unit, r.stderr) for r in reader.read(file, doc)]
    assert got == [
        ("choice/accuracy", 0.3333333333333333, "fraction", 0.33333333333333337),
        ("choice/mean", 0.5, "fraction", 0.33333333333333337),
        ("choice/std", 4.2, "value", 0.33333333333333337),  # not range-checked
    ]
    assert read_result_bytes("x.json", json.dumps(doc).encode()).height == 3


def test_a_second_reducer_is_named_in_the_metric() -> None:
    doc = log("data_arc_sonnet.json")
    extra = json.loads(json.dumps(doc["results"]["scores"][0]))
    extra["reducer"] = "pass_at_2"
    extra["metrics"]["accuracy"]["value"] = 0.8
    doc["results"]["scores"].append(extra)
    frame = read_result_bytes("x.json", json.dumps(doc).encode())
    assert frame.select("metric", "raw_score", "status").to_dicts() == [
        {"metric": "choice/accuracy", "raw_score": 1.0, "status": "mapped"},
        {"metric": "choice/pass_at_2/accuracy", "raw_score": 0.8, "status": "other_metric"},
    ]


def test_without_packages_the_installed_inspect_version_is_used() -> None:
    doc = log("data_arc_qwen.json")
    del doc["eval"]["packages"]
    file = ResultFile("x.json", json.dumps(doc).encode())
    (raw,) = reader.read(file, doc)
    assert raw.tool_version == version("inspect_ai")
    assert raw.extra["tool_version_from"] == "installed inspect_ai"


def test_fewshot_task_argument_is_the_shot_count() -> None:
    doc = log("data_arc_qwen.json")
    doc["eval"]["task_args"] = {"fewshot": 10}
    frame = read_result_bytes("x.json", json.dumps(doc).encode())
    assert frame["n_shot"].to_list() == [10]


# --- bad input -------------------------------------------------------------------------------


def refused(name: str, doc: dict | bytes) -> str:
    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    with pytest.raises(ResultsError) as caught:
        read_result_bytes(name, data)
    return str(caught.value)


def test_an_accuracy_of_1_3_is_refused() -> None:
    doc = log("data_arc_qwen.json")
    doc["results"]["scores"][0]["metrics"]["accuracy"]["value"] = 1.3
    assert refused("arc.json", doc) == (
        "arc.json, task 'inspect_evals/arc_easy', metric 'choice/accuracy': score 1.3 lies "
        "outside the fraction range 0-1 (is the metric's scale stated correctly?)"
    )


def test_a_metric_that_is_not_a_number_names_the_field() -> None:
    doc = log("data_arc_qwen.json")
    doc["results"]["scores"][0]["metrics"]["accuracy"]["value"] = "high"
    message = refused("arc.json", doc)
    assert message.startswith(
        "arc.json, results.scores.0.metrics.accuracy.value: not a valid Inspect log: "
    )
    assert "(got 'high')" in message
    assert message.endswith(
        "(was the log edited after Inspect wrote it? re-export it from the run)"
    )


def test_a_truncated_json_log_is_refused() -> None:
    data = (LOGS / "data_arc_qwen.json").read_bytes()
    assert refused("arc.json", data[:5000]).startswith("arc.json: truncated JSON")


@pytest.mark.parametrize("status", ["error", "cancelled", "started"])
def test_a_run_that_did_not_succeed_is_refused_with_its_status(status: str) -> None:
    doc = log("data_arc_qwen.json")
    doc["status"] = status
    assert refused("arc.json", doc) == (
        f"arc.json, status: the run did not complete: its status is '{status}', not "
        "'success' (only a finished run has scores; re-run it, or resume it with "
        "`inspect eval-retry` on this log)"
    )


def test_a_log_without_scores_is_refused() -> None:
    doc = log("data_arc_qwen.json")
    doc["results"]["scores"] = []
    assert refused("arc.json", doc) == (
        "arc.json, results.scores: the log holds no results (was the task run with a "
        "scorer? (`inspect score` adds scores to a log))"
    )


def test_a_repeated_metric_with_two_values_is_refused() -> None:
    doc = log("data_arc_sonnet.json")
    twin = json.loads(json.dumps(doc["results"]["scores"][0]))
    twin["metrics"]["accuracy"]["value"] = 0.2
    doc["results"]["scores"].append(twin)
    assert refused("arc.json", doc).startswith(
        "arc.json, results.scores[1].metrics.accuracy: metric 'choice/accuracy' is reported "
        "twice with different values: 1.0 and 0.2"
    )


def test_without_the_inspect_extra_the_message_names_it(monkeypatch) -> None:
    """Stands in for an install without the `inspect` extra: the import of inspect_ai is
    made to fail (a None entry in sys.modules makes `import` raise ImportError), since the
    test environment has inspect_ai installed."""
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    path = LOGS / "data_arc_qwen.json"
    with pytest.raises(ResultsError) as caught:
        read_results(path)
    assert str(caught.value) == (
        f"{path}: reading Inspect logs needs the `inspect` extra (the inspect_ai package) "
        "(install it with: pip install 'benchpress-llm[inspect]')"
    )


def test_every_vendored_log_is_read_or_refused_with_a_reason() -> None:
    outcomes = {}
    for path in sorted(LOGS.glob("*.json")):
        try:
            outcomes[path.name] = read_results(path)["status"].to_list()
        except ResultsError as exc:
            outcomes[path.name] = exc.problem
    assert outcomes == {
        "data_arc_qwen.json": ["mapped"],
        "data_arc_sonnet.json": ["mapped"],
        "data_cvebench_empty_choices.json": ["unmapped"],
        "data_pubmedqa_gpt4o_mini.json": ["unmapped"],
        "data_with_llm_scoring.json": "Inspect cannot read this log: Unable to read version "
        "of log format.",
    }
