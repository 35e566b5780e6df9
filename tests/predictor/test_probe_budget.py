"""Probe plans by cost (`predictor.trust.probe_plan`): near-duplicates refused, the budget
kept, subsets chosen where they cost less for the same error, the rows of one source's own
settings weighed as one model, and what `benchpress probes --budget-tokens` and `benchpress
run` show."""

from __future__ import annotations

import json

import numpy as np
import pytest

from predictor import BenchPress
from predictor.cli.main import main
from predictor.methods.registry import default_completer
from predictor.probe_sets import ProbeBenchmarks
from predictor.trust.probe_plan import (
    DEFAULT_BUDGET_TOKENS,
    Candidate,
    plan_probes_detailed,
    score_plan,
    subset_variance,
)
from predictor.trust.target_weights import source_row_weights
from predictor.util.paths import bundled_snapshot_dir

STORE = str(bundled_snapshot_dir())
PERCENT = ["percent"] * 10


@pytest.fixture(scope="module")
def matrix() -> tuple[np.ndarray, object]:
    """80 models x 10 benchmarks of a rank-2 model; column 1 is column 0 again, give or take
    a point (another benchmark of the same questions); a fifth of the cells unobserved."""
    rng = np.random.default_rng(0)
    u, v = rng.normal(size=(80, 2)), rng.normal(size=(10, 2))
    values = 100 / (1 + np.exp(-(u @ v.T + 0.15 * rng.normal(size=(80, 10)))))
    values[:, 1] = np.clip(values[:, 0] + rng.normal(0, 1.0, 80), 0.5, 99.5)
    values[rng.random(values.shape) < 0.2] = np.nan
    return values, default_completer(random_state=0).fit(values, PERCENT)


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=STORE)


def candidates(pool: str) -> list[Candidate]:
    return [
        Candidate("a", 0, "task_a", 10000, 100, pool),
        Candidate("b", 1, "task_b", 10000, 100, pool),
        Candidate("c", 2, "task_c", 500, 100),
        Candidate("d", 3, "task_d", 300, 100),
    ]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main([*argv, "--store", STORE])
    except SystemExit as exc:  # argparse's errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_plan_never_holds_two_benchmarks_of_one_item_pool(matrix) -> None:
    values, completer = matrix
    apart = plan_probes_detailed(values, PERCENT, candidates(""), 3e6, completer=completer)
    assert {"a", "b"} <= set(apart.benchmarks)  # told nothing, the search takes both copies
    pooled = plan_probes_detailed(values, PERCENT, candidates("one"), 3e6, completer=completer)
    assert len({"a", "b"} & set(pooled.benchmarks)) == 1


def test_the_greedy_runnable_set_takes_one_gpqa(bp: BenchPress) -> None:
    picked = bp.select_probes(k=5, runnable="lm_eval").benchmarks
    assert "gpqa_diamond" in picked
    assert not {"gpqa_main", "open_llm_gpqa"} & set(picked)


def test_a_plan_keeps_its_budget(matrix) -> None:
    values, completer = matrix
    for budget in (30_000, 200_000, 600_000):
        plan = plan_probes_detailed(values, PERCENT, candidates(""), budget, completer=completer)
        assert 0 < plan.tokens <= budget
        assert plan.tokens == sum(p.items * 100 for p in plan.probes)
    with pytest.raises(ValueError) as refused:
        plan_probes_detailed(values, PERCENT, candidates(""), 5000, completer=completer)
    assert str(refused.value) == (
        "a budget of 5,000 tokens is below the cheapest probe (a on 100 items: 10,000 "
        "tokens); raise the budget"
    )


def test_a_subset_is_chosen_where_it_costs_less_for_the_same_error(matrix) -> None:
    values, completer = matrix
    only = [Candidate("a", 0, "task_a", 10000, 100)]
    plan = plan_probes_detailed(values, PERCENT, only, 2_000_000, completer=completer)
    assert plan.items == {"a": 1600} and plan.probes[0].subset
    full = score_plan(values, PERCENT, only, {0: 10000}, completer=completer)
    assert (plan.tokens, full.tokens) == (160_000, 1_000_000)
    assert (round(plan.expected_error, 2), round(full.expected_error, 2)) == (10.87, 10.86)
    # fewer items cost less and add the binomial noise: 100 items predict worse
    assert score_plan(values, PERCENT, only, {0: 100}, completer=completer).expected_error > 11.9


def test_a_subset_adds_the_binomial_variance_of_the_items_left_out() -> None:
    # p (1 - p) (1/n - 1/N) in points^2: 2500 x (1/100 - 1/198)
    assert subset_variance(np.array([50.0]), 100, 198) == pytest.approx([12.373737], abs=1e-6)
    assert subset_variance(np.array([50.0]), 198, 198).tolist() == [0.0]


def test_one_sources_own_settings_weigh_as_one_model(bp: BenchPress) -> None:
    weights = source_row_weights(bp)
    counts = {w: int(np.isclose(weights, w).sum()) for w in (1.0, 1 / 50, 1 / 13, 1 / 6)}
    # LiveBench's 50 single-source rows, the paper matrix's 13, llm-stats' 6; 180 others
    assert counts == {1.0: 180, 1 / 50: 50, 1 / 13: 13, 1 / 6: 6}
    assert len(weights) == len(bp.fit_models_) == 249


def test_probes_budget_tokens_prints_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "probes", "--runnable", "lm-eval", "--budget-tokens", "2M")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == (
        "snapshot 2026.12.07.3: lm-eval probe plan within ~2.0M tokens (expected MedAE of the "
        "targets, in-sample, with each subset's sampling noise; no probe: 13.02)"
    )
    assert [line.split() for line in lines[1:10]] == [
        ["step", "benchmark", "task", "items", "tokens", "expected_medae"],
        ["1", "triviaqa", "triviaqa", "100", "of", "17944", "~6k", "12.64"],
        ["2", "arc_challenge", "arc_challenge", "100", "of", "1172", "~16k", "11.99"],
        ["3", "aime_2025", "aime25", "30", "~66k", "9.54"],
        ["4", "mmlu", "mmlu", "800", "of", "14042", "~400k", "8.15"],
        ["5", "gpqa_diamond", "gpqa_diamond_cot_zeroshot", "198", "~297k", "6.28"],
        ["6", "math", "hendrycks_math", "100", "of", "5000", "~60k", "6.17"],
        ["7", "aime_2024", "aime24", "30", "~66k", "6.12"],
        ["8", "gsm8k", "gsm8k_cot", "400", "of", "1319", "~520k", "6.05"],
    ]
    assert lines[10:] == [
        "plan: 8 tasks (5 on a seeded random subset of their items), ~1.4M tokens, expected "
        "MedAE 6.05",
        "below the budget: no other task, and no more items, lowers the expected MedAE by "
        "0.05 or more",
        "run it and predict:",
        "  benchpress run MODEL --model-type TYPE --budget-tokens 2M --predict",
    ]
    code, out, _ = cli(capsys, "probes", "--runnable", "lm-eval", "--budget-tokens", "2M", "--json")
    payload = json.loads(out)
    assert payload["tokens"] == 1_431_000 and payload["budget_tokens"] == 2_000_000
    assert payload["probes"][3] == {
        "benchmark": "mmlu",
        "task": "mmlu",
        "items": 800,
        "total_items": 14042,
        "tokens": 400_000,
        "expected_medae": pytest.approx(8.15, abs=0.005),
    }


def test_probes_budget_tokens_refusals(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "probes", "--budget-tokens", "2M")
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        "benchpress: error: --budget-tokens plans the probes of one tool: add --runnable "
        "lm-eval or inspect"
    )
    code, _, err = cli(capsys, "probes", "--runnable", "lm-eval", "--budget-tokens", "lots")
    assert code == 2
    assert "expected a number of tokens (2000000, 2M, 500k), got 'lots'" in err
    code, _, err = cli(capsys, "probes", "--runnable", "lm-eval", "--budget-tokens", "5k")
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        "benchpress: error: a budget of 5,000 tokens is below the cheapest probe (triviaqa on "
        "100 items: 6,000 tokens); raise the budget"
    )


def test_run_runs_the_snapshots_plan_by_default(
    bp: BenchPress, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "run", "m", "--model-type", "dummy", "--dry-run", "--out", "r")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == (
        "plan: m with lm-eval (dummy), 9 probes, a probe plan by cost (5 tasks on seeded "
        "random subsets of their items, seed 0), files in r"
    )
    table = lines[lines.index(next(x for x in lines if x.startswith("benchmark "))) :][:10]
    assert [line.split()[:-3] for line in table[1:]] == [
        ["triviaqa", "triviaqa", "100", "of", "17944", "0"],
        ["arc_challenge", "arc_challenge", "100", "of", "1172", "0"],
        ["aime_2025", "aime25", "30", "0"],
        ["mmlu", "mmlu", "800", "of", "14042", "0"],
        ["gpqa_diamond", "gpqa_diamond_cot_zeroshot", "198", "0"],
        ["math", "hendrycks_math", "100", "of", "5000", "0"],
        ["aime_2024", "aime24", "30", "0"],
        ["gsm8k", "gsm8k_cot", "400", "of", "1319", "8"],
        ["ifeval", "ifeval", "541", "0"],
    ]
    # cheaper than the five full tasks it replaced (~8.6M tokens: DEFAULT_BUDGET_TOKENS)
    assert lines[-1] == "to run: 9 tasks, ~2.2M tokens, ~18 min at 2,000 tokens/s (estimates)"
    names, items = ProbeBenchmarks.runnable_plan(bp, "lm_eval")
    assert [line.split()[0] for line in table[1:]] == list(names)
    assert items == {"triviaqa": 100, "arc_challenge": 100, "mmlu": 800, "math": 100, "gsm8k": 400}
    assert DEFAULT_BUDGET_TOKENS == 8_600_000
    # a budget of one's own: the plan within it, chosen now
    code, out, _ = cli(
        capsys, "run", "m", "--model-type", "dummy", "--dry-run", "--budget-tokens", "2M"
    )
    assert code == 0 and out.splitlines()[0].startswith("plan: m with lm-eval (dummy), 8 probes")
    code, _, err = cli(
        capsys, "run", "m", "--model-type", "dummy", "--probes", "mmlu", "--budget-tokens", "2M"
    )
    assert code == 2
    assert "budget_tokens (--budget-tokens) plans the default probes" in err
