"""Trust features on synthetic matrices: probe selection, suspicious cells, rankings maths."""

from __future__ import annotations

import numpy as np
import pytest

import predictor.methods.bayesian as bayes
from predictor.methods.bayesian import BayesianCompleter
from predictor.methods.bayesian_batch import BatchFoldIn
from predictor.trust import (
    flag_suspicious,
    p_better,
    probe_set_error,
    select_probes,
    select_probes_detailed,
)
from predictor.trust.costs import default_cost, resolve_costs
from predictor.trust.rankings import Entry, is_tie, rank_entries


def _rank2(n=60, m=16, missing=0.15, seed=3, informative=(0, 1)):
    """Percent matrix whose structure lives in 2 factors; columns `informative` carry them
    almost noise-free, the rest are noisy mixtures."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(n, 2))
    v = rng.normal(size=(m, 2))
    noise = np.full(m, 0.5)
    noise[list(informative)] = 0.05
    z = u @ v.T + rng.normal(size=(n, m)) * noise
    values = 100.0 / (1.0 + np.exp(-z))
    values[rng.random((n, m)) < missing] = np.nan
    return values, ["percent"] * m


@pytest.fixture(scope="module")
def synthetic():
    values, scales = _rank2()
    return values, scales, BayesianCompleter().fit(values, scales)


def test_selected_probes_beat_random_sets(synthetic) -> None:
    values, scales, comp = synthetic
    chosen = select_probes(values, scales, k=2, completer=comp)
    assert len(chosen) == 2 and len(set(chosen)) == 2
    err = probe_set_error(values, scales, chosen, completer=comp)
    rng = np.random.default_rng(0)
    random_errs = [
        probe_set_error(values, scales, rng.choice(16, 2, replace=False), completer=comp)
        for _ in range(20)
    ]
    assert err < np.median(random_errs)
    assert err <= np.quantile(random_errs, 0.2)  # greedy is in the best fifth of random pairs


def test_selection_is_deterministic_and_errors_decrease(synthetic) -> None:
    values, scales, comp = synthetic
    a = select_probes_detailed(values, scales, k=4, completer=comp)
    b = select_probes_detailed(values, scales, k=4, completer=comp)
    assert a.columns == b.columns and a.errors == b.errors
    assert a.errors[0] < a.baseline_error
    assert a.to_frame().height == 4


def test_budget_and_candidates_are_respected(synthetic) -> None:
    values, scales, comp = synthetic
    costs = [5.0] * 8 + [1.0] * 8
    sel = select_probes_detailed(values, scales, k=5, costs=costs, budget=3.0, completer=comp)
    assert sel.total_cost <= 3.0 and all(c >= 8 for c in sel.columns)
    assert len(sel.columns) == 3
    only = select_probes(values, scales, k=2, candidates=[3, 4, 5], completer=comp)
    assert set(only) <= {3, 4, 5}
    with pytest.raises(ValueError, match=r"budget 0.5 is below the cheapest allowed probe"):
        select_probes_detailed(values, scales, k=2, costs=costs, budget=0.5, completer=comp)
    every = select_probes_detailed(values, scales, k=values.shape[1], completer=comp)
    steps = [every.baseline_error, *every.errors]
    assert all(b < a for a, b in zip(steps, steps[1:], strict=False))  # each probe helps
    assert len(every.columns) < values.shape[1]  # and the search stops when none would
    crossed = select_probes_detailed(values, scales, k=3, n_splits=3)
    assert crossed == select_probes_detailed(values, scales, k=3, n_splits=3)  # seeded
    assert len(crossed.columns) == 3 and crossed.errors == sorted(crossed.errors, reverse=True)
    # scored on models the completers did not see: more pessimistic than in-sample
    assert crossed.baseline_error > every.baseline_error
    with pytest.raises(ValueError, match="n_splits must be >= 1"):
        select_probes_detailed(values, scales, k=2, n_splits=0, completer=comp)
    with pytest.raises(ValueError, match="budget must be > 0"):
        select_probes_detailed(values, scales, k=2, budget=0, completer=comp)


def test_targets_restrict_scoring(synthetic) -> None:
    values, scales, comp = synthetic
    sel = select_probes_detailed(values, scales, k=1, targets=[5], completer=comp)
    # the target itself is scored leave-the-target-out, so picking it is not "free"
    assert sel.errors[0] > 0


def test_batch_foldin_matches_gaussian_fold_in(synthetic, monkeypatch) -> None:
    values, scales, comp = synthetic
    monkeypatch.setattr(bayes, "_FOLD_IN_REWEIGHTS", 0)
    engine = BatchFoldIn(comp, values)
    probes = [0, 3, 7]
    prec, shift = engine.system(probes)
    cols = np.arange(values.shape[1])
    mean, var = engine.predict_z(prec, shift, cols, with_var=True)
    low_b = engine.to_units(mean - engine.halfwidth_z(var, cols, 0.9), cols)
    for i in (0, 5, 17):
        row = np.full(values.shape[1], np.nan)
        row[probes] = values[i, probes]
        _, z = comp.fold_in(row, return_z=True)
        known = np.isfinite(row)
        np.testing.assert_allclose(mean[i], z, atol=1e-8)
        low, _ = comp.fold_in_interval(row, 0.9)
        np.testing.assert_allclose(low_b[i][~known], low[~known], atol=1e-6)


def test_planted_typo_is_flagged_first(synthetic) -> None:
    values, scales, _ = synthetic
    bad = values.copy()
    i, j = 4, 9
    if np.isnan(bad[i, j]):
        bad[i, j] = 50.0
    bad[i, j] = 99.0 if values[i, j] < 50 or np.isnan(values[i, j]) else 1.0
    flagged = flag_suspicious(bad, scales, threshold=3.0)
    assert flagged.height >= 1
    top = flagged.row(0, named=True)
    assert (top["model"], top["benchmark"]) == (i, j)
    clean = flag_suspicious(values, scales, threshold=6.0)
    assert clean.height == 0
    with pytest.raises(ValueError):
        flag_suspicious(values, scales, threshold=0)


def test_p_better_is_symmetric_and_directional() -> None:
    for a, sa, b, sb in [(70, 3, 65, 4), (50, 0.5, 50.2, 0.1), (10, 2, 30, 5)]:
        assert p_better(a, sa, b, sb) + p_better(b, sb, a, sa) == pytest.approx(1.0)
        assert p_better(a, sa, b, sb, higher_is_better=False) == pytest.approx(
            p_better(b, sb, a, sa)
        )
    assert p_better(70, 3, 65, 4) == pytest.approx(0.8413447, abs=1e-6)  # 5 / 5 sd
    assert p_better(1, 0, 0, 0) == 1.0 and p_better(0, 0, 0, 0) == 0.5


def test_tie_groups() -> None:
    assert is_tie(1.5, 0.9) and is_tie(10, 0.5) and not is_tie(10, 0.9)
    entries = [
        Entry("a", 80.0, 1.0, 78, 82),
        Entry("b", 79.0, 1.0, 77, 81),  # within 2 points of a
        Entry("c", 60.0, 1.0, 58, 62),  # far below
        Entry("d", 30.0, 20.0, 0, 60),  # 30 points below c but very uncertain
    ]
    r = rank_entries("x", entries)
    assert [e.name for e in r.order] == ["a", "b", "c", "d"]
    assert r.tie_groups[:3] == [1, 1, 2]
    assert r.tie_groups[3] == 3  # P(c > d) ~ 0.93 -> not a tie
    low = rank_entries("x", entries, higher_is_better=False)
    assert [e.name for e in low.order] == ["d", "c", "b", "a"]
    assert low.p_matrix[("d", "c")] == pytest.approx(r.p_matrix[("c", "d")])


def test_costs_defaults_and_overrides() -> None:
    assert default_cost("mmlu_pro") == 1.0
    assert default_cost("swe_bench_verified") > default_cost("humaneval") > 1.0
    assert default_cost("whatever", category="agentic") == 3.0
    out = resolve_costs(["mmlu_pro", "humaneval"], {"humaneval": 0.5})
    assert out.tolist() == [1.0, 0.5]
    with pytest.raises(ValueError):
        resolve_costs(["a"], [0.0])


def test_the_design_contract_names_import_from_the_package(synthetic) -> None:
    """DESIGN.md: `predictor.select_probes(values, scales, k=5, costs=None, targets=None)` is a
    pure function of the package, next to `predictor.complete_matrix`."""
    import predictor

    values, scales, comp = synthetic
    chosen = predictor.select_probes(values, scales, k=2, costs=None, targets=[4, 5, 6])
    assert chosen == select_probes(values, scales, k=2, targets=[4, 5, 6])
    assert len(chosen) == 2 and all(isinstance(c, int) for c in chosen)
    assert issubclass(predictor.AmbiguousNameError, predictor.UnknownNameError)
