"""Predicting a new benchmark (the transpose of `predict`): `BenchPress.predict_benchmark`, the
pure fold-in of `predictor.new_benchmark` and `benchpress predict-benchmark`, on the bundled
snapshot (a real benchmark column hidden and five of its scores given) and on small matrices
whose answers are known."""

from __future__ import annotations

import json
import warnings
from io import StringIO

import numpy as np
import polars as pl
import pytest

from predictor import BenchPress, FractionScoresWarning, ProbeScoreError, UnknownNameError
from predictor.cli import main
from predictor.fit.completion import LowRankCompleter
from predictor.methods.bayesian import BayesianCompleter
from predictor.new_benchmark import (
    PREDICTION_SCHEMA,
    NewBenchmarkPrediction,
    column_intervals,
    fit_column,
    placement,
)
from predictor.snapshots.reader import list_versions
from predictor.util.paths import bundled_snapshot_dir

VERSION = list_versions(bundled_snapshot_dir())[-1]
HIDDEN = "gpqa_diamond"
GIVEN = ("gpt-4o", "claude-sonnet-4", "o3-high", "gemini-2.5-pro", "llama-3.1-70b-instruct")


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(VERSION, store=bundled_snapshot_dir())


@pytest.fixture(scope="module")
def column(bp: BenchPress) -> dict[str, float]:
    """The hidden benchmark's observed scores of the fitted models."""
    m = bp.matrix()
    j = m.benchmarks.index(HIDDEN)
    fitted = set(bp.fit_models_)
    return {
        model: float(m.values[i, j])
        for i, model in enumerate(m.models)
        if model in fitted and np.isfinite(m.values[i, j])
    }


@pytest.fixture(scope="module")
def result(bp: BenchPress, column: dict[str, float]) -> NewBenchmarkPrediction:
    return bp.predict_benchmark({m: column[m] for m in GIVEN}, name="gpqa (hidden)")


def test_five_scores_predict_every_fitted_model_within_its_interval(
    bp: BenchPress, column: dict[str, float], result: NewBenchmarkPrediction
) -> None:
    frame = result.predictions
    assert frame.schema == pl.Schema(PREDICTION_SCHEMA)
    assert frame.height == len(bp.fit_models_) == 249
    assert frame["rank"].to_list() == list(range(1, 250))
    assert frame["predicted"].to_list() == sorted(frame["predicted"].to_list(), reverse=True)
    known = frame.filter(pl.col("observed"))
    assert sorted(known["model_id"]) == sorted(GIVEN)
    for r in known.iter_rows(named=True):  # given scores come back as given, zero width
        assert r["predicted"] == r["lower"] == r["upper"] == column[r["model_id"]]
    others = frame.filter(~pl.col("observed") & pl.col("model_id").is_in(list(column)))
    truth = np.array([column[m] for m in others["model_id"]])
    inside = (truth >= others["lower"].to_numpy()) & (truth <= others["upper"].to_numpy())
    assert others.height == 137
    assert inside.mean() >= 0.85  # 90% intervals, the real scores of 137 other models
    assert np.median(np.abs(truth - others["predicted"].to_numpy())) < 5.0
    rows = {r["model_id"]: r for r in frame.iter_rows(named=True)}
    pinned = {m: [round(rows[m][k], 1) for k in ("predicted", "lower", "upper")] for m in rows}
    assert pinned["deepseek-r1"] == [72.7, 54.7, 85.4]  # observed 71.5
    assert pinned["gpt-4.1"] == [60.4, 43.3, 75.3]  # observed 66.3
    assert column["deepseek-r1"] == 71.5 and round(column["gpt-4.1"], 1) == 66.3


def test_the_same_call_gives_the_same_answer(
    bp: BenchPress, column: dict[str, float], result: NewBenchmarkPrediction
) -> None:
    again = bp.predict_benchmark({m: column[m] for m in reversed(GIVEN)}, name="gpqa (hidden)")
    assert again.predictions.equals(result.predictions)
    assert again.similar.equals(result.similar)
    assert again.next_models.equals(result.next_models)


def test_ranking_similar_benchmarks_and_models_to_run_next(
    bp: BenchPress, column: dict[str, float], result: NewBenchmarkPrediction
) -> None:
    (ranked,) = result.ranking.rankings
    top = result.predictions.head(10)["model_id"].to_list()
    assert ranked.benchmark == "gpqa (hidden)" and [e.name for e in ranked.order] == top
    for (a, b), p in ranked.p_matrix.items():  # P(A > B) + P(B > A) = 1
        assert 0.0 < p < 1.0 and p + ranked.p_matrix[(b, a)] == pytest.approx(1.0)
    pairs = result.ranking.pairwise()
    assert pairs.height == 90 and set(pairs["benchmark"]) == {"gpqa (hidden)"}
    # the hidden benchmark itself is among the closest public ones (by correlation of the
    # fitted columns: the reasoning benchmarks all follow one another closely)
    assert result.similar.columns == ["rank", "benchmark_id", "name", "correlation", "n_models"]
    assert result.similar.height == 10 and result.similar["correlation"].min() > 0.95
    wider = bp.predict_benchmark({m: column[m] for m in GIVEN}, name="gpqa (hidden)", top=20)
    assert "gpqa_diamond" in wider.similar["benchmark_id"].to_list()
    row = wider.similar.filter(pl.col("benchmark_id") == "gpqa_diamond").row(0, named=True)
    assert row["name"] == "GPQA Diamond" and row["n_models"] == 142
    assert 0.9 < row["correlation"] < 1.0
    nxt = result.next_models
    assert nxt.height == 10 and not set(nxt["model_id"]) & set(GIVEN)
    shares = nxt["variance_reduction"].to_list()
    assert shares == sorted(shares, reverse=True) and 0.0 < shares[-1] < shares[0] < 1.0
    assert (nxt["width_after"] < nxt["width_before"]).all()
    text = result.summary()
    assert text.splitlines()[0] == (
        "gpqa (hidden) (percent) from 5 known scores: 249 models of snapshot "
        f"{VERSION}, 90% intervals"
    )
    assert "  behaves most like: " in text and "  run next: " in text


def test_names_resolve_as_reference_models_and_say_which_id(bp: BenchPress) -> None:
    result = bp.predict_benchmark({"gpt-4o": 46.0, "o3": 83.3, "gpt-5-5": 85.0})
    assert set(result.known) == {"gpt-4o", "o3-high", "gpt-5.5"}
    assert result.notes == (
        "o3 = o3-high (the catalogue's headline setting)",
        "gpt-5-5 = gpt-5.5 (version dots: gpt-5.5)",
    )
    assert result.name == "new benchmark"


def test_a_known_model_outside_the_fit_is_placed_from_its_scores(bp: BenchPress) -> None:
    outside = "o1-mini"  # 14 scores on fitted benchmarks: one short of the fit's 15
    assert outside in bp.models and outside not in bp.fit_models_
    result = bp.predict_benchmark({"gpt-4o": 46.0, "o3-high": 83.3, outside: 60.0})
    assert result.predictions.height == 250
    row = result.predictions.filter(pl.col("model_id") == outside).row(0, named=True)
    assert row["observed"] and row["predicted"] == 60.0


def test_open_scale_and_other_levels(bp: BenchPress) -> None:
    elo = bp.predict_benchmark(
        {"gpt-4o": 1250.0, "o3-high": 1420.0, "llama-3.1-70b-instruct": 1180.0, "gpt-5.5": 1480},
        scale="unbounded",
        level=0.5,
    )
    frame = elo.predictions.filter(~pl.col("observed"))
    assert elo.unit == "" and (frame["level"] == 0.5).all()
    assert (frame["lower"] <= frame["predicted"]).all() and (
        frame["predicted"] <= frame["upper"]
    ).all()
    # open scales are not squeezed into 0-100
    assert frame["predicted"].max() > 1400 and frame["predicted"].min() < 1200


@pytest.mark.parametrize(
    ("scores", "kwargs", "error", "message"),
    [
        (
            {"gpt-4o": 46.0, "o3-high": 83.3},
            {},
            ProbeScoreError,
            "a new benchmark needs the scores of at least 3 models, got 2: with fewer, any "
            "level and slope fit them exactly and nothing tells the benchmark from noise",
        ),
        (
            {"gpt-4o": 46.0, "claude-sonet-4": 70.0, "o3-high": 83.3},
            {},
            UnknownNameError,
            "unknown model 'claude-sonet-4'; did you mean: claude-sonnet-4, ",
        ),
        (
            {"gpt-4o": 146.0, "claude-sonnet-4": 70.0, "o3-high": 83.3},
            {},
            ProbeScoreError,
            "score for 'gpt-4o' must lie in 0-100 (percent), got 146; an open scale (Elo, "
            "dollars) is scale 'unbounded'",
        ),
        (
            {"gpt-4o": 46.0, "GPT-4o": 47.0, "o3-high": 83.3},
            {},
            ProbeScoreError,
            "model 'gpt-4o' is given twice (as 'gpt-4o' and 'GPT-4o'); give each model once",
        ),
        (
            {"gpqa_diamond": 46.0, "claude-sonnet-4": 70.0, "o3-high": 83.3},
            {},
            ProbeScoreError,
            "'gpqa_diamond' is a benchmark (gpqa_diamond), not a model: give the scores of "
            "models on the new benchmark, {model: score} (predict takes {benchmark: score})",
        ),
        (
            {"gpt-4o": float("nan"), "claude-sonnet-4": 70.0, "o3-high": 83.3},
            {},
            ProbeScoreError,
            "score for 'gpt-4o' must be finite, got nan",
        ),
        (
            {"gpt-4o": "46", "claude-sonnet-4": 70.0, "o3-high": 83.3},
            {},
            TypeError,
            "score for 'gpt-4o' must be a number, got '46'",
        ),
        (
            {"gpt-4o": 46.0, "claude-sonnet-4": 70.0, "o3-high": 83.3},
            {"scale": "elo"},
            ValueError,
            "scale must be one of ('percent', 'unbounded'), got 'elo'",
        ),
        (
            {"gpt-4o": 46.0, "claude-sonnet-4": 70.0, "o3-high": 83.3},
            {"level": 1.5},
            ValueError,
            "level must lie strictly between 0 and 1, got 1.5",
        ),
        (
            [("gpt-4o", 46.0)],
            {},
            TypeError,
            "scores must be a mapping of model -> score, got list",
        ),
    ],
)
def test_bad_input_is_refused_naming_the_model(
    bp: BenchPress, scores: object, kwargs: dict, error: type, message: str
) -> None:
    with pytest.raises(error) as caught:
        bp.predict_benchmark(scores, **kwargs)  # type: ignore[arg-type]
    assert str(caught.value).startswith(message)


def test_fraction_looking_percent_scores_warn(bp: BenchPress) -> None:
    with pytest.warns(FractionScoresWarning) as caught:
        bp.predict_benchmark({"gpt-4o": 0.46, "claude-sonnet-4": 0.7, "o3-high": 0.83})
    assert str(caught[0].message) == (
        "every score given is at most 1 (gpt-4o=0.46, claude-sonnet-4=0.7, o3-high=0.83): "
        "percent scores are percentages (0-100), not fractions; multiply by 100 if these are "
        "fractions"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", FractionScoresWarning)  # an open scale never warns
        bp.predict_benchmark(
            {"gpt-4o": 0.46, "claude-sonnet-4": 0.7, "o3-high": 0.83}, scale="unbounded"
        )


def test_the_snapshot_is_left_as_it_was(bp: BenchPress, column: dict[str, float]) -> None:
    before = bp.matrix().values.copy()
    mean = bp.fitted_values()[0].copy()
    bp.predict_benchmark({m: column[m] for m in GIVEN})
    assert np.array_equal(bp.matrix().values, before, equal_nan=True)
    assert np.array_equal(bp.fitted_values()[0], mean)


# ------------------------------------------------------------- the pure fold-in, known answers
def _low_rank(seed: int = 3, n: int = 60, m: int = 25) -> tuple[np.ndarray, np.ndarray]:
    """A rank-2 logit matrix with small noise, plus one more column of the same structure."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(n, 2))
    v = rng.normal(size=(m + 1, 2))
    logits = u @ v.T * 0.8 + rng.normal(0.0, 0.1, size=(n, m + 1))
    scores = 100.0 / (1.0 + np.exp(-logits))
    return scores[:, :m], scores[:, m]


@pytest.mark.parametrize(
    ("completer", "coverage"),
    [(BayesianCompleter(), 0.8), (LowRankCompleter(n_seeds=3), 0.5)],  # ALS: no factor posterior
)
def test_a_column_of_the_same_structure_is_recovered_from_ten_scores(completer, coverage) -> None:
    values, new = _low_rank()
    fitted = completer.fit(values, ["percent"] * values.shape[1])
    place = placement(fitted, values)
    known = np.full(len(new), np.nan)
    known[:10] = new[:10]
    fit = fit_column(place, known, percent=True)
    mean, low, high = column_intervals(place, fit, 0.9)
    error = np.abs(mean[10:] - new[10:])
    spread = np.abs(new[10:] - new[:10].mean())  # guessing the known scores' mean
    assert np.median(error) < 0.35 * np.median(spread)
    assert np.array_equal(mean[:10], new[:10]) and np.array_equal(low[:10], new[:10])
    assert ((low <= mean) & (mean <= high)).all()
    assert np.mean((new[10:] >= low[10:]) & (new[10:] <= high[10:])) >= coverage


# ---------------------------------------------------------------------------------- the CLI
def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["predict-benchmark", *argv, "--store", str(bundled_snapshot_dir())])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_prints_the_table_similar_benchmarks_and_models_to_run_next(
    capsys: pytest.CaptureFixture[str], column: dict[str, float], result: NewBenchmarkPrediction
) -> None:
    scores = ",".join(f"{m}={column[m]:g}" for m in GIVEN)
    code, out, err = _cli(capsys, "--scores", scores, "--name", "gpqa (hidden)", "--top", "3")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == (
        f"gpqa (hidden): 249 models of snapshot {VERSION} from 5 known scores (percent), 90% "
        "intervals"
    )
    assert lines[1].split() == [
        "rank", "model", "predicted", "90%", "interval", "unit", "P(>next)", "kind"
    ]  # fmt: skip
    first = lines[2].split()
    assert first[0] == "1" and first[4] == "%" and first[-1] == "predicted"
    low, high = (float(v) for v in first[3].split("-"))  # the interval's two ends
    assert low <= float(first[2]) <= high and first[3] == f"{low:.1f}-{high:.1f}"
    assert first[2] == f"{float(first[2]):.1f}"  # one decimal, like predict
    assert lines[5] == "... 246 more; --top N shows more, --json or --csv every model"
    assert lines[7].startswith("behaves most like (correlation of mean scores over the 249")
    assert lines[8].split() == ["rank", "benchmark", "r", "models"]
    closest = result.similar["benchmark_id"].to_list()[:5]  # what the API says, in order
    assert [line.split()[1] for line in lines[9:14]] == closest
    run_next = lines.index(next(line for line in lines if line.startswith("run next (")))
    assert lines[run_next + 1].split() == ["rank", "model", "predicted", "removes", "width"]
    assert len(lines) == run_next + 7


def test_cli_json_and_csv_hold_every_model(
    capsys: pytest.CaptureFixture[str], bp: BenchPress, column: dict[str, float]
) -> None:
    typed = {m: float(f"{column[m]:g}") for m in GIVEN}  # as the command line carries them
    scores = ",".join(f"{m}={v:g}" for m, v in typed.items())
    code, out, _ = _cli(capsys, "--scores", scores, "--name", "gpqa (hidden)", "--json")
    payload = json.loads(out)
    assert code == 0 and len(payload["predictions"]) == 249
    assert payload["known"] == typed and payload["name"] == "gpqa (hidden)"
    expected = bp.predict_benchmark(typed).predictions
    assert [r["model_id"] for r in payload["predictions"]] == expected["model_id"].to_list()
    assert {"ranking", "pairwise", "similar", "next_models", "unit", "notes"} <= set(payload)
    code, out, _ = _cli(capsys, "--scores", scores, "--csv")
    frame = pl.read_csv(StringIO(out))
    assert code == 0 and frame.columns == list(PREDICTION_SCHEMA) and frame.height == 249
    assert frame["predicted"].to_list() == pytest.approx(expected["predicted"].to_list())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--scores", "gpt-4o=46,o3-high=83.3"],
            "benchpress: error: --scores: a new benchmark needs the scores of at least 3 "
            "models, got 2 (model=score,model=score,model=score)",
        ),
        (
            ["--scores", "gpt-4o=46,claude-sonet-4=70,o3-high=83.3"],
            "benchpress: error: unknown model 'claude-sonet-4'; did you mean: claude-sonnet-4,",
        ),
        (
            ["--scores", "gpt-4o=146,claude-sonnet-4=70,o3-high=83.3"],
            "benchpress: error: score for 'gpt-4o' must lie in 0-100 (percent), got 146",
        ),
        (["--scores", "gpt-4o=46,o3-high"], "benchpress: error: --scores: expected name=value"),
        (["--scale", "elo", "--scores", "a=1,b=2,c=3"], "argument --scale: invalid choice"),
        ([], "the following arguments are required: --scores"),
        (["--scores", "a=1,b=2,c=3", "--top", "0"], "argument --top: must be at least 1"),
    ],
)
def test_cli_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    try:
        code, _, err = _cli(capsys, *argv)
    except SystemExit as exc:  # argparse
        code, err = int(exc.code), capsys.readouterr().err
    assert code == 2
    assert message in err


def test_cli_warns_about_fraction_scores(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(capsys, "--scores", "gpt-4o=0.46,claude-sonnet-4=0.7,o3-high=0.83")
    assert code == 0
    assert err.startswith("benchpress: warning: every score given is at most 1 (gpt-4o=0.46")


def test_a_score_with_a_large_standard_error_moves_the_column_less(
    bp: BenchPress, column: dict[str, float], result: NewBenchmarkPrediction
) -> None:
    """One given score shifted by 20 points: given exactly it drags the other models'
    predictions along; with a standard error of 20 it drags them less."""
    moved = {m: column[m] for m in GIVEN}
    first = GIVEN[0]
    moved[first] = column[first] - 20.0
    exact = bp.predict_benchmark(moved, name="gpqa (hidden)").predictions
    noisy = bp.predict_benchmark(
        {**moved, first: (moved[first], 20.0)}, name="gpqa (hidden)"
    ).predictions

    def others(frame: pl.DataFrame) -> np.ndarray:
        return frame.filter(~pl.col("observed")).sort("model_id")["predicted"].to_numpy()

    base = others(result.predictions)
    shift_exact = np.abs(others(exact) - base).mean()
    shift_noisy = np.abs(others(noisy) - base).mean()
    assert shift_exact > 1.0  # the 20-point change is felt ...
    # ... less when the score is that noisy (the column's own scale still follows it)
    assert shift_noisy < 0.75 * shift_exact
    given = noisy.filter(pl.col("model_id") == first).row(0, named=True)
    assert given["observed"] and given["predicted"] == moved[first]  # shown as given


def test_predict_benchmark_cli_takes_a_standard_error(capsys: pytest.CaptureFixture) -> None:
    scores = ",".join(f"{m}=50" for m in GIVEN[:2]) + f",{GIVEN[2]}=60+-5"
    assert main(["predict-benchmark", "--scores", scores, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["predictions"]) == 249
