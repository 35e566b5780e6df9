"""`handle_missing`: probes (and comparison targets) on benchmarks that exist, but not in the
snapshot being used (`predictor.missing_probes`), on the paper snapshot, which lacks `mmlu`,
`arc_challenge` and `hellaswag`."""

from __future__ import annotations

import warnings

import pytest

from predictor import BenchPress, ProbeScoreError, UnknownNameError
from predictor.missing_probes import (
    MissingBenchmarksWarning,
    MissingProbesError,
    MissingProbesWarning,
    known_benchmarks,
    split_probes,
    split_targets,
)
from predictor.util.paths import bundled_snapshot_dir

V1 = "microsoft/benchpress-v1"
DEFAULTS = ["gpqa_diamond", "browsecomp", "codeforces_rating", "hmmt_feb_2025", "hle"]


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.from_pretrained(V1)


@pytest.fixture(scope="module")
def main() -> BenchPress:
    return BenchPress.load(store=bundled_snapshot_dir())


def test_the_registry_knows_what_the_paper_snapshot_lacks(bp: BenchPress) -> None:
    known = known_benchmarks()
    assert [known(n) for n in ("mmlu", "ARC-C", "HellaSwag", "mbpp")] == [
        "mmlu",
        "arc_challenge",
        "hellaswag",
        "mbpp",
    ]
    for name in ("mmlu", "arc_challenge", "hellaswag", "mbpp"):
        with pytest.raises(UnknownNameError):
            bp.resolve_benchmark(name)
    for name in ("gsm8k", "humaneval", "math", "truthfulqa", "mbpp_plus"):
        assert bp.resolve_benchmark(name) in bp.fit_benchmarks_


def test_interpolate_leaves_them_out_with_a_warning_naming_them(bp: BenchPress) -> None:
    probes = {"MMLU": 78.3, "gsm8k": 85.1, "ARC-C": 81.9, "humaneval": 72.4}
    with pytest.warns(MissingProbesWarning) as caught:
        kept = split_probes(bp, probes, "interpolate")
    assert kept == {"gsm8k": 85.1, "humaneval": 72.4}
    assert [str(w.message) for w in caught] == [
        f"snapshot {V1} has no benchmark MMLU (mmlu), ARC-C (arc_challenge): left out of the "
        "probes; predicting from the other 2 (gsm8k, humaneval); handle_missing='error' "
        "refuses instead"
    ]


def test_predict_interpolates_by_default(bp: BenchPress) -> None:
    with pytest.warns(MissingProbesWarning, match="no benchmark hellaswag") as caught:
        predictions = bp.predict({"hellaswag": 89.2, "gsm8k": 85.1})
    assert caught[0].filename == __file__  # points at the caller's line
    assert predictions == bp.predict({"gsm8k": 85.1})
    assert predictions["gsm8k"].observed and predictions["gsm8k"].score == 85.1
    assert "hellaswag" not in predictions


def test_error_lists_them_and_the_default_probes_not_given(bp: BenchPress) -> None:
    with pytest.raises(MissingProbesError) as caught:
        bp.predict({"mmlu": 82.1, "gsm8k": 88.3, "gpqa_diamond": 70.0}, handle_missing="error")
    assert str(caught.value) == (
        f"snapshot {V1} has no benchmark mmlu; its default probes not given: browsecomp, "
        "codeforces_rating, hmmt_feb_2025, hle; handle_missing='interpolate' "
        "predicts from the others"
    )
    assert caught.value.missing == ["mmlu"]
    assert caught.value.default_not_given == DEFAULTS[1:]
    assert isinstance(caught.value, ProbeScoreError)  # a usage error: CLI exit 2


def test_nothing_left_is_an_error_in_either_mode(bp: BenchPress) -> None:
    for mode in ("interpolate", "error"):
        with pytest.raises(MissingProbesError) as caught:
            bp.predict({"mmlu": 82.1, "hellaswag": 88.0}, handle_missing=mode)
        assert str(caught.value) == (
            f"snapshot {V1} has no benchmark mmlu, hellaswag and no other probe was given; "
            f"its default probes not given: {', '.join(DEFAULTS)}"
        )


@pytest.mark.parametrize("mode", ["interpolate", "error"])
def test_a_name_no_registry_knows_is_unknown_whatever_the_mode(bp: BenchPress, mode) -> None:
    with pytest.raises(UnknownNameError) as caught:
        bp.predict({"mmlux": 82.1, "gsm8k": 88.3}, handle_missing=mode)
    assert str(caught.value) == "unknown benchmark 'mmlux'; did you mean: mmmlu, mmmu, mmlu_pro?"
    assert not isinstance(caught.value, MissingProbesError)


def test_a_snapshot_that_has_them_predicts_without_a_warning(main: BenchPress) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        predictions = main.predict(
            {"mmlu": 78.3, "gsm8k": 85.1, "arc_challenge": 81.9}, handle_missing="error"
        )
    assert predictions["mmlu"].observed and predictions["arc_challenge"].score == 81.9


def test_handle_missing_takes_only_its_two_values(bp: BenchPress) -> None:
    with pytest.raises(ValueError) as caught:
        bp.predict({"gsm8k": 85.1}, handle_missing="drop")
    assert str(caught.value) == ("handle_missing must be one of 'interpolate', 'error', got 'drop'")


def test_non_mappings_and_bad_names_reach_predicts_own_checks(bp: BenchPress) -> None:
    assert split_probes(bp, [("gsm8k", 1.0)]) == [("gsm8k", 1.0)]
    with pytest.raises(TypeError, match="must be a mapping"):
        bp.predict([("gsm8k", 1.0)])
    with pytest.raises(ProbeScoreError, match="is empty"):
        bp.predict({})


# ------------------------------------------------------------------------------ targets
def test_targets_it_lacks_are_left_out_of_a_comparison(bp: BenchPress) -> None:
    with pytest.warns(MissingBenchmarksWarning) as caught:
        kept = split_targets(bp, ["mbpp", "math", "truthfulqa"])
    assert kept == ["math", "truthfulqa"]
    assert [str(w.message) for w in caught] == [
        f"targets: snapshot {V1} has no benchmark mbpp: left out; comparing on math, truthfulqa"
    ]
    assert not any(isinstance(w.message, MissingProbesWarning) for w in caught)
    with pytest.raises(ValueError, match=f"^targets: snapshot {V1} has no benchmark mbpp$"):
        split_targets(bp, ["mbpp", "math"], "error")
    with pytest.raises(ValueError, match="no benchmark mbpp and no other target was given"):
        split_targets(bp, "mbpp")


def test_profiles_all_and_present_targets_pass_through(bp: BenchPress) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for targets in (None, "all", "coding_assistant", ["math"], ("math", "gsm8k")):
            assert split_targets(bp, targets) is targets


def test_compare_models_ranks_on_the_targets_it_has(bp: BenchPress) -> None:
    a, b = {"gsm8k": 92.0, "humaneval": 85.0}, {"gsm8k": 80.0, "humaneval": 65.0}
    with pytest.warns(MissingBenchmarksWarning, match="no benchmark mbpp"):
        compared = bp.compare_models([a, b], target_benchmarks=["mbpp", "math", "truthfulqa"])
    assert [r.benchmark for r in compared.rankings] == ["math", "truthfulqa"]
    assert compared.rankings == bp.compare_models([a, b], ["math", "truthfulqa"]).rankings
