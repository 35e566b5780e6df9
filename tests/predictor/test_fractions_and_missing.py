"""Results that mislead. Probe scores all in 0-1 are fractions, converted to percent
with one line saying so (CLI, Python, /api/predict alike); a fractional `--require` threshold
on a percent benchmark is refused; `BenchPress.fit` warns on a frame of fractions; a probe the
snapshot has too few scores to use is left out with a warning instead of aborting."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

from predictor import BenchPress, FractionScoresWarning
from predictor.cli import main
from predictor.missing_probes import MissingProbesWarning
from predictor.values import ProbeScoreError
from tests.warehouse.test_track import GLOB, write_run

FRACTIONS = {"gpqa_diamond": 0.46, "mmlu_pro": 0.66, "hle": 0.2}
PERCENT = {"gpqa_diamond": 46.0, "mmlu_pro": 66.0, "hle": 20.0}
CONVERTED = (
    "every percent score given is at most 1 (gpqa_diamond=0.46, hle=0.2, mmlu_pro=0.66): read "
    "as fractions and converted to percent (gpqa_diamond=46, hle=20, mmlu_pro=66); give "
    "percentages (0-100) to silence this"
)
LEFT_OUT = (
    "mt_bench: too few scores in snapshot 2026.12.07.3 to be used as a probe, left out; "
    "predicting from the other 2 (gpqa_diamond, mmlu_pro); handle_missing='error' "
    "(--handle-missing error) refuses instead"
)


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load()


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code)
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------- fractions
def test_python_converts_fractions_and_says_so_once(bp: BenchPress) -> None:
    with pytest.warns(FractionScoresWarning) as caught:
        answer = bp.predict(FRACTIONS)
    assert [str(w.message) for w in caught] == [CONVERTED]
    assert answer == bp.predict(PERCENT)  # exactly the percent answer
    assert answer["mmlu_pro"].score == 66.0 and answer["mmlu_pro"].observed
    with pytest.warns(FractionScoresWarning):  # a standard error converts with its score
        measured = bp.predict({"gpqa_diamond": (0.46, 0.02), "chatbot_arena_elo": 1300.0})
    assert measured.stderr == {"gpqa_diamond": 2.0}
    assert measured["chatbot_arena_elo"].score == 1300.0  # open scales never touched
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # kept as given: no conversion, no warning
        kept = bp.predict(FRACTIONS, convert_fractions=False)
    assert kept["mmlu_pro"].score == 0.66


def test_a_fraction_beside_percent_scores_is_named_not_converted(bp: BenchPress) -> None:
    with pytest.warns(FractionScoresWarning) as caught:
        answer = bp.predict({"gpqa_diamond": 80, "mmlu_pro": 0.66})
    assert [str(w.message) for w in caught] == [
        "mmlu_pro=0.66 looks like a fraction beside percent scores (gpqa_diamond=80): scores "
        "are percentages (0-100); give mmlu_pro=66 if 0.66 is a fraction"
    ]
    assert answer["mmlu_pro"].score == 0.66


def test_scores_that_low_which_models_do_have_stay_percent(bp: BenchPress) -> None:
    """A weak model near zero on hard benchmarks (ARC-AGI-2 0.5%, FrontierMath 0.3%: models
    in the snapshot score 0 there) is such a model, not fractions: kept, with a warning."""
    with pytest.warns(FractionScoresWarning) as caught:
        answer = bp.predict({"arc_agi_2": 0.5, "frontiermath": 0.3})
    assert [str(w.message) for w in caught] == [
        "every percent score given is at most 1 (arc_agi_2=0.5, frontiermath=0.3): kept as "
        "percentages, as scores this low are seen on these benchmarks; multiply by 100 if "
        "they are fractions"
    ]
    assert answer["arc_agi_2"].score == 0.5 and answer["frontiermath"].score == 0.3


def test_cli_predict_converts_fractions_with_one_stderr_line(capsys) -> None:
    targets = ("--targets", "aider_polyglot_diff,mmlu_pro")
    code, out, err = cli(
        capsys, "predict", "--scores", "gpqa_diamond=0.46,mmlu_pro=0.66,hle=0.2", *targets
    )
    assert (code, err) == (0, f"benchpress: warning: {CONVERTED}\n")
    code, percent, err = cli(
        capsys, "predict", "--scores", "gpqa_diamond=46,mmlu_pro=66,hle=20", *targets
    )
    assert (code, err) == (0, "")
    assert out == percent  # the same table as for the percentages
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:4]}
    assert rows["mmlu_pro"][1] == "66.0" and rows["aider_polyglot_diff"][1] != "0.0"


def test_the_web_predict_converts_and_warns_like_python(bp: BenchPress) -> None:
    from predictor.web import api
    from predictor.web.catalog import Catalog

    catalog = Catalog()
    answer = api.predict(catalog, {"scores": "gpqa_diamond=0.46,mmlu_pro=0.66,hle=0.2"})
    assert answer["warnings"] == [CONVERTED]
    rows = {p["benchmark"]: p for p in answer["predictions"]}
    assert rows["mmlu_pro"]["score"] == 66.0
    assert rows["hle"]["score"] == 20.0
    answer = api.predict(catalog, {"scores": "gpqa_diamond=80,mmlu_pro=74,mt_bench=8.5"})
    assert answer["warnings"] == [LEFT_OUT]
    observed = sorted(p["benchmark"] for p in answer["predictions"] if p["observed"])
    assert observed == ["gpqa_diamond", "mmlu_pro"]  # predicted from the other two


def test_a_fractional_require_threshold_is_refused_naming_it(
    tmp_path, monkeypatch, benchpress_home, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    write_run(tmp_path)
    code, out, err = cli(capsys, "track", "run-x", "--from", GLOB, "--require", "mmlu_pro>=0.5")
    assert (code, out) == (2, "")
    assert err == (
        "benchpress: error: --require: mmlu_pro>=0.5 on a percent benchmark (0-100) looks like "
        "a fraction; give mmlu_pro>=50 for 50%\n"
    )
    assert not (benchpress_home / "private").exists()  # nothing stored


def _frame(scale: float, fractional_column: str | None = None) -> pl.DataFrame:
    rows = [
        (f"m{i}", f"b{j}", (20.0 + 5 * i + 3 * j + (i * j) % 7) / scale)
        for i in range(12)
        for j in range(5)
    ]
    frame = pl.DataFrame(rows, schema=["model", "benchmark", "score"], orient="row")
    if fractional_column is not None:
        frame = frame.with_columns(
            pl.when(pl.col("benchmark") == fractional_column)
            .then(pl.col("score") / 100)
            .otherwise(pl.col("score"))
            .alias("score")
        )
    return frame


def test_fit_warns_on_a_frame_or_column_of_fractions() -> None:
    with pytest.warns(FractionScoresWarning) as caught:
        BenchPress.fit(_frame(100.0), method="als")
    assert [str(w.message) for w in caught] == [
        "every percent score of the frame lies in 0-1 (5 benchmarks): BenchPress.fit takes "
        "percentages (0-100); multiply by 100 if they are fractions, or give the column scale "
        "'unbounded' if it is on another scale"
    ]
    with pytest.warns(FractionScoresWarning) as caught:
        BenchPress.fit(_frame(1.0, "b3"), method="als")
    assert [str(w.message) for w in caught] == [
        "percent benchmarks of the frame in 0-1 beside others in 0-100 (b3): scores are "
        "percentages; multiply by 100 if they are fractions, or give the column scale "
        "'unbounded' if it is on another scale"
    ]
    unbounded = _frame(100.0).with_columns(scale=pl.lit("unbounded"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FractionScoresWarning)
        BenchPress.fit(_frame(1.0), method="als")  # percentages: nothing said
        BenchPress.fit(unbounded, method="als")  # open scales never looked at


# --------------------------------------------------------------- one unusable probe
def test_python_leaves_an_unfitted_probe_out_by_default(bp: BenchPress) -> None:
    given = {"gpqa_diamond": 80, "mmlu_pro": 74, "mt_bench": 8.5}
    with pytest.warns(MissingProbesWarning) as caught:
        answer = bp.predict(given)
    assert [str(w.message) for w in caught] == [LEFT_OUT]
    assert answer == bp.predict({"gpqa_diamond": 80, "mmlu_pro": 74})
    with pytest.raises(ProbeScoreError, match="'mt_bench' has too few observations"):
        bp.predict(given, handle_missing="error")
    with pytest.raises(ProbeScoreError, match="'mt_bench' has too few observations"):
        bp.predict({"mt_bench": 8.5})  # no other probe: nothing to predict from


def test_cli_predict_leaves_it_out_or_refuses_with_handle_missing(capsys) -> None:
    scores = ("--scores", "gpqa_diamond=80,mmlu_pro=74,mt_bench=8.5", "--targets", "mmlu_pro")
    code, out, err = cli(capsys, "predict", *scores)
    assert (code, err) == (0, f"benchpress: warning: {LEFT_OUT}\n")
    assert out.splitlines()[2].split() == ["mmlu_pro", "74.0", "percent", "probe"]
    code, out, err = cli(capsys, "predict", *scores, "--handle-missing", "error")
    assert (code, out) == (2, "")
    assert err == (
        "benchpress: error: benchmark 'mt_bench' has too few observations in snapshot "
        "2026.12.07.3 to be used as a probe\n"
    )
    code, _, err = cli(capsys, "predict", *scores, "--handle-missing", "drop")
    assert code == 2 and "invalid choice: 'drop' (choose from 'interpolate', 'error')" in err


# --------------------------------------- scores under 1% from a results file stay as they are
EARLY = {"humaneval": ("pass@1,create_test", 0.006), "aime25": ("exact_match,none", 0.0)}


@pytest.fixture
def early_checkpoint(tmp_path, monkeypatch) -> str:
    """An early checkpoint's lm-eval file: HumanEval 0.6% (below any model in the snapshot,
    2.4) and AIME 2025 0%. Every score lies in 0-1 as percent, but the file states fractions:
    converting again would read HumanEval as 60%."""
    import json

    from tests.warehouse.test_track import lm_eval_results

    doc = lm_eval_results(
        "team/run-b/checkpoint-50",
        {task: value for task, (_, value) in EARLY.items()},
        metrics={task: key for task, (key, _) in EARLY.items()},
    )
    path = tmp_path / "ckpts" / "step-50" / "results_2026-02-01T10-00-00.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return "ckpts/step-*/results_*.json"


def test_predict_next_and_draws_keep_a_files_scores_under_one_percent(
    bp: BenchPress, early_checkpoint: str
) -> None:
    as_read = {"humaneval": (0.6, 1.2), "aime_2025": (0.0, 1.2)}  # the file's stderr 0.012
    model = "team/run-b/checkpoint-50"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FractionScoresWarning)
        predicted = bp.predict(early_checkpoint)
        ranked = bp.what_to_run_next(early_checkpoint, targets=["humaneval_plus"], top=3)
    assert predicted["humaneval"].score == pytest.approx(0.6)
    exact = bp.predict(as_read, convert_fractions=False, model=model)
    assert predicted["humaneval_plus"].score == pytest.approx(exact["humaneval_plus"].score)
    expected = bp.what_to_run_next(
        as_read, targets=["humaneval_plus"], top=3, convert_fractions=False, model=model
    )
    assert ranked.equals(expected)
    typed = {"humaneval": 0.6, "aime_2025": 0.0}  # typed by hand, the same numbers are fractions
    with pytest.warns(FractionScoresWarning, match="converted to percent"):
        converted = bp.predict(typed, model=model)
    assert converted["humaneval"].score == 60.0
    benchmarks, draws = bp.predictive_draws(as_read, n=400, convert_fractions=False, model=model)
    assert draws[:, benchmarks.index("humaneval")] == pytest.approx(0.6)


def test_track_and_next_from_files_keep_scores_under_one_percent(
    benchpress_home, early_checkpoint: str, capsys
) -> None:
    """Converted again, the file's standard error of 1.2 points became 120 and track refused
    the checkpoint; HumanEval would have been read as 60%."""
    import json

    code, out, err = cli(capsys, "track", "run-b", "--from", early_checkpoint, "--require",
                         "humaneval_plus>=30", "--targets", "humaneval_plus", "--json")  # fmt: skip
    assert (code, err) == (0, "")
    checkpoint = json.loads(out)["checkpoints"][0]
    assert checkpoint["probes"] == {"humaneval": 0.6, "aime_2025": 0.0}
    [shown] = checkpoint["predictions"]
    expected = BenchPress.load().predict(
        {"humaneval": (0.6, 1.2), "aime_2025": (0.0, 1.2)}, model="run-b", convert_fractions=False
    )["humaneval_plus"]
    assert (shown["score"], shown["low"]) == pytest.approx((expected.score, expected.low))
    code, out, err = cli(capsys, "next", "--from", early_checkpoint, "--targets",
                         "humaneval_plus", "--json")  # fmt: skip
    assert (code, err) == (0, "")
    first = json.loads(out)["rows"][0]
    as_read = {"humaneval": (0.6, 1.2), "aime_2025": (0.0, 1.2)}
    known = BenchPress.load().predict(
        as_read, model="team/run-b/checkpoint-50", convert_fractions=False
    )
    assert first["predicted"] == pytest.approx(known[first["benchmark"]].score)
