"""Files written just now by the installed lm-eval and Inspect, read end to end through
`read_results` and checked against the numbers in the files the tools wrote.

The runs (tests/results/fresh_files.py) are offline: lm-eval's `dummy` model over local task
YAMLs and data, Inspect's `mockllm/model` over a local task."""

from __future__ import annotations

import json
from importlib.metadata import version

import polars as pl
import pytest

from predictor.results import ResultsError, inspect_log, read_results
from predictor.results import lm_eval as lm_eval_reader
from predictor.results.paths import ResultFile
from tests.results.fresh_files import (  # noqa: F401 - session fixtures
    IFEVAL_DOCS,
    INSPECT_SAMPLES,
    LM_EVAL_MODEL,
    inspect_run,
    lm_eval_run,
)

pytestmark = pytest.mark.slow


def test_fresh_lm_eval_file_rows_match_the_file(lm_eval_run) -> None:  # noqa: F811
    (path,) = lm_eval_run.files
    doc = json.loads(path.read_bytes())
    assert doc["lm_eval_version"] == version("lm_eval")
    frame = read_results(path)
    expected = []
    for task, entry in doc["results"].items():
        for key, value in entry.items():
            if "," in key and "_stderr," not in key:
                expected.append((task, key, value))
    got = [(r["task"], r["metric"], r["raw_score"]) for r in frame.to_dicts()]
    assert got == [
        *expected[:5],
        ("leaderboard_ifeval", "strict_acc_mean,none", 0.5625),
        *expected[5:],
    ]
    assert set(frame["model"]) == {LM_EVAL_MODEL}
    assert set(frame["tool_version"]) == {doc["lm_eval_version"]}
    assert set(frame["format"]) == {"lm_eval"}
    by_task = {t: r for t, r in zip(frame["task"], frame.to_dicts(), strict=True)}
    for task, counts in doc["n-samples"].items():
        assert by_task[task]["n"] == counts["effective"]
        assert by_task[task]["n_shot"] == doc["n-shot"][task]
    assert by_task["bp_fresh_mc"]["n_shot"] == 2
    assert by_task["bp_fresh_mc"]["group"] == "bp_fresh_group"
    assert by_task["bp_fresh_gen"]["group"] == "bp_fresh_group"
    group = by_task["bp_fresh_group"]
    assert (group["group"], group["n"], group["n_shot"]) == (
        None,
        doc["results"]["bp_fresh_group"]["sample_count"]["acc,none"],
        None,
    )


def test_fresh_lm_eval_ifeval_maps_onto_the_open_llm_leaderboard(lm_eval_run) -> None:  # noqa: F811
    (path,) = lm_eval_run.files
    doc = json.loads(path.read_bytes())
    entry = doc["results"]["leaderboard_ifeval"]
    prompt = sum(ok for ok, _ in IFEVAL_DOCS) / len(IFEVAL_DOCS)
    flat = [ok for _, inst in IFEVAL_DOCS for ok in inst]
    assert entry["prompt_level_strict_acc,none"] == prompt == 0.5
    assert entry["inst_level_strict_acc,none"] == sum(flat) / len(flat) == 0.625
    assert entry["inst_level_strict_acc_stderr,none"] == "N/A"  # as lm-eval writes it
    frame = read_results(path)
    ifeval = frame.filter(frame["task"] == "leaderboard_ifeval")
    assert ifeval.select("metric", "status", "benchmark_id", "score").to_dicts() == [
        {
            "metric": "prompt_level_strict_acc,none",
            "status": "other_metric",
            "benchmark_id": None,
            "score": None,
        },
        {
            "metric": "inst_level_strict_acc,none",
            "status": "other_metric",
            "benchmark_id": None,
            "score": None,
        },
        {
            "metric": "strict_acc_mean,none",
            "status": "mapped",
            "benchmark_id": "open_llm_ifeval",
            "score": 56.25,
        },
    ]
    raws = {r.metric: r for r in lm_eval_reader.read(ResultFile(str(path), path.read_bytes()), doc)}
    assert raws["inst_level_strict_acc,none"].stderr is None
    assert (
        raws["prompt_level_strict_acc,none"].stderr
        == (entry["prompt_level_strict_acc_stderr,none"])
    )


def test_fresh_lm_eval_task_mapped_with_an_override(lm_eval_run) -> None:  # noqa: F811
    (path,) = lm_eval_run.files
    entry = json.loads(path.read_bytes())["results"]["bp_fresh_mc"]
    frame = read_results(path, overrides={("bp_fresh_mc", "acc_norm,none"): "hellaswag"})
    (row,) = frame.filter(
        (pl.col("status") == "mapped") & (pl.col("task") == "bp_fresh_mc")
    ).to_dicts()
    assert (row["benchmark_id"], row["metric"], row["note"]) == (
        "hellaswag",
        "acc_norm,none",
        "mapped by --map",
    )
    assert row["score"] == pytest.approx(100 * entry["acc_norm,none"])
    assert row["stderr"] == pytest.approx(100 * entry["acc_norm_stderr,none"])


def inspect_logs(run, task: str) -> list:
    return [p for p in run.files if f"_{task}_" in p.name]


def test_fresh_inspect_logs_in_both_formats_match_the_log(inspect_run) -> None:  # noqa: F811
    from inspect_ai.log import read_eval_log

    logs = inspect_logs(inspect_run, "bp-fresh-qa")
    assert sorted(p.suffix for p in logs) == [".eval", ".json"]
    seen = []
    for path in logs:
        header = read_eval_log(str(path), header_only=True)
        frame = read_results(path)
        expected = [
            (f"{score.name}/{key}", metric.value)
            for score in header.results.scores
            for key, metric in score.metrics.items()
            if key != "stderr"
        ]
        assert [(r["metric"], r["raw_score"]) for r in frame.to_dicts()] == expected
        assert expected == [("match/accuracy", 4 / 6), ("includes/accuracy", 5 / 6)]
        assert set(frame["task"]) == {"bp_fresh_qa"}
        assert set(frame["model"]) == {"mockllm/model"}
        assert set(frame["n"]) == {len(INSPECT_SAMPLES)}
        assert set(frame["tool_version"]) == {header.eval.packages["inspect_ai"]}
        assert header.eval.packages["inspect_ai"] == version("inspect_ai")
        assert set(frame["evaluated_at"]) == {header.eval.created}
        assert set(frame["status"]) == {"unmapped"}
        raws = inspect_log.read(ResultFile(str(path), path.read_bytes()))
        stderrs = [s.metrics["stderr"].value for s in header.results.scores]
        assert [r.stderr for r in raws] == stderrs
        seen.append(frame.drop("file", "file_sha256", "evaluated_at"))
    assert seen[0].equals(seen[1])  # the same run written as .eval and as .json


def test_fresh_inspect_log_of_a_failed_run_is_refused(inspect_run) -> None:  # noqa: F811
    (path,) = inspect_logs(inspect_run, "bp-fresh-broken")
    with pytest.raises(ResultsError) as caught:
        read_results(path)
    message = str(caught.value)
    assert message.startswith(
        f"{path}, status: the run did not complete: its status is 'error', not 'success': "
        "RuntimeError('the solver broke on purpose')"
    )
    assert "`inspect eval-retry`" in message


def test_fresh_inspect_eval_file_cut_short_is_refused(inspect_run, tmp_path) -> None:  # noqa: F811
    (path,) = [p for p in inspect_logs(inspect_run, "bp-fresh-qa") if p.suffix == ".eval"]
    data = path.read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(data[: len(data) // 3])
    with pytest.raises(ResultsError) as caught:
        read_results(cut)
    assert str(caught.value).startswith(f"{cut}: Inspect cannot read this log: ")
