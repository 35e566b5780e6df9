"""HELM run folders: the rows of the three vendored runs, not-run stats, and broken runs."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from predictor.results import ResultsError, probe_scores, read_results

REPO = Path(__file__).resolve().parents[2]
HELM = REPO / "tests" / "fixtures" / "eval_formats" / "helm_raw"
HELLASWAG = (
    HELM
    / "commonsense-dataset=hellaswag,method=multiple_choice_joint,model=eleutherai_pythia-1b-v0"
)
MMLU = HELM / "mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"
NARRATIVE = HELM / "narrative_qa-model=openai_gpt2"
COLUMNS = (
    "model",
    "task",
    "metric",
    "raw_score",
    "unit",
    "score",
    "status",
    "benchmark_id",
    "n",
    "n_shot",
)
HS_TASK = "commonsense:dataset=hellaswag,method=multiple_choice_joint"
MMLU_TASK = "mmlu:subject=philosophy,method=multiple_choice_joint"


def rows(frame: pl.DataFrame, columns: tuple[str, ...] = COLUMNS) -> list[tuple]:
    return [
        tuple(round(v, 9) if isinstance(v, float) else v for v in row)
        for row in frame.select(columns).iter_rows()
    ]


def test_the_rows_of_all_three_runs() -> None:
    frame = read_results(HELM)
    pythia, gpt2 = "eleutherai/pythia-1b-v0", "openai/gpt2"
    assert rows(frame) == [
        (pythia, HS_TASK, "exact_match", 0.3, "fraction", 30.0, "mapped", "hellaswag", 10, 5),
        (pythia, HS_TASK, "quasi_exact_match", 0.3, "fraction", None, "other_metric", None, 10, 5),
        (pythia, HS_TASK, "prefix_exact_match", 0.3, "fraction", None, "other_metric", None, 10, 5),
        (
            pythia,
            HS_TASK,
            "quasi_prefix_exact_match",
            0.3,
            "fraction",
            None,
            "other_metric",
            None,
            10,
            5,
        ),
        # one MMLU subject is not MMLU: listed, mapped to nothing
        (gpt2, MMLU_TASK, "exact_match", 0.111111111, "fraction", None, "unmapped", None, 9, 5),
        (
            gpt2,
            MMLU_TASK,
            "quasi_exact_match",
            0.111111111,
            "fraction",
            None,
            "unmapped",
            None,
            9,
            5,
        ),
        (
            gpt2,
            MMLU_TASK,
            "prefix_exact_match",
            0.111111111,
            "fraction",
            None,
            "unmapped",
            None,
            9,
            5,
        ),
        (
            gpt2,
            MMLU_TASK,
            "quasi_prefix_exact_match",
            0.111111111,
            "fraction",
            None,
            "unmapped",
            None,
            9,
            5,
        ),
        (gpt2, "narrative_qa", "exact_match", 0.0, "fraction", None, "unmapped", None, 4, 5),
        (gpt2, "narrative_qa", "quasi_exact_match", 0.0, "fraction", None, "unmapped", None, 4, 5),
        (gpt2, "narrative_qa", "f1_score", 0.174242424, "fraction", None, "unmapped", None, 4, 5),
        (gpt2, "narrative_qa", "rouge_l", 0.053655108, "fraction", None, "unmapped", None, 4, 5),
        (gpt2, "narrative_qa", "bleu_1", 0.035688406, "fraction", None, "unmapped", None, 4, 5),
        (gpt2, "narrative_qa", "bleu_4", 0.0, "fraction", None, "unmapped", None, 4, 5),
    ]
    # the test split where a run has one (MMLU: exact_match 0.11 on test, 0.0 on valid)
    assert set(frame["format"]) == set(frame["tool"]) == {"helm"}


def test_provenance_is_the_stats_file_and_the_note_names_the_setting() -> None:
    frame = read_results(HELLASWAG)
    stats = HELLASWAG / "stats.json"
    assert set(frame["file"]) == {str(stats)}
    assert set(frame["file_sha256"]) == {hashlib.sha256(stats.read_bytes()).hexdigest()}
    (note,) = frame.filter(pl.col("status") == "mapped")["note"]
    assert note.startswith("HELM: 5 in-context examples, the answer letter scored by exact match")
    assert probe_scores(frame) == {"hellaswag": pytest.approx(30.0)}


def test_naming_one_file_of_the_run_reads_the_run() -> None:
    whole = read_results(NARRATIVE)
    assert rows(read_results(NARRATIVE / "stats.json")) == rows(whole)
    assert rows(read_results(NARRATIVE / "run_spec.json")) == rows(whole)


def copy_run(tmp_path: Path, run: Path = HELLASWAG) -> Path:
    target = tmp_path / run.name
    shutil.copytree(run, target)
    return target


def edit_stats(run: Path, change) -> None:
    stats = json.loads((run / "stats.json").read_text(encoding="utf-8"))
    change(stats)
    (run / "stats.json").write_text(json.dumps(stats), encoding="utf-8")


def unperturbed(stats: list, metric: str, split: str = "valid") -> dict:
    (stat,) = [s for s in stats if s["name"] == {"name": metric, "split": split}]
    return stat


def test_minus_one_is_not_run(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    edit_stats(run, lambda s: unperturbed(s, "exact_match").update(mean=-1, sum=-1))
    frame = read_results(run)
    assert rows(frame)[0] == (
        "eleutherai/pythia-1b-v0",
        HS_TASK,
        "exact_match",
        None,
        "fraction",
        None,
        "not_run",
        None,
        10,
        5,
    )
    with pytest.raises(ResultsError, match="no result maps onto a benchmark of ours"):
        probe_scores(frame)


def test_a_stat_computed_on_nothing_is_not_run(tmp_path: Path) -> None:
    run = copy_run(tmp_path)

    def empty(stats: list) -> None:
        stat = unperturbed(stats, "exact_match")
        for key in ("min", "max", "mean", "variance", "stddev"):
            stat.pop(key)
        stat.update(count=0, sum=0)

    edit_stats(run, empty)
    assert read_results(run)["status"].to_list()[0] == "not_run"


def test_a_run_without_stats_is_refused_naming_the_missing_file(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    (run / "stats.json").unlink()
    with pytest.raises(ResultsError) as caught:
        read_results(run)
    assert caught.value.path == str(run / "stats.json")
    assert caught.value.problem == "the HELM run folder has no stats.json"


def test_a_truncated_stats_file_is_refused(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    data = (run / "stats.json").read_bytes()
    (run / "stats.json").write_bytes(data[:1000])
    with pytest.raises(ResultsError, match=r"stats\.json: truncated JSON"):
        read_results(run)


def test_a_run_naming_two_models_is_refused(tmp_path: Path) -> None:
    run = copy_run(tmp_path, MMLU)
    spec = json.loads((run / "run_spec.json").read_text(encoding="utf-8"))
    spec["adapter_spec"]["model"] = "openai/gpt2-xl"
    (run / "run_spec.json").write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(ResultsError) as caught:
        read_results(run)
    assert caught.value.field == "adapter_spec.model"
    assert caught.value.problem == (
        "the run mixes two models: adapter_spec.model is 'openai/gpt2-xl', the run name says "
        "model=openai_gpt2"
    )


def test_a_metric_stated_twice_with_two_values_is_refused(tmp_path: Path) -> None:
    run = copy_run(tmp_path)

    def twice(stats: list) -> None:
        stats.append({**unperturbed(stats, "exact_match"), "mean": 0.9})

    edit_stats(run, twice)
    with pytest.raises(ResultsError) as caught:
        read_results(run)
    assert caught.value.field == "[81].mean"
    assert caught.value.problem == (
        "exact_match (valid) is stated twice with different values: 0.3 and 0.9"
    )


def test_a_score_outside_0_1_is_refused(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    edit_stats(run, lambda s: unperturbed(s, "exact_match").update(mean=30.0))
    with pytest.raises(ResultsError) as caught:
        read_results(run)
    assert caught.value.path == str(run / "stats.json")
    assert caught.value.problem == "score 30 lies outside the fraction range 0-1"


def test_a_run_with_no_test_or_valid_stats_is_refused(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    edit_stats(run, lambda s: [x["name"].update(split="train") for x in s])
    with pytest.raises(ResultsError, match="no unperturbed stats of the test or valid split"):
        read_results(run)


def test_a_run_with_none_of_the_score_metrics_is_refused(tmp_path: Path) -> None:
    run = copy_run(tmp_path, NARRATIVE)

    def counts_only(stats: list) -> None:
        stats[:] = [x for x in stats if x["name"]["name"] in ("num_instances", "logprob")]

    edit_stats(run, counts_only)
    with pytest.raises(ResultsError) as caught:
        read_results(run)
    assert caught.value.problem == (
        "none of the score metrics we read (exact_match, quasi_exact_match, prefix_exact_match, "
        "quasi_prefix_exact_match, f1_score, rouge_l, bleu_1, bleu_4) is in the test split (it "
        "has: logprob, num_instances)"
    )
