"""Trust features on the bundled snapshot: profiles, comparisons, what to run next."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from predictor import BenchPress
from predictor.trust import (
    PROFILES,
    compare_models,
    compare_with_known_models,
    profile,
    resolve_targets,
    select_probes_for,
    suspicious_scores,
    what_to_run_next,
)
from predictor.trust.costs import NOT_RUNNABLE
from predictor.util.paths import bundled_snapshot_dir

STRONG = {"gpqa_diamond": 80, "hle": 20, "mmlu_pro": 80}
WEAK = {"gpqa_diamond": 40, "hle": 5, "mmlu_pro": 50}


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=bundled_snapshot_dir())


def test_profiles_are_filtered_to_available() -> None:
    assert profile("chat", ["ifeval", "arena_hard", "other"]) == ["arena_hard", "ifeval"]
    assert resolve_targets("reasoning", ["math", "gsm8k"]) == ["gsm8k", "math"]
    assert resolve_targets(None, ["a"]) is None
    assert resolve_targets(["a", "a"], ["a", "b"]) == ["a"]
    with pytest.raises(ValueError, match="unknown profile"):
        profile("nope")
    with pytest.raises(ValueError, match="no benchmark"):
        resolve_targets("chat", ["math"])
    with pytest.raises(ValueError):
        resolve_targets(["zzz"], ["a"])
    assert set(PROFILES) == {"coding_assistant", "chat", "reasoning", "general_assistant"}


def test_compare_models_orders_and_ties(bp: BenchPress) -> None:
    twin = {"gpqa_diamond": 80.5, "hle": 20, "mmlu_pro": 80}
    comp = compare_models(bp, [WEAK, STRONG, twin], "reasoning", names=["weak", "strong", "twin"])
    frame = comp.to_frame()
    assert set(frame["benchmark"]) == set(profile("reasoning", bp.fit_benchmarks_))
    for r in comp.rankings:
        assert r.order[-1].name == "weak"
        names = [e.name for e in r.order]
        g = dict(zip(names, r.tie_groups, strict=True))
        assert g["strong"] == g["twin"] != g["weak"]  # near-identical probes tie
        for a in names:
            for b in names:
                if a != b:
                    assert r.p_matrix[(a, b)] + r.p_matrix[(b, a)] == pytest.approx(1.0)
    assert "~" in comp.summary()
    with pytest.raises(ValueError):
        compare_models(bp, [STRONG], "chat")


def test_compare_with_known_models(bp: BenchPress) -> None:
    refs = bp.fit_models_[:3]
    result = compare_with_known_models(bp, STRONG, refs, targets="chat")
    frame = result.to_frame()
    assert frame.height == 3 * len(profile("chat", bp.fit_benchmarks_))
    assert frame["p_new_better"].is_between(0, 1).all()
    assert "P(better)" in result.summary()
    # predictions given directly give the same answer
    again = compare_with_known_models(bp, bp.predict(STRONG), refs, targets="chat")
    assert again.to_frame().equals(frame)


def test_what_to_run_next(bp: BenchPress) -> None:
    top = what_to_run_next(bp, STRONG, targets="coding_assistant", top=5)
    assert top.height == 5 and top["rank"].to_list() == [1, 2, 3, 4, 5]
    per_cost = top["reduction_per_cost"].to_list()
    assert per_cost == sorted(per_cost, reverse=True)
    assert not set(top["benchmark"]) & set(STRONG)
    cheap = what_to_run_next(bp, STRONG, targets="coding_assistant", budget=1.0, top=50)
    assert (cheap["cost"] <= 1.0).all()


def test_select_probes_for_snapshot_with_allowlist(bp: BenchPress) -> None:
    allow = ["gpqa_diamond", "mmlu_pro", "hle", "aime_2025", "ifeval"]
    sel = select_probes_for(bp, k=2, targets="reasoning", allowlist=allow)
    assert set(sel.benchmarks) <= set(allow) and len(sel.benchmarks) == 2
    assert sel.errors[1] <= sel.errors[0]


def test_suspicious_scores_are_stored_in_the_snapshot_and_match_a_recomputation(
    bp: BenchPress, tmp_path
) -> None:
    stored = bp.snapshot.residuals
    assert stored is not None and "residuals.parquet" in bp.manifest["files"]
    assert stored.height == int((~np.isnan(bp._dense(bp.fit_models_, bp.fit_benchmarks_))).sum())
    every = suspicious_scores(bp, threshold=5.0)
    first = every.filter(pl.col("reason") == "residual")
    assert first.height > 0 and (first["z"].abs() > 5.0).all()
    assert list(first.columns) == [
        "model_id",
        "benchmark_id",
        "observed",
        "predicted",
        "z",
        "source",
        "reason",
    ]
    assert first["z"].abs().to_list() == sorted(first["z"].abs().to_list(), reverse=True)
    residual = suspicious_scores(bp).filter(pl.col("reason") == "residual")
    assert bp.manifest["quality"]["suspicious_cells"] == residual.height
    # An older snapshot without the stored table: same answer, computed on demand.
    older = dataclasses.replace(bp.snapshot, residuals=None)
    recomputed = suspicious_scores(BenchPress(older), threshold=5.0)
    recomputed = recomputed.filter(pl.col("reason") == "residual")
    assert recomputed.select("model_id", "benchmark_id").equals(
        first.select("model_id", "benchmark_id")
    )
    assert np.allclose(recomputed["z"].to_numpy(), first["z"].to_numpy())
    with pytest.raises(ValueError, match="threshold"):
        suspicious_scores(bp, threshold=0)


def test_running_the_target_itself_pins_it(bp: BenchPress) -> None:
    top = what_to_run_next(bp, STRONG, targets=["ifeval"], top=3)
    first = top.row(0, named=True)
    assert first["benchmark"] == "ifeval"
    assert first["reduction"] == pytest.approx(1.0) and first["width_after"] == 0.0
    assert (top["reduction"].tail(2) < 1.0).all()


def test_benchmarks_nobody_can_run_are_not_suggested_unless_allowed(bp: BenchPress) -> None:
    """Third-party indices and public arenas cannot be run on a new model: they are never
    proposed as probes or as the next run by default (the Epoch index used to be step 2 of
    the general-assistant picks), but stay usable as targets and through an allowlist."""
    picks = bp.select_probes(k=5, targets="general_assistant")
    assert len(picks.benchmarks) == 5 and not set(picks.benchmarks) & NOT_RUNNABLE
    nxt = bp.what_to_run_next({"gpqa_diamond": 70, "mmlu_pro": 75}, targets="chat", top=None)
    assert nxt.height > 20 and not set(nxt["benchmark"]) & NOT_RUNNABLE
    allowed = bp.select_probes(k=1, targets=["lmarena_text"], allowlist=["epoch_eci", "hle"])
    assert set(allowed.benchmarks) <= {"epoch_eci", "hle"}
