"""`BenchPress.predict` folds a new model in with the side information the fit used, decided
in order: given arguments; a model the snapshot knows (its own date and family); a fine-tune,
merge or quantisation of a known base (the base's); otherwise the family read from the name
and the release date inferred from the probes. The answer says which and why."""

from __future__ import annotations

import pytest

from predictor import BenchPress, ProbeScoreError, SideUsed
from predictor.names.resolve import AmbiguousNameError, UnknownNameError
from predictor.snapshots.reader import list_versions
from predictor.util.paths import bundled_snapshot_dir

PROBES = {"gpqa_diamond": 50, "hle": 5, "mmlu_pro": 72}


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    version = list_versions(bundled_snapshot_dir())[-1]
    return BenchPress.load(version, store=bundled_snapshot_dir())


def own_side(bp: BenchPress, model_id: str) -> tuple[str, str]:
    """(release date, date source) of a snapshot model, from its models table."""
    row = bp.snapshot.models.filter(bp.snapshot.models["model_id"] == model_id).row(0, named=True)
    return row["release_date"], row["date_source"]


def test_a_known_model_keeps_its_own_date_and_family(bp: BenchPress) -> None:
    date, source = own_side(bp, "gpt-4o-0513")
    assert (date, source) == ("2024-05-13", "catalogue")
    answer = bp.predict(PROBES, model="gpt-4o-0513")
    assert answer.side == SideUsed(
        model="gpt-4o-0513",
        family="gpt4o",
        family_known=True,
        release_date="2024-05-13",
        release_date_source="catalogue",
        basis="known model",
        known_model="gpt-4o-0513",
    )
    assert answer.side.describe() == (
        "known model gpt-4o-0513: family gpt4o, release date 2024-05-13 (catalogue)"
    )
    # exactly what a caller handing in the same date and family gets
    given = bp.predict(PROBES, model="someone", family="gpt4o", release_date="2024-05-13")
    assert given == answer


@pytest.mark.parametrize(
    ("written", "model_id"),
    [
        ("openai/gpt-4o", "gpt-4o"),
        ("anthropic/claude-sonnet-4", "claude-sonnet-4"),
        ("google/gemini-2.5-pro", "gemini-2.5-pro"),
        ("openai/gpt-oss-120b", "gpt-oss-120b"),
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("openrouter/openai/gpt-4o", "gpt-4o"),
    ],
)
def test_names_as_tools_write_them_are_known_models(
    bp: BenchPress, written: str, model_id: str
) -> None:
    answer = bp.predict(PROBES, model=written)
    assert (answer.side.basis, answer.side.known_model) == ("known model", model_id)
    assert answer == bp.predict(PROBES, model=model_id)


def test_settings_of_one_model_share_its_side_information(bp: BenchPress) -> None:
    with pytest.raises(AmbiguousNameError):
        bp.resolve_model("o3")  # o3-high, o3@low, o3@medium: ambiguous as a model to pick
    side = bp.predict(PROBES, model="o3").side
    assert (side.basis, side.family, side.release_date) == ("known model", "o3", "2025-04-16")


def test_a_fine_tune_takes_its_base_s_date_and_family(bp: BenchPress) -> None:
    base = bp.predict(PROBES, model="qwen3-32b")
    tuned = bp.predict(PROBES, model="qwen3-32b-sft-v2")
    assert (tuned.side.basis, tuned.side.base_model) == ("base model", "qwen3-32b")
    assert tuned.side.derivation == "fine-tune, from the name"
    assert (tuned.side.family, tuned.side.release_date) == (
        base.side.family,
        base.side.release_date,
    )
    assert tuned == base
    quantised = bp.predict(PROBES, model="my-org/qwen3-32b-sft-v2-q4_k_m")
    assert quantised.side.describe().startswith(
        "base qwen3-32b (fine-tune+quantisation, from the name): family qwen3, release date"
    )
    # a base named by the caller wins over the name; an unknown base is an error
    given = bp.predict(PROBES, model="our-assistant-v3", base="qwen3-32b")
    assert (given.side.base_model, given.side.derivation) == ("qwen3-32b", "given")
    assert given == base
    with pytest.raises(UnknownNameError, match="unknown model 'qwen9-1t'"):
        bp.predict(PROBES, model="x", base="qwen9-1t")


def test_without_a_known_name_the_date_is_inferred_from_the_probes(bp: BenchPress) -> None:
    weak = bp.predict({"gpqa_diamond": 30, "mmlu_pro": 45})
    strong = bp.predict({"gpqa_diamond": 85, "hle": 30, "mmlu_pro": 85})
    for answer in (weak, strong):
        side = answer.side
        assert (side.basis, side.release_date_source) == ("no name", "inferred from the probes")
        assert 1.0 < side.release_date_sd_months < 24.0
    assert weak.side.release_date < strong.side.release_date  # better scores: a later model
    newest = max(d for d in bp.snapshot.models["release_date"].drop_nulls())
    assert weak.side.release_date < newest  # never silently the fit's newest day
    text = weak.side.describe()
    assert text.startswith(
        "no family (no model name given), release date inferred from the probes: "
    )
    assert text.endswith(" months")
    unknown = bp.predict(PROBES, model="acme-frontier-1")
    assert (unknown.side.basis, unknown.side.family, unknown.side.family_known) == (
        "name",
        "acme-frontier-1",
        False,
    )
    assert unknown == bp.predict(PROBES)  # an unknown family: the population, as with no name


def test_a_given_date_wins(bp: BenchPress) -> None:
    old = bp.predict(PROBES, model="gpt-4o", release_date="2023-01-01")
    assert (old.side.release_date, old.side.release_date_source) == ("2023-01-01", "given")
    assert old.side.basis == "known model"
    assert old != bp.predict(PROBES, model="gpt-4o")
    with pytest.raises(ProbeScoreError, match="release_date must be a date"):
        bp.predict(PROBES, release_date="last tuesday")
    with pytest.raises(ProbeScoreError, match="family must be a non-empty name"):
        bp.predict(PROBES, family=" ")
    with pytest.raises(ProbeScoreError, match="base must be a non-empty name"):
        bp.predict(PROBES, base=" ")


def test_predictive_draws_use_the_same_side_information(bp: BenchPress) -> None:
    for side in ({"model": "claude-opus-4.5-preview"}, {}):
        names, draws = bp.predictive_draws(PROBES, n=2000, **side)
        j = names.index("swe_bench_verified")
        answer = bp.predict(PROBES, **side)["swe_bench_verified"]
        assert abs(float(draws[:, j].mean()) - answer.score) < 1.5


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
