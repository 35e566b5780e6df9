"""Smoke-test scores (lm-eval's and Inspect's `limit`) are told apart from real ones: the
readers mark them `limited`, and `models add`, `track`, `predict --from` (and `BenchPress.predict`,
`save_models`) refuse them unless allowed, preferring a full run's score of the same benchmark.

Inputs: the real files in tests/fixtures/eval_formats, and the real lm-eval file edited into
what `--limit 2` writes (tests/fixtures/limited_runs/SOURCE.md says what was changed)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from types import SimpleNamespace

import duckdb
import polars as pl
import pytest

from predictor import BenchPress
from predictor.results import ResultsError, read_results
from predictor.results.limited import LimitedScoresWarning
from predictor.runs.runner import ProbeScores
from predictor.util.paths import bundled_snapshot_dir
from tests.support.cli_runs import bundled_cli
from warehouse import private_models as store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FULL = FIXTURES / "eval_formats" / "lm_eval" / "results_2026-01-21T03-44-18.458309.json"
LIMITED = FIXTURES / "limited_runs" / "results_2026-01-21T03-44-18.458309_edited_to_limit_2.json"
INSPECT = FIXTURES / "eval_formats" / "inspect" / "data_arc_qwen.json"  # a real 3-sample run
MODEL = "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"
MAP = "math_perturbed_full=math_level_5"
HINT = (
    "(use a full run's files (without --limit), or pass --allow-limited "
    "(Python: allow_limited=True) to use them anyway)"
)


def refusal(path: Path | str) -> str:
    return (
        f"{path}, config.limit: the run was limited to 2 items per task (limit 2), a smoke "
        f"test: math_level_5=50 is not the model's score {HINT}"
    )


def allowed(path: Path | str) -> str:
    return (
        f"{path}: math_level_5=50 from a run limited to 2 items per task (limit 2): a smoke "
        "test, not the model's scores, used as --allow-limited (allow_limited=True) asks"
    )


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=str(bundled_snapshot_dir()))


@pytest.fixture(autouse=True)
def _home(benchpress_home: Path) -> Path:
    return benchpress_home


def copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


ROW = ("task", "raw_score", "n", "limited", "limit")


# ---------------------------------------------------------------------------- readers
def test_the_lm_eval_reader_marks_a_run_with_config_limit(tmp_path: Path) -> None:
    assert read_results(FULL).select(ROW).rows() == [
        ("math_perturbed_full", 0.0, 5000, False, None),
        ("math_rephrased_full", 0.0004, 5000, False, None),
    ]
    assert read_results(LIMITED).select(ROW).rows() == [
        ("math_perturbed_full", 0.5, 2, True, "2"),
        ("math_rephrased_full", 0.0, 2, True, "2"),
    ]
    # a limit above the task's size left out nothing: n-samples says every item was scored
    doc = json.loads(FULL.read_text(encoding="utf-8"))
    doc["config"]["limit"] = 10000.0
    above = tmp_path / "results_above.json"
    above.write_text(json.dumps(doc), encoding="utf-8")
    assert read_results(above).select("limited", "limit").rows() == [(False, "10000")] * 2
    doc["config"]["limit"] = 0.1  # lm-eval: below 1, a fraction of each task's items
    doc["n-samples"] = {t: {"original": 5000, "effective": 500} for t in doc["n-samples"]}
    above.write_text(json.dumps(doc), encoding="utf-8")
    assert read_results(above).select("limited", "limit").rows() == [(True, "0.1")] * 2


def test_the_inspect_reader_marks_a_limited_eval_in_json_and_eval_logs(tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    columns = ("task", "metric", "raw_score", "n", "limited", "limit")
    expected = [("inspect_evals/arc_easy", "choice/accuracy", 1 / 3, 3, True, "3")]
    assert read_results(INSPECT).select(columns).rows() == expected
    log = read_eval_log(str(INSPECT))
    assert (log.eval.config.limit, log.eval.dataset.samples) == (3, 2376)
    write_eval_log(log, str(tmp_path / "arc.eval"))  # the same log as Inspect's .eval zip
    assert read_results(tmp_path / "arc.eval").select(columns).rows() == expected
    log.eval.config.limit = (0, 2376)  # a range over the whole dataset left out nothing
    write_eval_log(log, str(tmp_path / "whole.eval"))
    assert read_results(tmp_path / "whole.eval").select("limited", "limit").rows() == [
        (False, "0-2376")
    ]
    log.eval.config.limit = (3, 2376)
    write_eval_log(log, str(tmp_path / "range.eval"))
    assert read_results(tmp_path / "range.eval").select("limited", "limit").rows() == [
        (True, "3-2376")
    ]


# ---------------------------------------------------------------------------- models add
def test_models_add_refuses_a_limited_run_then_stores_it_with_allow_limited(
    capsys, tmp_path: Path, benchpress_home: Path
) -> None:
    path = copy(LIMITED, tmp_path / "runs" / "limited-2" / LIMITED.name)
    code, out, err = bundled_cli(capsys, "models", "add", "mine", "--from", str(path), "--map", MAP)
    assert (code, out) == (2, "")
    assert err == f"benchpress: error: {refusal(path)}\n"
    assert store.list_models(benchpress_home).height == 0  # nothing stored

    argv = ["models", "add", "mine", "--from", str(path), "--map", MAP, "--allow-limited"]
    code, out, err = bundled_cli(capsys, *argv)
    assert code == 0, err
    assert err == f"benchpress: warning: {allowed(path)}\n"
    assert out.splitlines()[2] == (
        f"smoke-test scores used (--allow-limited): math_level_5 (2 items per task, {path})"
    )
    cells = store.model_cells("mine", benchpress_home)
    assert cells.select(
        "benchmark_id", "score", "status", "task", "n", "limited", "limit"
    ).rows() == [
        ("math_level_5", 50.0, "mapped", "math_perturbed_full", 2, True, "2"),
        (None, None, "unmapped", "math_rephrased_full", 2, True, "2"),
    ]


# ---------------------------------------------------------------------------- predict --from
def test_predict_from_a_folder_with_a_full_and_a_limited_run_uses_the_full_one(
    capsys, bp: BenchPress, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    full = copy(FULL, out / "math" / FULL.name)
    smoke = copy(LIMITED, out / "limited-2" / "math" / LIMITED.name)
    code, text, err = bundled_cli(
        capsys, "predict", "--from", str(out), "--map", MAP, "--targets", "mmlu_pro"
    )
    assert (code, err) == (0, "")
    assert text.splitlines()[:4] == [
        f"read 2 files (lm_eval) for {MODEL}: 1 score used: math_level_5=0",
        "unmapped: math_rephrased_full",
        f"smoke-test scores not used (a full run's are): math_level_5 (2 items per task, {smoke})",
        "note: math_level_5: mapped by --map",
    ]
    argv = ["predict", "--from", str(out), "--map", MAP, "--targets", "mmlu_pro", "--json"]
    code, text, err = bundled_cli(capsys, *argv)
    inputs = json.loads(text)["inputs"]
    assert [(u["benchmark_id"], u["score"], u["n"], u["file"]) for u in inputs["used"]] == [
        ("math_level_5", 0.0, 5000, str(full))
    ]
    assert (inputs["limited"], inputs["superseded_limited"]) == (
        [],
        [f"math_level_5 (2 items per task, {smoke})"],
    )
    frame = bp.read_results(out, overrides=[MAP]).filter(pl.col("task") == "math_perturbed_full")
    assert frame.select("file", "status", "score", "limited").rows() == [
        (str(smoke), "limited", 50.0, True),
        (str(full), "mapped", 0.0, False),
    ]
    # the same as predicting from the full run's file alone
    code, alone, _ = bundled_cli(capsys, "predict", "--from", str(full), "--map", MAP, "--csv")
    _, both, _ = bundled_cli(capsys, "predict", "--from", str(out), "--map", MAP, "--csv")
    assert code == 0 and both == alone

    # the smoke test's folder alone: refused, naming the file and the limit
    code, text, err = bundled_cli(capsys, "predict", "--from", str(smoke.parent), "--map", MAP)
    assert (code, text) == (2, "")
    assert err == f"benchpress: error: {refusal(smoke)}\n"


def test_python_predict_refuses_limited_scores_unless_allowed(bp: BenchPress) -> None:
    frame = bp.read_results(LIMITED, overrides=[MAP])
    with pytest.raises(ResultsError) as caught:
        bp.predict(frame, targets="mmlu_pro")
    assert str(caught.value) == refusal(LIMITED)
    with pytest.warns(LimitedScoresWarning) as caught_warnings:
        allowed_answer = bp.predict(frame, targets="mmlu_pro", allow_limited=True)
    assert [str(w.message) for w in caught_warnings] == [allowed(LIMITED)]
    # with the file's standard error (50 points over 2 items), which the fold-in weighs
    expected = bp.predict({"math_level_5": (50.0, 50.0)}, targets="mmlu_pro", model=MODEL)
    assert allowed_answer == expected
    with pytest.raises(ResultsError, match="limited to 2 items per task"):
        bp.what_to_run_next(frame, targets="mmlu_pro")


def test_a_probe_runs_limited_answer_is_refused_by_predict(bp: BenchPress) -> None:
    """`run_probe_benchmarks(..., limit=2)` answers `ProbeScores` (a dict with the run's
    frame): `bp.predict` of it is refused as the files would be."""
    frame = bp.read_results(LIMITED, overrides=[MAP])
    scores = ProbeScores(
        {"math_level_5": 50.0},
        model=MODEL,
        plan=SimpleNamespace(limit=2),
        files={"math_level_5": LIMITED},
        failed={},
        frame=frame,
    )
    assert scores.limited
    with pytest.raises(ResultsError) as caught:
        bp.predict(scores, targets="mmlu_pro")
    assert str(caught.value) == refusal(LIMITED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LimitedScoresWarning)
        answer = bp.predict(scores, targets="mmlu_pro", allow_limited=True)
    assert answer == bp.predict({"math_level_5": 50.0}, targets="mmlu_pro")


# ---------------------------------------------------------------------------- track
def test_track_refuses_a_limited_checkpoint_unless_allowed(
    capsys, tmp_path: Path, benchpress_home: Path
) -> None:
    smoke = copy(LIMITED, tmp_path / "ckpts" / "step-100" / LIMITED.name)
    argv = ["track", "run", "--from", str(smoke), "--map", MAP, "--targets", "mmlu_pro"]
    code, out, err = bundled_cli(capsys, *argv)
    assert (code, out) == (2, "")
    assert err == f"benchpress: error: {refusal(smoke)}\n"
    assert store.list_models(benchpress_home).height == 0
    code, out, err = bundled_cli(capsys, *argv, "--allow-limited")
    assert code == 0, err
    assert err == f"benchpress: warning: {allowed(smoke)}\n"
    cells = store.model_cells("run@step-100", benchpress_home)
    assert cells.filter(pl.col("status") == "mapped").select(
        "score", "limited", "limit"
    ).rows() == [(50.0, True, "2")]


def test_save_models_refuses_limited_rows_unless_allowed(
    bp: BenchPress, benchpress_home: Path
) -> None:
    rows = bp.read_results(LIMITED, overrides=[MAP])
    item = store.ModelImport("mine", rows, snapshot_version=bp.version)
    with pytest.raises(ResultsError) as caught:
        store.save_models([item], home=benchpress_home)
    assert str(caught.value) == refusal(LIMITED)
    assert not store.store_path(benchpress_home).exists()
    store.save_models([item], home=benchpress_home, allow_limited=True)
    assert store.model_cells("mine", benchpress_home)["limited"].to_list() == [True, True]


# ---------------------------------------------------------------------------- the store
def test_a_store_of_schema_1_is_read_as_is_then_migrated_on_write(
    bp: BenchPress, benchpress_home: Path
) -> None:
    path = store.store_path(benchpress_home)
    path.parent.mkdir(parents=True)
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE store_schema (version INTEGER NOT NULL, applied_at TIMESTAMPTZ)")
    con.execute(store._SCHEMA_V1)
    con.execute("INSERT INTO store_schema VALUES (1, now())")
    con.execute("INSERT INTO models VALUES ('old', NULL, NULL, now(), NULL, 'm')")
    con.execute(
        "INSERT INTO cells (model, source_model, benchmark_id, score, status, file, "
        "file_sha256) VALUES ('old', 'm', 'gpqa_diamond', 41.0, 'mapped', 'a.csv', 'ab')"
    )
    con.close()
    before = store.model_cells("old", benchpress_home)  # read-only: not migrated
    assert before.select("benchmark_id", "score", "limited", "limit").rows() == [
        ("gpqa_diamond", 41.0, None, None)
    ]
    rows = bp.read_results(FULL, overrides=[MAP])
    store.save_models([store.ModelImport("new", rows)], home=benchpress_home)
    con = duckdb.connect(str(path), read_only=True)
    try:
        found = con.execute("SELECT version FROM store_schema ORDER BY 1").fetchall()
    finally:
        con.close()
    assert [row[0] for row in found] == [1, 2, 3]  # 3: the subset columns (`--items`)
    assert store.model_cells("old", benchpress_home).equals(before)
    assert store.model_cells("new", benchpress_home)["limited"].to_list() == [False, False]
