"""Results readers at their edges, through `read_results`, `BenchPress.read_results` and the
real CLI (`benchpress models add`, `benchpress track`) in a temp BENCHPRESS_HOME:

- tidy scores of exactly 0 and 100 are in range; a tidy `80%` is 80;
- a HELM stat computed on no instance (`count: 0`) is `not_run`, even with a mean;
- `--map task=A` and `--map 'task:acc,none=B'` together: the metric's own override wins;
- two files scoring one benchmark 45.0 and 45.3 are a conflict, refused;
- a `complement` map row turns an error rate of 0.12 into 88.0;
- a model with a benchmark the snapshot did not fit counts only its mapped benchmarks;
- `track` refuses a run whose checkpoint names fold onto a snapshot (public) model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from predictor import BenchPress
from predictor.cli import main
from predictor.results import ResultsError, mapping, parse_overrides, probe_scores, read_results
from tests.results.test_helm_reader import copy_run, edit_stats, unperturbed
from tests.warehouse.test_track import lm_eval_results
from warehouse import private_models as store


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load()


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def tidy(path: Path, *rows: str) -> Path:
    path.write_text("model,benchmark,score\n" + "".join(f"{r}\n" for r in rows), "utf-8")
    return path


def mapped(frame: pl.DataFrame) -> list[tuple]:
    return frame.filter(pl.col("status") == "mapped").select("benchmark_id", "score").rows()


# ------------------------------------------------------------------------------ tidy scores
def test_tidy_scores_of_exactly_0_and_100_are_accepted(
    bp: BenchPress, tmp_path: Path, benchpress_home: Path, capsys
) -> None:
    path = tidy(tmp_path / "edges.csv", "m,hle,0", "m,gpqa_diamond,100")
    frame = bp.read_results([str(path)])
    assert sorted(mapped(frame)) == [("gpqa_diamond", 100.0), ("hle", 0.0)]
    predicted = bp.predict([str(path)], targets=["hle", "gpqa_diamond"])
    assert (predicted["hle"].score, predicted["hle"].observed) == (0.0, True)
    assert (predicted["gpqa_diamond"].score, predicted["gpqa_diamond"].observed) == (100.0, True)
    code, out, err = cli(capsys, "models", "add", "edges", "--from", str(path))
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (
        "read 1 file (tidy) for m: 2 scores used: hle=0, gpqa_diamond=100"
    )


def test_a_tidy_score_with_a_percent_sign_is_that_percentage(bp: BenchPress, tmp_path) -> None:
    path = tidy(tmp_path / "pct.csv", "m,hle,80%", "m,gpqa_diamond,7.5%")
    frame = bp.read_results([str(path)])
    assert sorted(mapped(frame)) == [("gpqa_diamond", 7.5), ("hle", 80.0)]
    assert probe_scores(frame) == {"hle": 80.0, "gpqa_diamond": 7.5}


# ------------------------------------------------------------------------------ HELM
def test_a_helm_stat_with_count_0_is_not_run_even_with_a_mean(tmp_path: Path) -> None:
    run = copy_run(tmp_path)

    def nothing_counted(stats: list) -> None:
        unperturbed(stats, "exact_match").update(count=0, sum=0, mean=0.3)

    edit_stats(run, nothing_counted)
    first = read_results(run).row(0, named=True)
    assert (first["metric"], first["status"], first["score"], first["raw_score"]) == (
        "exact_match",
        "not_run",
        None,
        None,
    )
    with pytest.raises(ResultsError, match="no result maps onto a benchmark of ours"):
        probe_scores(read_results(run))


# ------------------------------------------------------------------------------ --map
def lm_eval_file(path: Path, task: str, values: dict[str, float], higher: dict | None = None):
    """An lm-eval results file (the vendored real file's structure) with one task `task`
    reporting `values` ({"acc,none": 0.42, ...})."""
    doc = lm_eval_results("team/m-7b", {"leaderboard_mmlu_pro": 0.5})
    text = json.dumps(doc).replace("leaderboard_mmlu_pro", task)
    doc = json.loads(text)
    doc["results"][task] = {"alias": task, **values}
    if higher is not None:
        doc["higher_is_better"] = {task: higher}
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "maps",
    [
        ["my_task=hle", "my_task:acc,none=gpqa_diamond"],
        ["my_task:acc,none=gpqa_diamond", "my_task=hle"],
    ],
    ids=["task-first", "metric-first"],
)
def test_a_metric_specific_map_wins_over_the_task_wide_one(
    bp: BenchPress, tmp_path: Path, benchpress_home: Path, capsys, maps: list[str]
) -> None:
    path = lm_eval_file(
        tmp_path / "results_2026-02-01T10-00-00.json",
        "my_task",
        {"acc,none": 0.42, "acc_norm,none": 0.37},
    )
    frame = read_results(path, parse_overrides(maps))
    by_metric = {
        r["metric"]: (r["status"], r["benchmark_id"], r["score"], r["note"])
        for r in frame.iter_rows(named=True)
    }
    assert by_metric == {
        "acc,none": ("mapped", "gpqa_diamond", pytest.approx(42.0), "mapped by --map"),
        "acc_norm,none": ("mapped", "hle", pytest.approx(37.0), "mapped by --map"),
    }
    assert probe_scores(bp.read_results([str(path)], maps)) == {
        "gpqa_diamond": pytest.approx(42.0),
        "hle": pytest.approx(37.0),
    }
    argv = ["models", "add", "mapped", "--from", str(path)]
    for item in maps:
        argv += ["--map", item]
    code, out, err = cli(capsys, *argv)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (
        "read 1 file (lm_eval) for team/m-7b: 2 scores used: gpqa_diamond=42, hle=37"
    )


# ------------------------------------------------------------------------------ conflicts
def test_two_files_scoring_one_benchmark_45_and_45_3_are_refused(
    bp: BenchPress, tmp_path: Path, benchpress_home: Path, capsys
) -> None:
    first = tidy(tmp_path / "first.csv", "m,hle,45.0")
    second = tidy(tmp_path / "second.csv", "m,hle,45.3")
    message = (
        f"hle is scored twice with different values: 45 in {first} (hle) and 45.3 in {second} (hle)"
    )
    with pytest.raises(ResultsError, match=re.escape(message)):
        probe_scores(bp.read_results([str(first), str(second)]))
    with pytest.raises(ResultsError, match=re.escape(message)):
        bp.predict([str(first), str(second)])
    code, out, err = cli(
        capsys, "models", "add", "twice", "--from", str(first), "--from", str(second)
    )
    assert (code, out) == (2, "")
    assert message in err
    assert not benchpress_home.exists()  # nothing written
    # the same score twice (45.0 and 45) is one result read twice, not a conflict
    same = tidy(tmp_path / "same.csv", "m,hle,45")
    assert probe_scores(bp.read_results([str(first), str(same)])) == {"hle": 45.0}


# ------------------------------------------------------------------------------ complement
@pytest.fixture
def maps_with_complement(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped lm-eval table plus one `complement` row for an error-rate task."""
    folder = tmp_path / "maps"
    folder.mkdir()
    shipped = (mapping.MAPS_DIR / "lm_eval.csv").read_text(encoding="utf-8")
    row = 'my_error_rate,"acc,none",gpqa_diamond,complement,an error rate: 100 - x\n'
    (folder / "lm_eval.csv").write_text(shipped.rstrip("\n") + "\n" + row, encoding="utf-8")
    monkeypatch.setattr(mapping, "MAPS_DIR", folder)
    mapping.load_map.cache_clear()
    yield
    mapping.load_map.cache_clear()


def test_a_complement_row_turns_an_error_rate_of_0_12_into_88(
    tmp_path: Path, maps_with_complement: None
) -> None:
    path = lm_eval_file(
        tmp_path / "results_2026-02-01T10-00-00.json",
        "my_error_rate",
        {"acc,none": 0.12, "acc_stderr,none": 0.01},
        higher={"acc": False},  # the file says lower is better: an error rate
    )
    (row,) = read_results(path).iter_rows(named=True)
    assert (row["status"], row["benchmark_id"], row["raw_score"], row["unit"]) == (
        "mapped",
        "gpqa_diamond",
        0.12,
        "fraction",
    )
    assert row["score"] == pytest.approx(88.0, abs=1e-9)
    assert row["stderr"] == pytest.approx(1.0, abs=1e-9)
    assert row["note"] == "an error rate: 100 - x"
    assert probe_scores(read_results(path)) == {"gpqa_diamond": pytest.approx(88.0, abs=1e-9)}


# ------------------------------------------------------------------------------ not fitted
def test_a_not_fitted_benchmark_is_kept_but_not_counted(
    bp: BenchPress, tmp_path: Path, benchpress_home: Path, capsys
) -> None:
    assert "agieval" in bp.benchmarks and "agieval" not in bp.fit_benchmarks_
    path = tidy(tmp_path / "team.csv", "m,gpqa_diamond,41.5", "m,mmlu_pro,55.25", "m,agieval,12")
    frame = bp.read_results([str(path)])
    assert frame.select("benchmark_id", "status").rows() == [
        ("gpqa_diamond", "mapped"),
        ("mmlu_pro", "mapped"),
        ("agieval", "not_fitted"),
    ]
    assert probe_scores(frame) == {"gpqa_diamond": 41.5, "mmlu_pro": 55.25}
    code, out, err = cli(capsys, "models", "add", "team-7b", "--from", str(path))
    assert (code, err) == (0, "")
    assert out.splitlines()[0].startswith(
        "read 1 file (tidy) for m: 2 scores used: gpqa_diamond=41.5, mmlu_pro=55.25"
    )
    listed = store.list_models(benchpress_home)
    assert listed.select("name", "benchmarks").rows() == [("team-7b", 2)]
    code, out, _ = cli(capsys, "models", "list")
    assert code == 0
    assert out.splitlines()[1].split()[:2] == ["team-7b", "2"]
    (loaded,) = store.load_private_models(benchpress_home)
    assert loaded["scores"] == {"gpqa_diamond": 41.5, "mmlu_pro": 55.25}


# ------------------------------------------------------------------------------ public names
def test_track_refuses_a_run_whose_checkpoints_fold_onto_a_public_model(
    bp: BenchPress, tmp_path: Path, benchpress_home: Path, monkeypatch, capsys
) -> None:
    public = "skyorbis/sky-ko-qwen2.5-7b-instruct-sft-step-5000"
    assert public in bp.resolve_model.ids
    run = "Skyorbis Sky Ko Qwen2.5 7B Instruct SFT"  # other case and punctuation: folds only
    checkpoint = f"{run}@step-5000"
    assert bp.resolve_model(checkpoint) == public
    monkeypatch.chdir(tmp_path)
    folder = Path("ckpts/step-5000")
    folder.mkdir(parents=True)
    tidy(folder / "results.csv", "m,hle,4", "m,gpqa_diamond,30")
    code, out, err = cli(capsys, "track", run, "--from", "ckpts/step-*/results.csv")
    assert (code, out) == (2, "")
    assert err == (
        f"benchpress: error: {checkpoint} names the snapshot model {public} (snapshot "
        f"{bp.version}); a private model needs a name of its own\n"
    )
    assert not benchpress_home.exists()  # nothing written, not even an empty store
