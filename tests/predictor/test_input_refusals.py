"""Issue 38, inputs: a release date far outside the fit's dates is refused (it was extrapolated
to 100 or 0 with zero-width intervals), a predicted cell's interval never has zero width, and
names in error messages are bounded and escaped. Against the bundled snapshot, as a user
meets them through Python and the command line."""

from __future__ import annotations

import math

import numpy as np
import pytest

from predictor import BenchPress
from predictor.api import ReleaseDateError
from predictor.names.resolve import UnknownNameError
from predictor.transforms import ScaleTransform
from predictor.util.paths import bundled_snapshot_dir
from predictor.values import ProbeScoreError
from tests.support.cli_runs import bundled_cli

cli = bundled_cli

RED_TEAM = {"gpqa_diamond": 60.0, "mmlu_pro": 70.0, "hle": 10.0}
RED_TEAM_SCORES = "gpqa_diamond=60,mmlu_pro=70,hle=10"
# Llama 3.2 1B Instruct's own published scores (the bundled snapshot's cells): a small model,
# predicted below the valid range on many benchmarks (vending_bench_2 among them)
LLAMA_1B = {
    "gpqa_diamond": 16.57,
    "mmlu_pro": 20.8,
    "ifeval": 52.37,
    "gsm8k": 39.04,
    "math_500": 23.4,
}
# the bundled fit's models were released 2021-08-05 to 2026-07-01
EARLIEST, NEWEST = "2020-08-05", "2027-07-01"


def refused(day: str) -> str:
    return (
        f"release_date '{day}' is outside the dates this snapshot's fit can use: "
        f"{EARLIEST} to {NEWEST} (its models' release dates, 2021-08-05 to 2026-07-01, and 12 "
        "months either side); further out the trend in release dates would be extrapolated"
    )


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load("2026.12.07.3", store=bundled_snapshot_dir())


# ------------------------------------------------------------------------- release dates
@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01", "2035-01-01", "2027-07-02"])
def test_a_release_date_outside_the_fits_dates_is_refused(bp: BenchPress, day: str) -> None:
    with pytest.raises(ReleaseDateError) as caught:
        bp.predict(RED_TEAM, release_date=day)
    assert str(caught.value) == refused(day)
    assert isinstance(caught.value, ProbeScoreError) and isinstance(caught.value, ValueError)
    assert (caught.value.earliest, caught.value.newest) == (EARLIEST, NEWEST)
    # everything else that folds a new model in refuses it alike
    with pytest.raises(ReleaseDateError, match="outside the dates this snapshot's fit can use"):
        bp.predictive_draws(RED_TEAM, n=10, release_date=day)
    with pytest.raises(ReleaseDateError, match="outside the dates this snapshot's fit can use"):
        bp.side_for("my-model", release_date=day)


def test_the_range_ends_are_allowed_and_stated(bp: BenchPress) -> None:
    assert bp.release_date_range == (EARLIEST, NEWEST)
    for day in (EARLIEST, NEWEST, "2027"):
        answer = bp.predict(RED_TEAM, release_date=day)
        assert answer.side.release_date == day and answer.side.release_date_source == "given"
        assert all(p.high > p.low for p in answer.values() if not p.observed)
    with pytest.raises(ReleaseDateError, match="release_date '2020-08-04' is outside"):
        bp.predict(RED_TEAM, release_date="2020-08-04")


def test_a_known_models_own_date_outside_the_range_is_moved_to_its_end(bp: BenchPress) -> None:
    # gpt-2-xl (2019-11-05, Epoch AI) is in the snapshot but not in the fit
    answer = bp.predict(RED_TEAM, model="gpt-2-xl")
    assert answer.side.release_date == EARLIEST
    assert answer.side.note == (
        "gpt-2-xl's release date 2019-11-05 lies outside the dates the fit can use "
        f"({EARLIEST} to {NEWEST}): {EARLIEST} was used"
    )
    at_end = bp.predict(RED_TEAM, model="gpt-2-xl", release_date=EARLIEST)
    assert answer["swe_bench_verified"] == at_end["swe_bench_verified"]


@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01", "2035-01-01"])
def test_the_cli_refuses_the_date_with_exit_2(capsys: pytest.CaptureFixture[str], day) -> None:
    code, out, err = cli(capsys, "predict", "--scores", RED_TEAM_SCORES, "--release-date", day)
    assert (code, out) == (2, "")
    assert err == f"benchpress: error: {refused(day)}\n"


# ------------------------------------------------------------------- zero-width intervals
def test_no_predicted_cell_of_a_small_model_has_a_zero_width_interval(bp: BenchPress) -> None:
    for model in ("llama-3.2-1b-instruct", None):
        answer = bp.predict(LLAMA_1B, model=model)
        assert len(answer) == len(bp.fit_benchmarks_)
        predicted = [p for p in answer.values() if not p.observed]
        assert len(predicted) == len(bp.fit_benchmarks_) - len(LLAMA_1B)
        assert [p.benchmark for p in predicted if not p.high > p.low] == []
        assert all(p.low <= p.score <= p.high for p in predicted)
        # $0 (the valid range's end) is the point, and the interval runs up from it: on today's
        # main this was 0.0 [0.0, 0.0]
        vending = answer["vending_bench_2"]
        assert vending.score == vending.low == 0.0 and vending.high > 1000.0
        hle_text = answer["hle_text"]
        assert hle_text.low == 0.0 and hle_text.high > 1.0


def test_a_strong_models_flat_top_keeps_a_width(bp: BenchPress) -> None:
    # gpt-5.4's own scores: math_level_5 was 100.0 [100.0, 100.0]
    own = {"gpqa_diamond": 92.8, "mmlu_pro": 87.5, "hle": 39.8}
    answer = bp.predict(own, model="gpt-5.4")
    math = answer["math_level_5"]
    assert math.high == 100.0 and 90.0 < math.low < 100.0
    assert [p.benchmark for p in answer.values() if not p.observed and not p.high > p.low] == []


def test_the_transform_states_an_interval_past_its_edges() -> None:
    values = np.array([[10.0, 20.0], [500.0, 50.0], [2000.0, 80.0], [900.0, 60.0]])
    tf = ScaleTransform(["unbounded", "percent"], lower=[0.0, 0.0]).fit(values)
    bottom, top = tf.edges()
    assert bottom[0] == (0.0 - tf.mean_[0]) / tf.std_[0] and math.isinf(top[0])
    half = np.array([0.5, 0.5])
    inside = np.array([0.1, 0.2])
    assert np.array_equal(tf.interval(inside, half)[0], tf.inverse(inside - half))
    assert np.array_equal(tf.interval(inside, half)[1], tf.inverse(inside + half))
    far = np.array([-40.0, -40.0])  # far below $0 and the percent link's bottom
    assert np.array_equal(tf.inverse(far - half), tf.inverse(far + half))  # plain: collapsed
    low, high = tf.interval(far, half)
    assert np.array_equal(low, [0.0, 0.0])
    assert np.array_equal(high, tf.inverse(bottom + half)) and (high > 0).all()


# ----------------------------------------------------------------------- names in errors
BIG = "\x1b[2Jevil\nname" + "x" * (2 << 20)
BIG_SHOWN = repr(BIG[:200]) + f"\u2026 ({len(BIG)} characters)"


def test_names_in_error_messages_are_bounded_and_escaped(bp: BenchPress) -> None:
    assert BIG_SHOWN.startswith("'\\x1b[2Jevil\\nnamexxx") and len(BIG_SHOWN) < 240
    with pytest.raises(UnknownNameError) as caught:
        bp.predict({BIG: 50.0})
    assert str(caught.value) == f"unknown benchmark {BIG_SHOWN}"
    assert caught.value.name == BIG  # the exception keeps it whole
    with pytest.raises(UnknownNameError) as caught:
        bp.predict(RED_TEAM, base=BIG)
    assert str(caught.value) == f"unknown model {BIG_SHOWN}"
    with pytest.raises(ProbeScoreError) as caught:
        bp.predict(RED_TEAM, release_date=BIG)
    assert str(caught.value) == f"release_date must be a date (YYYY-MM-DD), got {BIG_SHOWN}"
    with pytest.raises(TypeError) as caught:
        bp.predict({"gpqa_diamond": BIG})  # type: ignore[dict-item]
    assert str(caught.value) == f"score for 'gpqa_diamond' must be a number, got {BIG_SHOWN}"
    with pytest.raises(UnknownNameError) as caught:
        bp.resolve_model("evil\nname\x1b[31m\u202e")
    assert str(caught.value).startswith("unknown model 'evil\\nname\\x1b[31m\\u202e'")


def test_the_cli_prints_a_long_or_hostile_name_on_one_short_line(
    capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    name = "evil\nname\x1b[2J" + "y" * 100_000  # as long as one argument may be
    code, _, err = cli(capsys, "predict", "--scores", RED_TEAM_SCORES, "--base", name)
    shown = repr(name[:200]) + f"\u2026 ({len(name)} characters)"
    assert (code, err) == (2, f"benchpress: error: unknown model {shown}\n")
    # a path is a name too: its newline no longer splits the error line
    try:
        from predictor.cli import main

        code = main(["predict", "--scores", RED_TEAM_SCORES, "--store", f"{tmp_path}/a\nb"])
    except SystemExit as exc:
        code = int(exc.code)
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1
    assert err == (
        f"benchpress: error: snapshot store {tmp_path}/a\\nb does not exist or is not a directory\n"
    )
