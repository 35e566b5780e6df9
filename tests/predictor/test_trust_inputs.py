"""Inputs of the trust helpers and of name resolution, as users give them: repeated or
aliased reference models, predictions at another level or for fewer benchmarks, display
names, cost overrides by name, allowlists and `top`/`budget` out of range."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

from predictor import BenchPress, FractionScoresWarning, UnknownNameError
from predictor.names.resolve import AmbiguousNameError, NameResolver, display_names, fold
from predictor.snapshots.reader import list_versions
from predictor.trust import compare_with_known_models, resolve_costs, what_to_run_next
from predictor.trust.costs import NOT_RUNNABLE
from predictor.trust.rankings import _reference_ids
from predictor.util.paths import bundled_snapshot_dir

PROBES = {"gpqa_diamond": 80}
VERSION = list_versions(bundled_snapshot_dir())[-1]


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=bundled_snapshot_dir())


@pytest.fixture(scope="module")
def predictions(bp: BenchPress):
    return bp.predict(PROBES, level=0.8)


# ------------------------------------------------------------- compare_with_known_models
@pytest.mark.parametrize(
    "references",
    [
        ["claude-3-opus", "claude-3-opus"],
        ["claude-3-opus", "Claude 3 Opus"],
        ["Claude 3 Opus", "claude-3-opus", "CLAUDE-3-OPUS"],
        "claude-3-opus",  # one name, not its letters
    ],
)
def test_repeated_reference_models_count_once(bp: BenchPress, references) -> None:
    result = bp.compare_with_known_models(PROBES, references, targets="chat")
    once = bp.compare_with_known_models(PROBES, ["claude-3-opus"], targets="chat")
    assert result.to_frame().equals(once.to_frame())
    assert result.to_frame()["reference_model"].unique().to_list() == ["claude-3-opus"]
    assert result.summary().startswith("new model among 1 reference model (90% intervals):")


def test_a_probe_is_shown_as_observed_without_an_interval(bp: BenchPress) -> None:
    result = bp.compare_with_known_models(
        {**PROBES, "mmlu_pro": 74}, ["gpt-4o"], targets=["mmlu_pro"]
    )
    lines = result.summary().splitlines()
    assert lines[1] == "  mmlu_pro: observed 74.0, rank 2 of 2 (expected 1.9)"
    assert lines[2] == "      vs gpt-4o (75.8, observed): P(better) = 0.10"


def test_repeats_are_dropped_keeping_the_first_order(bp: BenchPress) -> None:
    refs = ["gpt-4o", "claude-3-opus", "GPT-4o", "Claude 3 Opus", "gpt-4o"]
    assert _reference_ids(bp, refs, "new model") == ["gpt-4o", "claude-3-opus"]
    result = compare_with_known_models(bp, PROBES, refs, targets=["gpqa_diamond"])
    assert sorted(result.to_frame()["reference_model"]) == ["claude-3-opus", "gpt-4o"]
    assert "among 2 reference models" in result.summary()


def test_predictions_level_is_used_and_a_different_level_is_refused(
    bp: BenchPress, predictions
) -> None:
    result = bp.compare_with_known_models(predictions, ["claude-3-opus"], targets="chat")
    assert result.level == 0.8
    assert "(80% intervals)" in result.summary()
    same = bp.compare_with_known_models(predictions, ["claude-3-opus"], targets="chat", level=0.8)
    assert same.to_frame().equals(result.to_frame())
    from_probes = bp.compare_with_known_models(PROBES, ["claude-3-opus"], targets="chat", level=0.8)
    assert from_probes.to_frame().equals(result.to_frame())
    with pytest.raises(ValueError) as caught:
        bp.compare_with_known_models(predictions, ["claude-3-opus"], level=0.5)
    assert str(caught.value) == (
        "level=0.5 differs from the level of the given predictions (0.8): omit level, or "
        "pass the probe scores to compare at 0.5"
    )


def test_probe_scores_default_to_the_90_percent_level(bp: BenchPress) -> None:
    assert bp.compare_with_known_models(PROBES, ["claude-3-opus"]).level == 0.9


def test_predictions_at_mixed_levels_are_refused(bp: BenchPress, predictions) -> None:
    mixed = {**bp.predict(PROBES, level=0.9), "ifeval": predictions["ifeval"]}
    with pytest.raises(ValueError, match=r"^the predictions mix interval levels \(0.8, 0.9\)"):
        bp.compare_with_known_models(mixed, ["claude-3-opus"])


def test_partial_predictions_name_the_missing_targets(bp: BenchPress, predictions) -> None:
    partial = {"gpqa_diamond": predictions["gpqa_diamond"]}
    with pytest.raises(ValueError) as caught:
        bp.compare_with_known_models(partial, ["claude-3-opus"])
    assert str(caught.value) == (
        "the predictions lack 4 target(s): mmlu_pro, ifeval, chatbot_arena_elo, "
        "swe_bench_verified; pass bp.predict(...) output for every benchmark, or targets= "
        "among those predicted"
    )
    only = bp.compare_with_known_models(partial, ["claude-3-opus"], targets=["GPQA Diamond"])
    assert only.to_frame()["benchmark"].to_list() == ["gpqa_diamond"]


def test_reference_errors_stay_clear(bp: BenchPress) -> None:
    with pytest.raises(ValueError, match="^give at least one reference model$"):
        bp.compare_with_known_models(PROBES, [])
    with pytest.raises(ValueError, match="clashes with a reference model"):
        bp.compare_with_known_models(PROBES, ["Claude 3 Opus"], name="claude-3-opus")


# ------------------------------------------------------------------------ name resolution
@pytest.mark.parametrize(
    ("resolver", "name", "expected"),
    [
        ("benchmark", "MBPP", "mbpp"),  # the display name; "MBPP Plus" is mbpp_plus
        ("benchmark", "mbpp", "mbpp"),
        ("benchmark", "MBPP+", "mbpp_plus"),
        ("benchmark", "mbpp plus", "mbpp_plus"),
        ("benchmark", "HumanEval", "humaneval"),
        ("benchmark", "HumanEval+", "humaneval_plus"),
        ("benchmark", "MMLU Pro", "mmlu_pro"),  # not open_llm_mmlu_pro's "MMLU-PRO"
        ("benchmark", "Mmlu-Pro", "mmlu_pro"),
        ("benchmark", "MMLU-PRO", "open_llm_mmlu_pro"),  # that source's exact spelling
        ("benchmark", "GPQA Diamond", "gpqa_diamond"),  # README
        ("benchmark", "GRAPHWALKS BFS >128K", "graphwalks_bfs_128k_plus"),
        ("benchmark", "GRAPHWALKS BFS <128K", "graphwalks_bfs_0k_128k"),
        ("model", "Gemini 2.5 Pro", "gemini-2.5-pro"),
        ("model", "Gemini-2.5-Pro", "gemini-2.5-pro-exp-03-25"),  # LiveCodeBench's alias
        ("model", "o3-mini (high)", "o3-mini-high"),  # tests/predictor/test_benchpress_api
        ("model", "Claude 3 Opus", "claude-3-opus"),
        ("model", "Command R+ (08-2024)", "command-r-plus-08-2024"),
        ("model", "Command R (08-2024)", "command-r-08-2024"),
        ("model", "yi-coder-9b-chat quant-q4_0", "yi-coder-9b-chat@quant-q4_0"),
        ("model", "gpt-oss-120b (medium)", "gpt-oss-120b@medium"),
    ],
)
def test_names_resolve_exact_before_folded(bp: BenchPress, resolver, name, expected) -> None:
    resolve = bp.resolve_benchmark if resolver == "benchmark" else bp.resolve_model
    assert resolve(name) == expected


def test_fold_keeps_plus() -> None:
    assert fold("GPQA Diamond") == fold("gpqa_diamond") == "gpqadiamond"
    assert fold("MBPP+") == "mbpp+" != fold("MBPP")
    assert fold("o1@medium") == fold("o1 (medium)") == "o1medium"


def test_a_genuinely_ambiguous_name_says_so(bp: BenchPress) -> None:
    with pytest.raises(AmbiguousNameError) as caught:
        bp.resolve_model("Gemini 2.5 Flash Preview")
    assert isinstance(caught.value, UnknownNameError)  # CLI exit 2, web 400 as before
    assert str(caught.value) == (
        "ambiguous model 'Gemini 2.5 Flash Preview' could be: gemini-2.5-flash-preview-04-17, "
        "gemini-2.5-flash-preview-05-20; give one of these ids"
    )
    assert caught.value.suggestions == [
        "gemini-2.5-flash-preview-04-17",
        "gemini-2.5-flash-preview-05-20",
    ]


def test_unknown_names_still_list_close_matches(bp: BenchPress) -> None:
    with pytest.raises(UnknownNameError) as caught:
        bp.resolve_benchmark("gpqa_diamnd")
    assert not isinstance(caught.value, AmbiguousNameError)
    assert str(caught.value) == (
        "unknown benchmark 'gpqa_diamnd'; did you mean: gpqa_diamond, gpqa_main, gaia?"
    )


def test_display_names_resolve_when_given(bp: BenchPress) -> None:
    table = bp.snapshot.benchmarks
    names = display_names(table, "benchmark_id")
    assert names["mbpp"] == "MBPP" and len(names) == table.height
    resolve = NameResolver("benchmark", bp.benchmarks, bp.snapshot.aliases, names)
    shown = "Open LLM Leaderboard v2 GPQA (lm-eval-harness setup)"  # in no alias table
    assert bp.resolve_benchmark(shown) == "open_llm_gpqa"  # BenchPress passes display names
    assert resolve(shown) == resolve(shown.upper()) == "open_llm_gpqa"
    assert resolve("MBPP") == "mbpp" and resolve("MBPP+") == "mbpp_plus"
    assert resolve("MMLU Pro") == "mmlu_pro" and resolve("MMLU-PRO") == "open_llm_mmlu_pro"
    assert display_names(table.drop("name"), "benchmark_id") == {}


def test_display_names_come_after_aliases_and_before_any_folding() -> None:
    spellings = {"x-1": "b", "Y 1": "b", "z-1": "b", "w_1": "a"}
    aliases = pl.DataFrame(
        {"kind": "model", "source": "s", "name": list(spellings), "id": list(spellings.values())}
    )
    shown = {"a": "X 1", "c": "X 1", "d": "Z 1", "e": "W 1"}
    resolve = NameResolver("model", ["a", "b", "c", "d", "e"], aliases, shown)
    assert resolve("x-1") == "b"  # a source's exact spelling
    assert resolve("z 1") == "d"  # a display name ignoring case, before the folded alias z-1
    assert resolve("y-1") == "b"  # folded alias
    assert resolve("W 1") == "e"
    with pytest.raises(AmbiguousNameError) as caught:
        resolve("x 1")  # two display names; the folded alias x-1 (b) is not one of them
    assert str(caught.value) == "ambiguous model 'x 1' could be: a, c; give one of these ids"


def test_a_looser_match_only_picks_among_the_open_ids() -> None:
    aliases = pl.DataFrame({"kind": ["model"], "source": ["s"], "name": ["v_1"], "id": ["a"]})
    resolve = NameResolver("model", ["a", "b"], aliases, {"a": "V 1", "b": "V 1"})
    assert resolve("v 1") == "a"  # both display names; the folded alias picks a of the two


# ------------------------------------------------------------------------- cost overrides
def test_cost_overrides_resolve_names(bp: BenchPress) -> None:
    plain = bp.select_probes(k=2, targets="chat", budget=3)
    assert plain.benchmarks == ["aime_2025", "open_llm_mmlu_pro"]
    priced = bp.select_probes(k=2, targets="chat", costs={"AIME 2025": 1000}, budget=3)
    assert "aime_2025" not in priced.benchmarks  # the display name priced it out
    assert priced.to_frame().row(0, named=True)["benchmark"] == "livebench"


@pytest.mark.parametrize(
    ("costs", "error", "message"),
    [
        ({"zzz": -5}, UnknownNameError, "unknown benchmark 'zzz'"),
        ({"gpqa_diamnd": 2}, UnknownNameError, "did you mean: gpqa_diamond"),
        ({"MMLU Pro": 0}, ValueError, "cost of 'mmlu_pro' must be finite and > 0, got 0"),
        ({"mmlu_pro": -5}, ValueError, "cost of 'mmlu_pro' must be finite and > 0, got -5"),
        ({"mmlu_pro": float("inf")}, ValueError, "cost of 'mmlu_pro' must be finite"),
        ({"mmlu_pro": float("nan")}, ValueError, "cost of 'mmlu_pro' must be finite"),
        ({"agieval": -1}, ValueError, "cost of 'agieval' must be finite and > 0, got -1"),
        ({"mmlu_pro": "2"}, TypeError, "cost of 'mmlu_pro' must be a number, got '2'"),
        ({"mmlu_pro": True}, TypeError, "cost of 'mmlu_pro' must be a number, got True"),
        ({"mmlu_pro": 2, "MMLU-Pro": 3}, ValueError, "'mmlu_pro' is given twice"),
    ],
)
def test_bad_cost_overrides_are_clear_errors(bp: BenchPress, costs, error, message) -> None:
    with pytest.raises(error) as caught:
        bp.select_probes(k=1, targets="chat", costs=costs)
    assert message in str(caught.value)


def test_cost_overrides_also_apply_to_what_to_run_next(bp: BenchPress) -> None:
    frame = bp.what_to_run_next(PROBES, targets="chat", top=None, costs={"MMLU Pro": 7})
    assert frame.filter(pl.col("benchmark") == "mmlu_pro")["cost"].to_list() == [7.0]


def test_resolve_costs_without_a_resolver_needs_exact_ids() -> None:
    assert resolve_costs(["mmlu_pro", "humaneval"], {"humaneval": 0.5}).tolist() == [1.0, 0.5]
    with pytest.raises(UnknownNameError, match="unknown benchmark 'humaneva'; did you mean"):
        resolve_costs(["mmlu_pro", "humaneval"], {"humaneva": 0.5})
    with pytest.raises(ValueError, match="cost of 'b' must be finite and > 0, got -1.0"):
        resolve_costs(["a", "b"], [1.0, -1.0])


# ------------------------------------------------------------------------------ allowlist
def test_a_string_allowlist_is_one_name(bp: BenchPress) -> None:
    one = bp.select_probes(k=2, targets="chat", allowlist="MMLU Pro")
    assert one.benchmarks == ["mmlu_pro"]
    assert bp.select_probes(k=2, targets="chat", allowlist=["mmlu_pro"]) == one


@pytest.mark.parametrize(
    ("allowlist", "error", "message"),
    [
        (
            [],
            ValueError,
            "allowlist is empty: give the benchmarks that may be probes, or None for all",
        ),
        ((), ValueError, "allowlist is empty"),
        (
            ["hle", "agieval"],
            ValueError,
            f"allowlist: benchmark 'agieval' has too few observations in snapshot {VERSION} to "
            "be used as a probe",
        ),
        (["gpqa_diamnd"], UnknownNameError, "unknown benchmark 'gpqa_diamnd'; did you mean"),
    ],
)
def test_bad_allowlists_name_the_allowlist(bp: BenchPress, allowlist, error, message) -> None:
    with pytest.raises(error) as caught:
        bp.select_probes(k=2, targets="chat", allowlist=allowlist)
    assert str(caught.value).startswith(message)


# -------------------------------------------------------------------------- what_to_run_next
@pytest.mark.parametrize("top", [-1, 0, 2.5, True, "3"])
def test_top_must_be_a_positive_int(bp: BenchPress, top) -> None:
    with pytest.raises(ValueError) as caught:
        what_to_run_next(bp, PROBES, targets="chat", top=top)
    assert str(caught.value) == f"top must be a positive integer or None (every row), got {top!r}"


def test_top_none_gives_every_candidate(bp: BenchPress) -> None:
    every = bp.what_to_run_next(PROBES, targets="chat", top=None)
    runnable = [b for b in bp.fit_benchmarks_ if b not in NOT_RUNNABLE]
    assert every.height == len(runnable) - len(PROBES)  # arenas and indices are not run
    assert every["rank"].to_list() == list(range(1, every.height + 1))
    assert bp.what_to_run_next(PROBES, targets="chat", top=3).equals(every.head(3))


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        (0, "budget must be > 0, got 0"),
        (-1, "budget must be > 0, got -1"),
        (float("nan"), "budget must be > 0, got nan"),
        (
            0.1,
            "budget 0.1 is below the cheapest unobserved benchmark (aider_code_editing_whole, "
            "cost 0.25); raise the budget",
        ),
    ],
)
def test_budget_must_afford_a_benchmark(bp: BenchPress, budget, message) -> None:
    with pytest.raises(ValueError) as caught:
        bp.what_to_run_next(PROBES, targets="chat", budget=budget)
    assert str(caught.value) == message
    if budget <= 0:  # the same rule as select_probes
        with pytest.raises(ValueError, match=f"^{message}$"):
            bp.select_probes(k=1, targets="chat", budget=budget)


def test_next_width_columns_are_points_over_percent_targets(bp: BenchPress) -> None:
    """An Elo target must not be averaged with percentages in the width columns."""
    known = {"gpqa_diamond": 80.0}
    targets = ["chatbot_arena_elo", "gpqa_main", "mmlu_pro"]
    frame = bp.what_to_run_next(known, targets=targets, top=None)
    preds = bp.predict(known)
    points = [preds[t].high - preds[t].low for t in ("gpqa_main", "mmlu_pro")]
    assert frame["width_before"].unique().to_list() == [pytest.approx(sum(points) / 2)]
    assert frame["width_before"][0] < 100  # an Elo width (~90+ points of rating) is left out
    elo_only = bp.what_to_run_next(known, targets=["chatbot_arena_elo"], top=1)
    elo = preds["chatbot_arena_elo"]
    assert elo_only["width_before"][0] == pytest.approx(elo.high - elo.low)


def test_one_unknown_target_word_suggests_profiles_too(bp: BenchPress) -> None:
    with pytest.raises(UnknownNameError) as caught:
        bp.select_probes(k=1, targets="reasonin")
    message = str(caught.value)
    assert message.startswith(
        "unknown profile or benchmark 'reasonin'; profiles: coding_assistant, chat, reasoning, "
        "general_assistant; did you mean: reasoning, "
    )
    assert len(bp.predict(PROBES, targets="all")) == len(bp.fit_benchmarks_)  # as in the web
    spelled = bp.select_probes(k=1, targets="Coding assistant")
    assert spelled.benchmarks == bp.select_probes(k=1, targets="coding_assistant").benchmarks


def test_scores_that_look_like_fractions_are_warned_about(bp: BenchPress) -> None:
    with pytest.warns(FractionScoresWarning, match=r"\(gpqa_diamond=0\.8, mmlu_pro=0\.75\)"):
        bp.predict({"gpqa_diamond": 0.8, "mmlu_pro": 0.75})
    # beside a percentage, the fraction-like score is named (it used to pass silently)
    with pytest.warns(FractionScoresWarning, match=r"^mmlu_pro=0\.75 looks like a fraction"):
        bp.predict({"gpqa_diamond": 80, "mmlu_pro": 0.75})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # percentages, or a genuine zero: no warning
        bp.predict({"gpqa_diamond": 80, "mmlu_pro": 75})
        bp.predict({"hle": 0})


def test_a_model_name_without_its_setting_lists_the_settings(bp: BenchPress) -> None:
    with pytest.raises(AmbiguousNameError) as caught:
        bp.resolve_model("o3")
    assert caught.value.suggestions == ["o3-high", "o3@low", "o3@medium"]  # not o3-mini-high
    assert "give one of these ids" in str(caught.value)
    assert bp.resolve_model("o3@low") == "o3@low" and bp.resolve_model("gpt-5") == "gpt-5"
    for name, first in [("dialogpt", "dialogpt@medium"), ("mistral", "mistral-7b")]:
        with pytest.raises(UnknownNameError) as one:  # one setting, or a size: never a guess
            bp.resolve_model(name)
        assert not isinstance(one.value, AmbiguousNameError)
        assert one.value.suggestions[0] == first
        assert len(set(one.value.suggestions)) == len(one.value.suggestions)
    with pytest.raises(UnknownNameError) as unknown:
        bp.resolve_benchmark("gpqa_diamnd")  # benchmarks have no settings: close matches
    assert not isinstance(unknown.value, AmbiguousNameError)


def test_predictions_stay_inside_each_benchmark_valid_range(bp: BenchPress) -> None:
    """A weak model's open-scale predictions used to run negative (dollars -339, minutes -29,
    a Codeforces rating interval from -127): everything stays inside the benchmark's range."""
    weak = bp.predict({"gpqa_diamond": 30, "mmlu_pro": 40, "hle": 3})
    bounds = dict(bp.snapshot.benchmarks.select("benchmark_id", "lower").iter_rows())
    for benchmark, p in weak.items():
        assert bounds[benchmark] <= p.low <= p.score <= p.high, (benchmark, p)
    dollars = weak["swelancer_freelance_dollars"]
    assert dollars.low == 0.0 and dollars.high > 10_000  # the upper end is the model's own


def test_every_shown_completion_stays_in_range(bp: BenchPress) -> None:
    """The fitted block (heatmap, /api/models, /api/cell, reference models in comparisons)
    goes through the same range as predict: 168 fitted means were below their floor."""
    mean, low, high = bp.fitted_values(keep_observed=False, level=0.9)
    floor, ceiling = bp._bounds
    assert (mean >= floor).all() and (low >= floor).all() and (high <= ceiling).all()
    ranked = bp.compare_with_known_models(
        {"gpqa_diamond": 80, "hle": 20},
        ["arcee-trinity-large-preview"],
        targets=["metr_time_horizon"],
    ).to_frame()
    (minutes,) = ranked["reference_score"].to_list()
    assert minutes >= 0.0  # a fit once put it at -2.3 minutes
