"""Reference model names as people write them (`predictor.reference_names`): version dashes,
no setting (the catalogue's headline), models the snapshot does not hold."""

from __future__ import annotations

import numpy as np
import pytest

from predictor import AmbiguousNameError, BenchPress, UnknownNameError
from predictor.reference_names import headline, resolve_reference, spellings
from predictor.snapshots.reader import list_versions
from predictor.util.paths import bundled_snapshot_dir

V1 = "microsoft/benchpress-v1"
MAIN = list_versions(bundled_snapshot_dir())[-1]


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.from_pretrained(V1)


@pytest.fixture(scope="module")
def main() -> BenchPress:
    return BenchPress.load(store=bundled_snapshot_dir())


def test_spellings_turn_version_dashes_into_dots() -> None:
    assert spellings("gpt-5-5") == ["gpt-5-5", "gpt-5.5"]
    assert spellings("llama-3-1-8b") == [
        "llama-3-1-8b",
        "llama-3.1.8b",
        "llama-3.1-8b",
        "llama-3-1.8b",
    ]
    assert spellings("o3") == ["o3"]


def test_headline_rule() -> None:
    assert headline(["o3-high", "o3@low", "o3@medium"]) == (
        "o3-high",
        "the catalogue's headline setting",
    )
    assert headline(["claude-fable-5@high", "claude-fable-5@xhigh"]) == (
        "claude-fable-5@xhigh",
        "no catalogue headline: the highest reasoning effort",
    )
    assert headline(["grok-4.1-fast@nothinking", "grok-4.1-fast@thinking"])[0] == (
        "grok-4.1-fast@thinking"
    )
    assert headline(["m@thinking", "m@thinking-16k"]) == (
        None,
        "no single highest reasoning effort",
    )
    assert headline(["gpt-4o@high", "gpt-4o-mini@high"]) == (
        None,
        "not the settings of one model",
    )


@pytest.mark.parametrize(
    ("name", "model_id", "note"),
    [
        ("gpt-5.5", "gpt-5.5", None),
        ("gpt-5-5", "gpt-5.5", "gpt-5-5 = gpt-5.5 (version dots: gpt-5.5)"),
        ("claude-opus-4-7", "claude-opus-4.7", None),
        ("o3", "o3-high", "o3 = o3-high (the catalogue's headline setting)"),
    ],
)
def test_names_in_the_snapshot(bp: BenchPress, name: str, model_id: str, note) -> None:
    ref = resolve_reference(bp, name, catalogue=None)
    assert (ref.model_id, ref.home, ref.snapshot) == (model_id, True, bp)
    if note is not None:
        assert ref.note == note


def test_a_model_without_its_setting_in_the_main_snapshot(main: BenchPress) -> None:
    with pytest.raises(AmbiguousNameError):
        main.resolve_model("claude-fable-5")  # the resolver itself never guesses
    ref = resolve_reference(main, "claude-fable-5", catalogue=None)
    assert ref.model_id == "claude-fable-5@xhigh" and ref.home
    assert ref.note == (
        "claude-fable-5 = claude-fable-5@xhigh (no catalogue headline: the highest reasoning "
        "effort)"
    )
    assert resolve_reference(main, "o3", catalogue=None).model_id == "o3-high"


def test_no_single_headline_stays_ambiguous(main: BenchPress) -> None:
    with pytest.raises(AmbiguousNameError) as caught:
        resolve_reference(main, "gemini-2.5-flash-lite-preview-06-17", catalogue=None)
    assert caught.value.suggestions == [
        "gemini-2.5-flash-lite-preview-06-17@thinking",
        "gemini-2.5-flash-lite-preview-06-17@thinking-16k",
    ]


def test_a_model_the_snapshot_lacks_comes_from_the_catalogue(
    bp: BenchPress, main: BenchPress
) -> None:
    with pytest.raises(UnknownNameError):
        resolve_reference(bp, "claude-fable-5", catalogue=None)
    ref = resolve_reference(bp, "claude-fable-5", catalogue=lambda: main)
    assert (ref.model_id, ref.home, ref.snapshot) == ("claude-fable-5@xhigh", False, main)
    assert ref.note == (
        "claude-fable-5 = claude-fable-5@xhigh (no catalogue headline: the highest reasoning "
        f"effort), from snapshot {MAIN}"
    )
    targets = ["mmlu_pro", "livebench_typos"]
    got = ref.predictions(targets, 0.9)
    i = main.fit_models_.index("claude-fable-5@xhigh")
    mean, low, high = main.fitted_values(keep_observed=True, level=0.9)
    for t in targets:
        j = main._column[t]
        assert (got[t].score, got[t].level) == (mean[i, j], 0.9)
        assert got[t].low == min(low[i, j], mean[i, j]) and got[t].high == max(
            high[i, j], mean[i, j]
        )
    assert got["livebench_typos"].observed and got["livebench_typos"].score == 88.0
    assert not got["mmlu_pro"].observed and np.isfinite(got["mmlu_pro"].confidence)
    with pytest.raises(ValueError, match="does not fit no_such_target"):
        ref.predictions(["no_such_target"], 0.9)


def test_unknown_everywhere_is_the_snapshots_own_error(bp: BenchPress, main) -> None:
    with pytest.raises(UnknownNameError) as caught:
        resolve_reference(bp, "claude-fabel-5", catalogue=lambda: main)
    with pytest.raises(UnknownNameError) as direct:
        bp.resolve_model("claude-fabel-5")
    assert str(caught.value) == str(direct.value)


def test_compare_with_known_models_uses_the_rule(bp: BenchPress, main: BenchPress) -> None:
    """By name the references are the ids the rule picks: the same ranking as by id."""
    probes = {"gsm8k": 85.1, "humaneval": 72.4}
    by_id = bp.compare_with_known_models(probes, ["o3-high", "gpt-5.5"])
    by_name = bp.compare_with_known_models(probes, ["o3", "gpt-5-5"])
    assert by_name.rankings == by_id.rankings
    assert by_id.notes == ()
    assert by_name.notes == (
        "o3 = o3-high (the catalogue's headline setting)",
        "gpt-5-5 = gpt-5.5 (version dots: gpt-5.5)",
    )
    assert by_name.summary().splitlines()[1:3] == [
        "  reference o3 = o3-high (the catalogue's headline setting)",
        "  reference gpt-5-5 = gpt-5.5 (version dots: gpt-5.5)",
    ]
