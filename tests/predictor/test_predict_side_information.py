"""`BenchPress.predict` folds a new model in with the side information the fit used: its family
(given, or read from its name) and its release date (given, or the fit's newest), and says so."""

from __future__ import annotations

import pytest

from predictor import BenchPress, ProbeScoreError, SideUsed
from predictor.paths import bundled_snapshot_dir

PROBES = {"gpqa_diamond": 80, "hle": 20, "mmlu_pro": 80}


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load("2026.12.04.1", store=bundled_snapshot_dir())


def test_without_a_name_the_population_and_the_newest_date(bp: BenchPress) -> None:
    answer = bp.predict(PROBES)
    assert answer.side == SideUsed(
        model=None,
        family=None,
        family_known=False,
        release_date="2026-07-01",  # the fit's newest: a model dated only "2026"
        release_date_source="newest in the fit",
    )
    assert round(answer["swe_bench_verified"].score, 2) == 74.14


def test_a_name_of_a_known_family_moves_the_prediction(bp: BenchPress) -> None:
    plain = bp.predict(PROBES)
    named = bp.predict(PROBES, model="claude-opus-4.5-preview")
    assert (named.side.family, named.side.family_known) == ("claude4.5", True)
    assert round(named["swe_bench_verified"].score, 2) == 77.65
    assert named["swe_bench_verified"].score != plain["swe_bench_verified"].score
    # the family given wins over the name, and gives the same answer as the name's family
    given = bp.predict(PROBES, model="my-tuned-model", family="claude4.5")
    assert given.side.family == "claude4.5" and given == named


def test_an_unknown_family_falls_back_to_the_population(bp: BenchPress) -> None:
    answer = bp.predict(PROBES, model="acme-frontier-1")
    assert (answer.side.family, answer.side.family_known) == ("acme-frontier-1", False)
    assert answer == bp.predict(PROBES)
    assert "not in the fit: population prior" in answer.side.describe()


def test_a_release_date_enters_the_fold_in(bp: BenchPress) -> None:
    old = bp.predict(PROBES, release_date="2024-01-01")
    assert (old.side.release_date, old.side.release_date_source) == ("2024-01-01", "given")
    assert round(old["swe_bench_verified"].score, 2) == 33.17
    with pytest.raises(ProbeScoreError, match="release_date must be a date"):
        bp.predict(PROBES, release_date="last tuesday")
    with pytest.raises(ProbeScoreError, match="family must be a non-empty name"):
        bp.predict(PROBES, family=" ")


def test_predictive_draws_use_the_same_side_information(bp: BenchPress) -> None:
    names, draws = bp.predictive_draws(PROBES, n=2000, model="claude-opus-4.5-preview")
    j = names.index("swe_bench_verified")
    answer = bp.predict(PROBES, model="claude-opus-4.5-preview")
    assert abs(float(draws[:, j].mean()) - answer["swe_bench_verified"].score) < 1.5


def test_predict_benchmark_places_a_model_outside_the_fit_with_its_family(
    bp: BenchPress,
) -> None:
    scores = {
        "claude-3.7-sonnet@thinking-16k": 40.0,  # in the snapshot, too few cells for the fit
        "arcee-trinity-large-preview": 30.0,
        "claude-3.5-sonnet": 55.0,
        "claude-fable-5@xhigh": 60.0,
    }
    answer = bp.predict_benchmark(scores)
    assert answer.notes == (
        "claude-3.7-sonnet@thinking-16k (not in the fit) placed with its family claude3.7",
    )
    ids = answer.predictions["model_id"].to_list()
    assert "claude-3.7-sonnet@thinking-16k" in ids
