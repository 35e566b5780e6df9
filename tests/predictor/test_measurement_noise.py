"""Measurement noise in every answer: a probe may carry its standard error, the
fold-in weighs it by that (through the completer contract), and comparisons treat observed
scores as measurements, stating the noise they assumed."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from predictor import BenchPress
from predictor.methods.common import measurement_variance_z
from predictor.methods.registry import METHODS, make_completer
from predictor.results.noise import binomial_stderr, published_noise
from predictor.tracking.checkpoints import with_measurement_noise
from predictor.trust.rankings import compare_models, compare_with_known_models
from predictor.util.paths import bundled_snapshot_dir
from predictor.values import Measured, Noise, ProbeScoreError
from tests.support.cli_runs import bundled_cli

STORE = str(bundled_snapshot_dir())
LM_EVAL_FILE = (
    Path(__file__).resolve().parents[1]
    / "fixtures/eval_formats/lm_eval/results_2026-01-21T03-44-18.458309.json"
)
PHI = NormalDist().cdf
GPQA_ITEMS = 198  # GPQA Diamond's questions (predictor/results/facts/tasks.csv)


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=STORE)


@pytest.fixture(autouse=True)
def _home(benchpress_home: Path) -> Path:
    return benchpress_home


# ------------------------------------------------------------------------ the fold-in
def test_a_probe_may_carry_its_standard_error(bp: BenchPress) -> None:
    as_tuple = bp.predict({"gpqa_diamond": (90.0, 5.0), "hle": 20.0})
    assert as_tuple == bp.predict({"gpqa_diamond": Measured(90.0, 5.0), "hle": 20})
    assert as_tuple == bp.predict({"GPQA Diamond": [90, 5], "hle": 20.0})  # a JSON list
    assert as_tuple.stderr == {"gpqa_diamond": 5.0}  # only the probes given with one
    probe = as_tuple["gpqa_diamond"]  # comes back as given
    assert (probe.score, probe.low, probe.high, probe.observed) == (90.0, 90.0, 90.0, True)
    assert bp.predict({"gpqa_diamond": 90.0, "hle": 20.0}).stderr == {}


def test_a_noisy_probe_moves_the_prediction_less_and_widens_the_interval(
    bp: BenchPress,
) -> None:
    """From hle alone, then with GPQA Diamond at 90 given exactly and with a standard error
    of 5 points: the noisy probe moves mmlu_pro and AIME 2025 about a third as far, and
    their 90% intervals stay wider (the issue's acceptance test)."""
    before = bp.predict({"hle": 20.0})
    exact = bp.predict({"gpqa_diamond": 90.0, "hle": 20.0})
    noisy = bp.predict({"gpqa_diamond": (90.0, 5.0), "hle": 20.0})
    pinned = {  # before, exact, noisy; interval width exact, noisy
        "mmlu_pro": (83.679, 88.700, 85.194, 5.704, 12.147),
        "aime_2025": (88.080, 92.854, 89.418, 19.536, 26.825),
    }
    for benchmark, (start, moved, less, narrow, wide) in pinned.items():
        got = (before[benchmark].score, exact[benchmark].score, noisy[benchmark].score)
        assert got == pytest.approx((start, moved, less), abs=2e-3)
        assert abs(less - start) < 0.35 * abs(moved - start)
        widths = [p[benchmark].high - p[benchmark].low for p in (exact, noisy)]
        assert widths == pytest.approx([narrow, wide], abs=2e-3)


def test_what_to_run_next_starts_from_the_wider_intervals_of_a_noisy_probe(
    bp: BenchPress,
) -> None:
    exact = bp.what_to_run_next({"gpqa_diamond": 90.0, "hle": 20.0}, targets="chat", top=3)
    noisy = bp.what_to_run_next({"gpqa_diamond": (90.0, 5.0), "hle": 20.0}, targets="chat", top=3)
    assert noisy["width_before"][0] > exact["width_before"][0] + 1.0


def test_only_noise_beyond_a_published_scores_reaches_the_fold_in(bp: BenchPress) -> None:
    """The fit's noise already holds the noise of the published scores it was fitted on
    (1 point on mmlu_pro, the binomial error over GPQA Diamond's 198 items): a standard
    error within it changes nothing; above it, only the excess is added."""
    exact = bp.predict({"mmlu_pro": 74.0, "hle": 20.0})
    assert bp.predict({"mmlu_pro": (74.0, 1.0), "hle": 20.0}) == exact
    assert bp.predict({"mmlu_pro": (74.0, 0.4), "hle": 20.0}) == exact
    assert bp.predict({"mmlu_pro": (74.0, 1.5), "hle": 20.0}) != exact
    row, stderr = bp.probe_rows({"gpqa_diamond": (90.0, 5.0), "hle": 20.0})
    assert np.isnan(stderr[bp.fit_columns["hle"]])
    noise = bp.fold_in_noise(row, stderr)
    published = 100 * math.sqrt(0.9 * 0.1 / GPQA_ITEMS)  # 2.13 points
    assert noise[bp.fit_columns["gpqa_diamond"]] == pytest.approx(math.sqrt(25 - published**2))
    assert np.isnan(noise[bp.fit_columns["hle"]])
    assert bp.fold_in_noise(*bp.probe_rows({"gpqa_diamond": (90.0, 2.0)})) is None


SE = "standard error for 'mmlu_pro' must be"
CLI_SE = "--scores: the standard error of 'mmlu_pro' must be a number >= 0, got"


@pytest.mark.parametrize(
    ("given", "error", "message"),
    [
        ((74.0, -1.0), ProbeScoreError, f"{SE} a finite number >= 0, got -1"),
        ((74.0, math.nan), ProbeScoreError, f"{SE} a finite number >= 0, got nan"),
        ((74.0, math.inf), ProbeScoreError, f"{SE} a finite number >= 0, got inf"),
        ((74.0, "1.5"), ProbeScoreError, f"{SE} a number, got text"),
        ((74.0, None), ProbeScoreError, f"{SE} a number, got NoneType"),
        ((74.0, True), ProbeScoreError, f"{SE} a number, got bool"),
        ((74.0, 60.0), ProbeScoreError, f"{SE} at most 50 points on a percent benchmark, got 60"),
        (("74", 1.5), TypeError, "score for 'mmlu_pro' must be a number, got '74'"),
        (
            (74.0, 1.5, 2.0),
            TypeError,
            "score for 'mmlu_pro' must be a number, got (74.0, 1.5, 2.0)",
        ),
    ],
)
def test_bad_standard_errors_are_refused_naming_the_benchmark(
    bp: BenchPress, given: object, error: type, message: str
) -> None:
    with pytest.raises(error) as caught:
        bp.predict({"mmlu_pro": given})
    assert str(caught.value) == message


def test_binomial_rule_and_the_defaults_a_published_score_carries() -> None:
    assert binomial_stderr(50.0, 100) == pytest.approx(5.0)
    assert binomial_stderr(74.0, 12_032) == pytest.approx(100 * math.sqrt(0.74 * 0.26 / 12_032))
    # a perfect score on 30 items is not exact: half an item from the end
    assert binomial_stderr(100.0, 30) == pytest.approx(100 * math.sqrt((1 / 60) * (59 / 60) / 30))
    with pytest.raises(ValueError, match="n must be at least 1 item, got 0"):
        binomial_stderr(50.0, 0)
    gpqa = 100 * math.sqrt(0.5 * 0.5 / GPQA_ITEMS)
    assert published_noise("gpqa_diamond", "percent", "percent", 50.0) == Noise(
        pytest.approx(gpqa), "default: binomial over 198 items"
    )
    assert published_noise("mmlu_pro", "percent", "percent", 74.0) == Noise(
        1.0, "default: 1 point run-to-run"
    )  # 12,032 items: 0.4 points, below the run-to-run floor
    assert published_noise("chatbot_arena_elo", "unbounded", "elo", 1300.0) == Noise(
        2.5, "default: arena 95% interval +-5"
    )
    assert published_noise("swelancer_freelance_dollars", "unbounded", "dollars", 1e5) == Noise(
        0.0, "none known for dollars: taken as exact"
    )


def _lm_eval_file(folder: Path, stderr: bool) -> Path:
    """A real lm-eval results file (the vendored one) scoring mmlu_pro at 0.74 over 200
    samples, with or without the file's standard error."""
    doc = copy.deepcopy(json.loads(LM_EVAL_FILE.read_text(encoding="utf-8")))
    (task, config), *_ = doc["configs"].items()
    result = {"alias": "mmlu_pro", "exact_match,custom-extract": 0.74}
    if stderr:
        result["exact_match_stderr,custom-extract"] = 0.03
    doc["results"] = {"mmlu_pro": result}
    doc["configs"] = {"mmlu_pro": {**config, "task": "mmlu_pro"}}
    doc["n-samples"] = {"mmlu_pro": {"original": 200, "effective": 200}}
    for key in ("versions", "n-shot", "higher_is_better", "group_subtasks"):
        if key in doc:
            doc[key] = {"mmlu_pro": doc[key].get(task, {} if key != "versions" else 1.0)}
    folder.mkdir(parents=True)
    path = folder / "results_2026-03-01T00-00-00.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_results_files_bring_their_standard_errors(bp: BenchPress, tmp_path: Path) -> None:
    """A file's standard error (3 points) goes into the fold-in; without one, the binomial
    rule over the samples it scored (200: 3.10 points) does."""
    given = _lm_eval_file(tmp_path / "given", stderr=True)
    answer = bp.predict(given)
    assert answer.stderr == {"mmlu_pro": pytest.approx(3.0)}
    assert answer == bp.predict({"mmlu_pro": (74.0, 3.0)})
    assert answer != bp.predict({"mmlu_pro": 74.0})
    counted = _lm_eval_file(tmp_path / "counted", stderr=False)
    binomial = 100 * math.sqrt(0.74 * 0.26 / 200)
    assert bp.predict(counted).stderr == {"mmlu_pro": pytest.approx(binomial)}
    assert bp.predict(counted) == bp.predict({"mmlu_pro": (74.0, binomial)})


# -------------------------------------------------------------------- the contract
def _matrix(seed: int = 0) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    u, v = rng.normal(size=(30, 2)), rng.normal(size=(12, 2))
    values = 100.0 / (1.0 + np.exp(-(u @ v.T)))
    values[rng.random(values.shape) < 0.25] = np.nan
    return values, ["percent"] * 12


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_weighs_a_noisy_score_less(method: str) -> None:
    values, scales = _matrix()
    completer = make_completer(method, random_state=0).fit(values, scales)
    row = np.full(12, np.nan)
    row[:2] = [95.0, 20.0]  # two known scores far apart
    alone = row.copy()
    alone[0] = np.nan
    exact = completer.fold_in_summary(row, 0.9, 5.0)
    quiet = np.array([0.0, np.nan] + [np.nan] * 10)  # 0 and NaN: exact
    same = completer.fold_in_summary(row, 0.9, 5.0, noise_sd=quiet)
    for a, b in zip(exact, same, strict=True):
        assert (a is None and b is None) or np.array_equal(a, b)
    loud = np.array([20.0] + [np.nan] * 11)
    noisy = completer.fold_in_summary(row, 0.9, 5.0, noise_sd=loud)
    start = completer.fold_in(alone)
    unknown = np.isnan(row)
    moved = np.abs(exact[0] - start)[unknown]
    assert np.all(np.abs(noisy[0] - start)[unknown] < moved)
    assert noisy[0][0] == 95.0  # the score itself comes back as given
    np.testing.assert_array_equal(
        completer.fold_in(row, noise_sd=loud), noisy[0]
    )  # fold_in and fold_in_summary agree
    with pytest.raises(ValueError, match="noise_sd must be >= 0 and finite"):
        completer.fold_in(row, noise_sd=-loud)


def test_the_default_method_widens_the_intervals_of_a_noisy_row() -> None:
    values, scales = _matrix()
    completer = make_completer("bayes", random_state=0).fit(values, scales)
    row = np.full(12, np.nan)
    row[:3] = values[3, :3] if np.isfinite(values[3, :3]).all() else [60.0, 40.0, 70.0]
    noise = np.array([4.0, 4.0, 4.0] + [np.nan] * 9)
    low, high = completer.fold_in_interval(row)
    wide_low, wide_high = completer.fold_in_interval(row, noise_sd=noise)
    unknown = np.isnan(row)
    assert np.all((wide_high - wide_low)[unknown] > (high - low)[unknown])
    draws = completer.fold_in_draws(row, n_draws=2000, noise_sd=noise)
    assert np.all(draws[:, :3] == row[:3])  # known scores as given in every draw
    many_mean, many_scale = completer.fold_in_predictive_many(
        np.stack([row, row]), noise_sd=np.stack([noise, np.full(12, np.nan)])
    )
    one_mean, one_scale = completer.fold_in_predictive(row, noise_sd=noise)
    plain_mean, plain_scale = completer.fold_in_predictive(row)
    np.testing.assert_allclose(many_mean, [one_mean, plain_mean], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(many_scale, [one_scale, plain_scale], rtol=1e-9, atol=1e-12)


def test_a_standard_error_enters_z_space_through_the_transforms_slope() -> None:
    values, scales = _matrix()
    completer = make_completer("als", random_state=0).fit(values, scales)
    tf = completer.transform_
    row = np.full(12, np.nan)
    row[0] = 50.0
    sd = np.array([0.5] + [np.nan] * 11)
    variance = measurement_variance_z(tf, row, sd)
    slope = (tf.transform(np.full(12, 50.01)) - tf.transform(np.full(12, 49.99)))[0] / 0.02
    assert math.sqrt(variance[0]) == pytest.approx(slope * 0.5, rel=1e-3)  # the delta method
    assert np.all(variance[1:] == 0.0)
    assert measurement_variance_z(tf, row, None) is None
    assert measurement_variance_z(tf, row, np.full(12, np.nan)) is None
    with pytest.raises(ValueError, match=r"noise_sd must have the shape of the row\(s\)"):
        measurement_variance_z(tf, row, np.zeros(3))


# --------------------------------------------------------------------- comparisons
def test_two_observed_scores_1_8_points_apart_are_not_a_certain_order(bp: BenchPress) -> None:
    """The issue's report: an observed mmlu_pro of 74.0 against gpt-4o's observed 75.8 was
    P(better) = 0.00. Each is a measurement +- 1 point (mmlu_pro's default): P = Phi(-1.8 /
    sqrt(2)) = 0.10, with the noise stated in the frame, the summary and the JSON rows."""
    assert float(bp.observed_values(["gpt-4o"], ["mmlu_pro"])[0, 0]) == 75.8
    result = compare_with_known_models(bp, {"mmlu_pro": 74.0}, ["gpt-4o"], targets=["mmlu_pro"])
    (row,) = result.to_frame().to_dicts()
    assert row["p_new_better"] == pytest.approx(PHI(-1.8 / math.sqrt(2.0)), abs=1e-12)
    assert 0.05 < row["p_new_better"] < 0.5
    assert (row["reference_noise"], row["reference_noise_source"]) == (
        1.0,
        "default: 1 point run-to-run",
    )
    assert (row["new_noise"], row["new_noise_source"]) == (1.0, "default: 1 point run-to-run")
    assert result.summary().splitlines()[2:] == [
        "      vs gpt-4o (75.8, observed): P(better) = 0.10",
        "  observed scores are compared as measurements, +- their noise (sd): the standard "
        "error given, else the benchmark's default",
        "    mmlu_pro: gpt-4o \u00b11.0 (default: 1 point run-to-run); new model \u00b11.0 "
        "(default: 1 point run-to-run)",
    ]
    assert result.measurement_noise() == [
        {"benchmark": "mmlu_pro", "model": "gpt-4o", "score": 75.8, "sd": 1.0,
         "source": "default: 1 point run-to-run"},
        {"benchmark": "mmlu_pro", "model": "new model", "score": 74.0, "sd": 1.0,
         "source": "default: 1 point run-to-run"},
    ]  # fmt: skip
    # given as predictions, the probes keep the standard error they came with
    given = bp.predict({"mmlu_pro": (74.0, 3.0)})
    again = compare_with_known_models(bp, given, ["gpt-4o"], targets=["mmlu_pro"])
    (row,) = again.to_frame().to_dicts()
    assert (row["new_noise"], row["new_noise_source"]) == (3.0, "given")
    assert row["p_new_better"] == pytest.approx(PHI(-1.8 / math.sqrt(10.0)), abs=1e-12)


def test_compared_models_take_their_given_standard_errors(bp: BenchPress) -> None:
    result = compare_models(
        bp, [{"mmlu_pro": 74.0}, {"mmlu_pro": (75.8, 1.5)}], ["mmlu_pro"], names=["a", "b"]
    )
    (ranking,) = result.rankings
    assert [e.name for e in ranking.order] == ["b", "a"]
    assert ranking.p_matrix[("a", "b")] == pytest.approx(PHI(-1.8 / math.hypot(1.0, 1.5)))
    assert ranking.tie_groups == [1, 1]  # within noise
    assert result.to_frame().select("model", "noise", "noise_source").rows() == [
        ("b", 1.5, "given"),
        ("a", 1.0, "default: 1 point run-to-run"),
    ]
    assert result.summary().splitlines()[-1] == (
        "  mmlu_pro: b \u00b11.5 (given); a \u00b11.0 (default: 1 point run-to-run)"
    )


def test_criteria_draw_an_observed_score_as_a_measurement() -> None:
    draws = np.tile([[35.5, 60.0]], (20_000, 1))
    measured = with_measurement_noise(draws, ["a", "b"], {"a": (35.5, 1.2), "b": (60.0, 0.0)})
    assert np.all(draws[:, 0] == 35.5)  # the input is not touched
    assert np.all(measured[:, 1] == 60.0)  # sd 0: as given
    assert measured[:, 0].mean() == pytest.approx(35.5, abs=0.03)
    assert measured[:, 0].std() == pytest.approx(1.2, abs=0.02)
    assert (measured[:, 0] >= 35.0).mean() == pytest.approx(PHI(0.5 / 1.2), abs=0.01)
    again = with_measurement_noise(draws, ["a", "b"], {"a": (35.5, 1.2), "b": (60.0, 0.0)})
    assert np.array_equal(again, measured)  # seeded


# -------------------------------------------------------------------------- the CLI
def test_cli_scores_take_plus_minus(capsys, bp: BenchPress) -> None:
    code, out, err = bundled_cli(
        capsys, "predict", "--scores", "gpqa_diamond=90+-5,hle=20", "--json"
    )
    assert (code, err) == (0, "")
    doc = json.loads(out)
    expected = bp.predict({"gpqa_diamond": (90.0, 5.0), "hle": 20.0})
    assert doc["stderr"] == {"gpqa_diamond": 5.0}
    assert {r["benchmark"]: r for r in doc["predictions"]} == {
        b: p.as_dict() for b, p in expected.items()
    }
    code, out, _ = bundled_cli(capsys, "predict", "--scores", "gpqa_diamond=90\u00b15,hle=20")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert rows["gpqa_diamond"].split()[-2:] == ["probe", "+-5"]
    assert rows["hle"].split()[-1] == "probe"
    mmlu = expected["mmlu_pro"]
    assert rows["mmlu_pro"].split()[1:3] == [f"{mmlu.score:.1f}", f"{mmlu.low:.1f}-{mmlu.high:.1f}"]


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ("mmlu_pro=74+--1", f"{CLI_SE} '-1'"),
        ("mmlu_pro=74+-nan", f"{CLI_SE} 'nan'"),
        ("mmlu_pro=74+-wide", "--scores: 'mmlu_pro' has a non-numeric standard error 'wide'"),
        ("mmlu_pro=74+-60", f"{SE} at most 50 points on a percent benchmark, got 60"),
    ],
)
def test_cli_refuses_a_bad_standard_error_naming_the_benchmark(
    capsys, scores: str, message: str
) -> None:
    code, out, err = bundled_cli(capsys, "predict", "--scores", scores)
    assert (code, out) == (2, "")
    assert err == f"benchpress: error: {message}\n"


def test_cli_compare_of_two_observed_scores_states_the_noise(capsys) -> None:
    argv = ["compare", "--model", "a:mmlu_pro=74", "--model", "b:mmlu_pro=75.8"]
    code, out, err = bundled_cli(capsys, *argv, "--targets", "mmlu_pro")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    p = PHI(-1.8 / math.sqrt(2.0))
    first = lines[1].split()  # the table: header, then b ranked first
    assert first[2] == "b" and first[-1] == f"{1 - p:.3f}" == "0.898"
    assert lines[4:8] == [
        "mmlu_pro: b (75.8) ~ a (74.0)",
        "'>' = predicted better, '~' = within noise (diff < 2 or P in 0.35-0.65)",
        "observed scores are compared as measurements, +- their noise (sd): the standard "
        "error given, else the benchmark's default",
        "  mmlu_pro: b \u00b11.0 (default: 1 point run-to-run); a \u00b11.0 (default: 1 point "
        "run-to-run)",
    ]
    code, out, _ = bundled_cli(capsys, *argv, "--targets", "mmlu_pro", "--json")
    doc = json.loads(out)
    (pair,) = [r for r in doc["pairwise"] if r["a"] == "a"]
    assert pair["p_a_better"] == pytest.approx(p, abs=1e-12) and 0.05 < p < 0.5
    assert [(r["model"], r["sd"], r["source"]) for r in doc["measurement_noise"]] == [
        ("b", 1.0, "default: 1 point run-to-run"),
        ("a", 1.0, "default: 1 point run-to-run"),
    ]
    assert [(r["model"], r["noise"]) for r in doc["rows"]] == [("b", 1.0), ("a", 1.0)]
