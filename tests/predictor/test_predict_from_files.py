"""Predicting from results files: `BenchPress.read_results` / `predict(paths)` and
`benchpress predict | compare | next --from PATH`.

Inputs are the vendored real files (tests/fixtures/eval_formats) and tidy CSVs written here;
the answers from files must equal the answers from the same scores given as a dict."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import polars as pl
import pytest

from predictor import BenchPress, FractionScoresWarning
from predictor.api import predictions_frame
from predictor.results import ResultsError
from predictor.util.paths import bundled_snapshot_dir
from tests.support.cli_runs import bundled_cli

STORE = str(bundled_snapshot_dir())
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "eval_formats"
LM_EVAL_FILE = FIXTURES / "lm_eval" / "results_2026-01-21T03-44-18.458309.json"
TIDY = "model,benchmark,score\nmine,GPQA Diamond,45\nmine,MMLU-Pro,60\nmine,agieval,50\n"
SAME_AS_DICT = {"gpqa_diamond": 45.0, "mmlu_pro": 60.0}  # agieval: not in the fit
TWO_MODELS = "model,benchmark,score\nA,gpqa_diamond,45\nA,mmlu_pro,60\nB,gpqa_diamond,70\n"


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=STORE)


@pytest.fixture(autouse=True)
def _home(benchpress_home: Path) -> Path:
    return benchpress_home


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


cli = bundled_cli


# ---------------------------------------------------------------------------- Python API
def test_read_results_puts_tidy_names_on_snapshot_ids(bp: BenchPress, tmp_path: Path) -> None:
    path = write(tmp_path, "scores.csv", TIDY)
    frame = bp.read_results(path)
    assert frame.select("model", "benchmark_id", "score", "status", "task").rows() == [
        ("mine", "gpqa_diamond", 45.0, "mapped", "GPQA Diamond"),
        ("mine", "mmlu_pro", 60.0, "mapped", "MMLU-Pro"),
        ("mine", "agieval", 50.0, "not_fitted", "agieval"),
    ]
    assert frame["note"].to_list() == [
        None,
        None,
        f"not fitted in snapshot {bp.version} (too few scores to be a probe)",
    ]
    assert frame["file"].unique().to_list() == [str(path)]
    assert bp.on_snapshot(frame).equals(frame)  # idempotent


def test_predictions_from_files_equal_predictions_from_the_dict(
    bp: BenchPress, tmp_path: Path
) -> None:
    path = write(tmp_path, "scores.csv", TIDY)
    expected = bp.predict(SAME_AS_DICT, targets="chat")
    assert bp.predict(path, targets="chat") == expected
    assert bp.predict(str(path), targets="chat") == expected
    assert bp.predict([tmp_path], targets="chat") == expected  # a folder
    assert bp.predict(bp.read_results(path), targets="chat") == expected
    from predictor.results import read_results  # no snapshot: names as the user spelt them

    assert bp.predict(read_results(path), targets="chat") == expected


def test_one_model_of_several_by_name(bp: BenchPress, tmp_path: Path) -> None:
    path = write(tmp_path, "two.csv", TWO_MODELS)
    assert bp.predict(path, model="B") == bp.predict({"gpqa_diamond": 70})
    with pytest.raises(ResultsError) as caught:
        bp.predict(path)
    assert str(caught.value) == (
        "results: the files hold 2 models (A, B) (choose one with --model NAME "
        "(Python: model=NAME))"
    )
    with pytest.raises(ResultsError, match=r"no results for model 'C' \(the files hold: A, B\)"):
        bp.predict(path, model="C")
    # with a mapping, model= names the model (its family is read from the name)
    named = bp.predict({"gpqa_diamond": 70}, model="B")
    assert (named.side.model, named.side.family) == ("B", "b")


def test_unknown_tidy_benchmark_names_the_file_and_close_matches(
    bp: BenchPress, tmp_path: Path
) -> None:
    path = write(tmp_path, "scores.csv", "model,benchmark,score\nmine,gpqa_diamnd,45\n")
    with pytest.raises(ResultsError) as caught:
        bp.read_results(path)
    assert str(caught.value) == (
        f"{path}, benchmark: unknown benchmark 'gpqa_diamnd' in snapshot {bp.version} "
        "(did you mean: gpqa_diamond, gpqa_main, gaia? write a benchmark id or name, or map it: "
        "--map 'gpqa_diamnd=BENCHMARK')"
    )
    # the map says what it is
    frame = bp.read_results(path, overrides=["gpqa_diamnd=GPQA Diamond"])
    assert frame.select("benchmark_id", "score", "note").row(0) == (
        "gpqa_diamond",
        45.0,
        "mapped by --map",
    )


def test_a_score_outside_its_range_names_the_file(bp: BenchPress, tmp_path: Path) -> None:
    path = write(tmp_path, "scores.csv", "model,benchmark,score\nmine,gpqa_diamond,0.8\n")
    with pytest.warns(FractionScoresWarning, match="converted to percent"):
        assert bp.read_results(path)["score"].to_list() == [80.0]  # a fraction: converted
    path = write(tmp_path, "bad.csv", "model,benchmark,score\nmine,gpqa_diamond,180\n")
    with pytest.raises(ResultsError, match=rf"^{path}, benchmark: score 180 for gpqa_diamond "):
        bp.read_results(path)


def test_the_real_lm_eval_file_lists_its_tasks_as_unmapped(bp: BenchPress) -> None:
    frame = bp.read_results(LM_EVAL_FILE)
    rows = frame.select("task", "metric", "status", "raw_score").sort("task").rows()
    assert rows == [
        ("math_perturbed_full", "exact_match,none", "unmapped", 0.0),
        ("math_rephrased_full", "exact_match,none", "unmapped", 0.0004),
    ]
    with pytest.raises(ResultsError, match="no result maps onto a benchmark of ours"):
        bp.predict(LM_EVAL_FILE)
    # mapped by hand, the file's score is a probe: 0.0004 as a fraction is 0.04 percent
    frame = bp.read_results(LM_EVAL_FILE, overrides=["math_rephrased_full=math_level_5"])
    used = frame.filter(pl.col("status") == "mapped")
    assert used.select("benchmark_id", "score").rows() == [("math_level_5", 0.04)]
    with warnings.catch_warnings():  # a fraction from lm-eval is converted: no warning
        warnings.simplefilter("error")
        from_file = bp.predict(frame)
    with pytest.warns(FractionScoresWarning, match="converted to percent"):
        typed = bp.predict({"math_level_5": 0.04})  # the same number typed in: a fraction
    assert typed["math_level_5"].score == 4.0 and typed != from_file
    assert from_file == bp.predict({"math_level_5": 0.04}, convert_fractions=False)


# ---------------------------------------------------------------------------- CLI
def test_predict_from_a_file_prints_what_it_used(capsys, bp: BenchPress, tmp_path) -> None:
    path = write(tmp_path, "scores.csv", TIDY)
    code, out, err = cli(capsys, "predict", "--from", str(path), "--targets", "chat")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:3] == [
        "read 1 file (tidy) for mine: 2 scores used: gpqa_diamond=45, mmlu_pro=60",
        "not in this snapshot's fit: agieval",
        f"snapshot {bp.version}: 4 benchmarks, 90% intervals",
    ]
    code, from_dict, _ = cli(
        capsys,
        *("predict", "--scores", "gpqa_diamond=45,mmlu_pro=60", "--targets", "chat"),
        *("--name", "mine"),
    )
    assert lines[2:] == from_dict.splitlines()  # the same table as from the dict, same name
    assert lines[-1].startswith("model: family mine (not in the fit: population prior), ")


def test_predict_from_json_lists_inputs_with_their_source(capsys, bp, tmp_path) -> None:
    path = write(tmp_path, "scores.csv", TIDY)
    code, out, err = cli(capsys, "predict", "--from", str(path), "--json")
    assert code == 0, err
    doc = json.loads(out)
    inputs = doc["inputs"]
    assert [(r["benchmark_id"], r["score"], r["task"], r["file"]) for r in inputs["used"]] == [
        ("gpqa_diamond", 45.0, "GPQA Diamond", str(path)),
        ("mmlu_pro", 60.0, "MMLU-Pro", str(path)),
    ]
    assert inputs["not_fitted"] == ["agieval"] and inputs["unmapped"] == []
    assert inputs["files"] == [str(path)] and inputs["formats"] == ["tidy"]
    expected = predictions_frame(bp.predict(SAME_AS_DICT)).sort("benchmark").to_dicts()
    assert doc["predictions"] == json.loads(json.dumps(expected))


def test_scores_add_to_and_replace_the_files_scores(capsys, tmp_path) -> None:
    path = write(tmp_path, "scores.csv", TIDY)
    argv = ["predict", "--from", str(path), "--scores", "GPQA Diamond=50,hle=10", "--csv"]
    code, out, err = cli(capsys, *argv)
    assert code == 0, err
    _, plain, _ = cli(capsys, "predict", "--scores", "gpqa_diamond=50,mmlu_pro=60,hle=10", "--csv")
    assert out == plain
    code, out, _ = cli(capsys, *argv[:-1])
    assert out.splitlines()[:2] == [
        "read 1 file (tidy) for mine: 1 score used: mmlu_pro=60",
        "--scores: GPQA Diamond=50, hle=10 (replacing the files' gpqa_diamond)",
    ]


def test_unmapped_tasks_are_listed_and_map_changes_the_benchmark(capsys, tmp_path) -> None:
    shutil.copy(LM_EVAL_FILE, tmp_path / LM_EVAL_FILE.name)
    code, out, err = cli(capsys, "predict", "--from", str(tmp_path))
    assert code == 2 and out == ""
    assert err == (
        "benchpress: error: results: no result maps onto a benchmark of ours (the files hold "
        "math_perturbed_full, math_rephrased_full; map a task with --map TASK=BENCHMARK, or "
        "give --scores)\n"
    )
    code, out, err = cli(
        capsys,
        "predict",
        "--from",
        str(tmp_path),
        "--scores",
        "gpqa_diamond=40",
        "--targets",
        "chat",
    )
    assert code == 0, err
    assert out.splitlines()[:4] == [
        "read 1 file (lm_eval) for "
        "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1: 0 scores used",
        "--scores: gpqa_diamond=40",
        "unmapped: math_perturbed_full, math_rephrased_full",
        "(map a task with --map TASK=BENCHMARK)",
    ]
    code, out, err = cli(
        capsys,
        "predict",
        "--from",
        str(tmp_path),
        "--map",
        "math_perturbed_full=math_level_5",
        "--json",
    )
    assert code == 0, err
    inputs = json.loads(out)["inputs"]
    assert [(r["benchmark_id"], r["score"], r["task"]) for r in inputs["used"]] == [
        ("math_level_5", 0.0, "math_perturbed_full")
    ]
    assert inputs["unmapped"] == ["math_rephrased_full"]
    assert inputs["notes"] == ["math_level_5: mapped by --map"]


def test_several_models_need_model(capsys, bp: BenchPress, tmp_path: Path) -> None:
    path = write(tmp_path, "two.csv", TWO_MODELS)
    code, out, err = cli(capsys, "predict", "--from", str(path))
    assert code == 2 and out == ""
    assert err == (
        "benchpress: error: results: the files hold 2 models (A, B) (choose one with --model "
        "NAME (Python: model=NAME))\n"
    )
    code, out, err = cli(capsys, "predict", "--from", str(path), "--model", "B", "--csv")
    assert code == 0, err
    _, plain, _ = cli(capsys, "predict", "--scores", "gpqa_diamond=70", "--csv")
    assert out == plain


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["predict"], "give the probe scores: --scores name=value,... or --from PATH"),
        (["predict", "--scores", "hle=1", "--model", "A"], "--model chooses a model of the "),
        (["predict", "--scores", "hle=1", "--map", "a=hle"], "--map applies to the --from"),
        (["next"], "give the known scores: --scores name=value,... or --from PATH"),
        (["compare", "--targets", "chat"], "give the models: --model [NAME:]name=value"),
    ],
)
def test_missing_inputs_are_usage_errors(capsys, argv, message) -> None:
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == "" and err.startswith(f"benchpress: error: {message}")


def test_bad_files_exit_2_naming_the_file(capsys, tmp_path: Path) -> None:
    cut = tmp_path / "results_cut.json"
    data = LM_EVAL_FILE.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    code, out, err = cli(capsys, "predict", "--from", str(cut))
    assert code == 2 and out == ""
    assert err.startswith(f"benchpress: error: {cut}: truncated JSON: ")
    assert err.endswith("(was the file cut short while being written or copied?)\n")

    pattern = str(tmp_path / "nothing-*.json")
    code, _, err = cli(capsys, "predict", "--from", pattern)
    assert code == 2 and err == f"benchpress: error: {pattern}: the pattern matches no file\n"

    code, _, err = cli(capsys, "predict", "--from", str(tmp_path / "none.json"))
    assert code == 2 and "none.json: no such file or folder" in err

    code, _, err = cli(capsys, "predict", "--from", str(cut.parent), "--map", "oops")
    assert code == 2 and "--map: expected task=benchmark or task:metric=benchmark" in err


def test_names_from_files_are_escaped(capsys, tmp_path: Path) -> None:
    evil = "m\x1b]0;owned\x07\u202e"
    path = write(tmp_path, "s.csv", f"model,benchmark,score\n{evil},gpqa_diamond,45\n")
    code, out, err = cli(capsys, "predict", "--from", str(path), "--targets", "chat")
    assert code == 0, err
    assert out.splitlines()[0] == (
        "read 1 file (tidy) for m\\x1b]0;owned\\x07\\u202e: 1 score used: gpqa_diamond=45"
    )
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    path = write(tmp_path, "t.csv", f"model,benchmark,score\nm,{evil},45\n")
    code, out, err = cli(capsys, "predict", "--from", str(path))
    assert code == 2 and "\x1b" not in err and "\u202e" not in err
    assert "unknown benchmark 'm\\x1b]0;owned\\x07\\u202e'" in err


def test_compare_and_next_from_files(capsys, bp: BenchPress, tmp_path: Path) -> None:
    path = write(tmp_path, "two.csv", TWO_MODELS)
    code, out, err = cli(capsys, "compare", "--from", str(path), "--targets", "ifeval", "--csv")
    assert code == 0, err
    _, plain, _ = cli(
        capsys,
        "compare",
        "--model",
        "A:gpqa_diamond=45,mmlu_pro=60",
        "--model",
        "B:gpqa_diamond=70",
        "--targets",
        "ifeval",
        "--csv",
    )
    assert out == plain
    code, out, _ = cli(
        capsys,
        "compare",
        "--from",
        str(path),
        "--model",
        "C:gpqa_diamond=90",
        "--targets",
        "ifeval",
    )
    assert code == 0
    assert out.splitlines()[:2] == [
        "read 1 file (tidy) for A: 2 scores used: gpqa_diamond=45, mmlu_pro=60",
        "read 1 file (tidy) for B: 1 score used: gpqa_diamond=70",
    ]
    assert {line.split()[2] for line in out.splitlines()[4:7]} == {"A", "B", "C"}
    code, _, err = cli(capsys, "compare", "--from", str(path), "--reference", "claude-3-opus")
    assert code == 2 and "--reference compares exactly one model, got 2 (A, B)" in err

    code, out, err = cli(capsys, "next", "--from", str(path), "--model", "A", "--csv")
    assert code == 0, err
    _, plain, _ = cli(capsys, "next", "--scores", "gpqa_diamond=45,mmlu_pro=60", "--csv")
    assert out == plain
    code, out, err = cli(capsys, "next", "--from", str(path), "--model", "A", "--json")
    doc = json.loads(out)
    assert doc["inputs"]["model"] == "A" and len(doc["inputs"]["used"]) == 2
    assert doc["commands"]["predict"].startswith("benchpress predict --from results/ --from ")


def _lm_eval_run(results: dict[str, dict], groups: dict[str, list[str]], model: str) -> str:
    """The real results file, rewritten as lm-eval writes a run of `results` for `model`."""
    doc = json.loads(LM_EVAL_FILE.read_text(encoding="utf-8"))
    config = next(iter(doc["configs"].values()))
    tasks = [t for t in results if t not in groups]
    meta = {**config["metadata"], "pretrained": model}
    doc["results"] = {t: {"alias": t, **metrics} for t, metrics in results.items()}
    doc["configs"] = {t: {**config, "task": t, "metadata": meta} for t in tasks}
    doc["versions"] = dict.fromkeys(tasks, 1.0)
    doc["n-shot"] = dict.fromkeys(tasks, 0)
    doc["higher_is_better"] = {t: {"acc": True} for t in tasks}
    doc["n-samples"] = {t: {"original": 100, "effective": 100} for t in tasks}
    doc["group_subtasks"] = {**groups, **{t: [] for t in tasks if t not in groups}}
    doc["model_name"] = model
    doc["config"] = {**doc["config"], "model_args": f"pretrained={model}"}
    return json.dumps(doc)


def test_a_group_counts_its_subtasks_and_notes_the_harness(capsys, bp, tmp_path) -> None:
    subjects = ["mmlu_anatomy", "mmlu_astronomy", "mmlu_virology"]
    results = {
        "mmlu": {"acc,none": 0.612, "acc_stderr,none": 0.004},
        **{s: {"acc,none": 0.6, "acc_stderr,none": 0.04} for s in subjects},
        "my_own_eval": {"acc,none": 0.5, "acc_stderr,none": 0.05},
    }
    run = write(tmp_path, "me__mine/results_2026-02-01T10-00-00.json", "")
    run.write_text(_lm_eval_run(results, {"mmlu": subjects}, "me/mine"), encoding="utf-8")
    code, out, err = cli(capsys, "predict", "--from", str(tmp_path), "--targets", "mmlu_pro")
    assert code == 0, err
    from predictor.results import load_map

    note = load_map("lm_eval")["mmlu"][0].note
    assert out.splitlines()[:4] == [
        "read 1 file (lm_eval) for me/mine: 1 score used: mmlu=61.2",
        "unmapped: my_own_eval (3 subtasks of mmlu not listed)",
        f"note: mmlu: {note}",
        "(map a task with --map TASK=BENCHMARK)",
    ]
    code, out, _ = cli(capsys, "predict", "--from", str(tmp_path), "--json")
    inputs = json.loads(out)["inputs"]
    assert inputs["unmapped"] == ["my_own_eval"]
    assert inputs["unmapped_subtasks"] == {"mmlu": 3}
    (used,) = inputs["used"]
    assert (used["benchmark_id"], used["score"], used["metric"], used["raw_score"]) == (
        "mmlu",
        pytest.approx(61.2),
        "acc,none",
        0.612,
    )
    assert (used["unit"], used["stderr"], used["format"]) == (
        "fraction",
        pytest.approx(0.4),
        "lm_eval",
    )
    assert bp.predict(tmp_path) == bp.predict({"mmlu": 0.612 * 100})  # as converted


def test_real_every_eval_ever_records_predict_as_their_scores(bp: BenchPress) -> None:
    folder = FIXTURES / "eee" / "records" / "hfopenllm_v2"
    path = sorted(folder.rglob("*.json"))[0]
    frame = bp.read_results(path)
    scores = dict(frame.filter(pl.col("status") == "mapped").select("benchmark_id", "score").rows())
    assert sorted(scores) == [
        "open_llm_bbh",
        "open_llm_gpqa",
        "open_llm_ifeval",
        "open_llm_math_lvl5",
        "open_llm_mmlu_pro",
        "open_llm_musr",
    ]
    # the file names its model, which the snapshot knows (the Open LLM Leaderboard states its
    # Hub upload day): the file's answer is the named one
    named = frame["model"][0]
    answer = bp.predict(path)
    assert answer == bp.predict(scores, model=named)
    assert (answer.side.basis, answer.side.release_date) == ("known model", "2024-04-13")
    everyone = bp.read_results(folder)  # 61 records, one model each
    models = everyone["model"].unique(maintain_order=True).to_list()
    assert len(models) == len(list(folder.rglob("*.json")))
    assert bp.predict(everyone, model=models[-1]) == bp.predict(
        dict(
            everyone.filter((pl.col("model") == models[-1]) & (pl.col("status") == "mapped"))
            .select("benchmark_id", "score")
            .rows()
        ),
        model=models[-1],
    )


def test_summaries_of_every_model_at_once_equal_one_by_one(bp: BenchPress) -> None:
    from predictor.results.inputs import summarise, summarise_models

    frame = bp.read_results(FIXTURES / "eee" / "records")  # 360 records, HAL agents included
    every = summarise_models(frame)
    assert list(every) == frame["model"].unique(maintain_order=True).to_list()
    for model in list(every)[::37]:
        assert every[model] == summarise(frame, model)
    hal = [s for m, s in every.items() if "(" in m and s.unmapped]
    assert hal and all(not s.scores or s.used for s in hal)


def test_one_benchmark_scored_twice_differently_is_an_error(capsys, tmp_path) -> None:
    write(tmp_path, "a.csv", "model,benchmark,score\nmine,gpqa_diamond,45\n")
    write(tmp_path, "b.csv", "model,benchmark,score\nmine,GPQA Diamond,50\n")
    code, out, err = cli(capsys, "predict", "--from", str(tmp_path))
    assert code == 2 and out == ""
    assert err == (
        f"benchpress: error: {tmp_path / 'b.csv'}: gpqa_diamond is scored twice with different "
        f"values: 45 in {tmp_path / 'a.csv'} (gpqa_diamond) and 50 in {tmp_path / 'b.csv'} "
        "(GPQA Diamond) (keep one of the two files, or map one task elsewhere with --map)\n"
    )
    write(tmp_path, "b.csv", "model,benchmark,score\nmine,GPQA Diamond,45\n")  # the same: fine
    code, out, err = cli(capsys, "predict", "--from", str(tmp_path), "--json")
    assert code == 0, err
    assert [r["file"] for r in json.loads(out)["inputs"]["used"]] == [str(tmp_path / "a.csv")]
