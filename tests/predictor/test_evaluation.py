"""The evaluation protocols (ranking, probes, side-by-side runner), the reference-recipe port and
the `benchpress evaluate` command."""

from __future__ import annotations

import argparse
import json
from functools import partial

import numpy as np
import polars as pl
import pytest

from predictor.cli.evaluate import format_peers, load_reference_recipe, peer_figures, register
from predictor.cli.output import CommandError
from predictor.evaluation.future import (
    FutureMethod,
    column_mean_future,
    format_future,
    ours_future,
    probe_columns,
    quarter_cuts,
    run_future_protocol,
)
from predictor.evaluation.protocols import (
    DEFAULT_FOLDS_PATH,
    DEFAULT_MATRIX_PATH,
    DEFAULT_REGISTRY_PATH,
    Fold,
    Method,
    SideAware,
    column_mean_baseline,
    evaluate_methods,
    format_interval_table,
    format_table,
    load_folds,
    load_paper_matrix,
    load_paper_models,
    per_model_folds,
    ranking_accuracy,
    run_holdout,
    run_probe_protocol,
    summarize_errors,
    summarize_probe,
)
from predictor.fit.completion import Completion, complete_matrix
from predictor.side_information import PARTS, SideInformation, paper_side_information


def cells_frame(rows: list[tuple[int, int, int, float]]) -> pl.DataFrame:
    fold, model, bench, mean = zip(*rows, strict=True)
    return pl.DataFrame(
        {"fold_index": fold, "model": model, "benchmark": bench, "mean": mean},
        schema={
            "fold_index": pl.Int32,
            "model": pl.Int32,
            "benchmark": pl.Int32,
            "mean": pl.Float64,
        },
    )


def test_ranking_accuracy_counts_pairs_with_a_held_out_cell_and_a_clear_gap():
    values = np.array([[10.0, 50.0], [20.0, 52.0], [30.0, np.nan], [40.0, 90.0]])
    # Fold 0 hides model 1 on benchmark 0 and predicts 35: it now ranks above model 2 (30).
    # Pairs with model 1: (0,1) gap 10 ok, (1,2) gap 10 wrong, (1,3) gap 20 ok -> 2 / 3.
    # Fold 1 hides model 3 on benchmark 1 and predicts 51: pairs (0,3) gap 40 ok,
    # (1,3) gap 38 wrong -> 1 / 2.
    cells = cells_frame([(0, 1, 0, 35.0), (1, 3, 1, 51.0)])
    result = ranking_accuracy(values, cells, margin=5.0)
    assert result["n_pairs"] == 5
    assert result["n_benchmarks"] == 2
    assert result["accuracy"] == pytest.approx(np.median([2 / 3, 1 / 2]))
    assert result["pooled_accuracy"] == pytest.approx(3 / 5)
    # A margin above every gap but one leaves only the (0,3) and (1,3) pairs on benchmark 1.
    assert ranking_accuracy(values, cells, margin=30.0)["n_pairs"] == 2


def test_ranking_accuracy_counts_predicted_ties_as_wrong():
    values = np.array([[10.0], [20.0], [30.0]])
    cells = cells_frame([(0, 0, 0, 20.0)])  # ties model 1 exactly
    result = ranking_accuracy(values, cells, margin=5.0)
    assert result["n_pairs"] == 2
    assert result["accuracy"] == pytest.approx(0.5)


def test_probe_protocol_reveals_only_the_probes_of_the_left_out_model():
    values = np.array(
        [[10.0, 20.0, 30.0], [11.0, np.nan, 33.0], [12.0, 24.0, np.nan], [13.0, 26.0, 39.0]]
    )
    seen = []

    def stub(train: np.ndarray, scales) -> Completion:
        seen.append(train.copy())
        filled = np.where(np.isnan(train), 1.0, train)
        return Completion(mean=filled, low=filled, high=filled)

    run = run_probe_protocol(values, ["percent"] * 3, [0], stub, models=[0, 1])
    assert len(seen) == 2
    assert np.isnan(seen[0][0, 1:]).all() and seen[0][0, 0] == 10.0
    assert np.array_equal(seen[0][1:], values[1:], equal_nan=True)
    cells = run.cells.sort("model", "benchmark")
    assert cells["revealed"].to_list() == [True, False, False, True, False]
    assert cells.filter(pl.col("revealed"))["mean"].to_list() == [10.0, 11.0]
    assert cells.filter(~pl.col("revealed"))["mean"].to_list() == [1.0, 1.0, 1.0]
    summary = summarize_probe(run)
    assert summary["n_hidden"] == 3 and summary["n_cells"] == 5
    assert summary["medae_hidden"] == pytest.approx(29.0)  # |1 - 20|, |1 - 30|, |1 - 33|
    assert summary["medae_paper"] == pytest.approx(19.0)  # with two exact probes


def test_side_by_side_runner_table_and_targets():
    rng = np.random.default_rng(0)
    values = 100.0 / (1.0 + np.exp(-(rng.normal(size=(12, 1)) @ rng.normal(size=(1, 6)))))
    cells = np.argwhere(rng.random(values.shape) < 0.25)
    folds = [Fold(0, 0, cells)]
    methods = [
        Method("ours", "ours", partial(complete_matrix, n_chains=2, n_burn=5, n_samples=5)),
        Method("reference", "column mean", column_mean_baseline),
    ]
    ids = [f"b{j}" for j in range(6)]
    results = evaluate_methods(values, ["percent"] * 6, ids, folds, methods, probes=("b0", "b1"))
    ours = results["methods"]["ours"]
    assert set(ours) == {"label", "holdout", "probe", "per_fold"}
    assert ours["holdout"]["n_folds"] == 1
    assert 0.0 <= ours["holdout"]["ranking_accuracy"] <= 1.0
    assert ours["holdout"]["medae"] < results["methods"]["reference"]["holdout"]["medae"]
    table = format_table(results)
    assert "ours" in table and "column mean" in table and "MedAE" in table
    peers = {f["figure"]: f for f in peer_figures(results)}
    assert list(peers) == [
        "held-out MedAE",
        "probe MedAE (5 probes)",
        "ranking accuracy",
        "90% median width",
        "90% coverage",
        "held-out seconds",
    ]
    assert peers["held-out MedAE"] == {
        "figure": "held-out MedAE",
        "ours": ours["holdout"]["medae"],
        "ours_plain": None,  # not run here
        "recipe_here": results["methods"]["reference"]["holdout"]["medae"],
        "benchpress_published": 4.60,
    }
    # only figures measured as BenchPress measures them are shown beside its published ones
    assert peers["90% median width"]["benchpress_published"] is None
    assert peers["90% coverage"]["benchpress_published"] == 0.899
    shown = format_peers(list(peers.values()), "ours")
    assert "published" in shown and "goal" not in shown and "met" not in shown
    assert "27.2 over all cells" in shown and "3.93 counting the revealed cells" in shown


def test_reference_recipe_port_is_the_loop_version_and_matches_its_pinned_error():
    reference, label = load_reference_recipe()
    assert label == "reference recipe (loop port)"
    values, _, _, scales = load_paper_matrix(DEFAULT_MATRIX_PATH)
    folds = load_folds(DEFAULT_FOLDS_PATH)
    run = run_holdout(values, scales, folds[:1], reference)
    # Pinned: deterministic (RandomState(42 + seed) starts, as BenchPress).
    assert summarize_errors(run.per_fold)["medae"] == pytest.approx(4.6447, abs=1e-3)
    assert np.isnan(run.cells["low"].to_numpy()).all()  # the recipe has no intervals
    ours = run_holdout(values, scales, folds[:1], complete_matrix)
    assert summarize_errors(ours.per_fold)["medae"] < 4.6447


def test_paper_model_metadata_gives_fractional_release_years():
    models = load_paper_models(DEFAULT_MATRIX_PATH)
    assert models.height == 84
    years = dict(zip(models["model_id"], models["release_year"], strict=True))
    assert years["gemma-3-1b-it"] == pytest.approx(2025.5)  # a bare year: its middle
    assert years["o3-mini-high"] == pytest.approx(2025 + 30 / 365)
    assert models["release_year"].null_count() == 0


def test_evaluate_command_writes_json(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    out = tmp_path / "eval.json"
    args = parser.parse_args(
        ["evaluate", "--quick", "--no-probe", "--methods", "column_mean", "--out", str(out)]
    )
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "column mean" in printed and "3 folds" in printed
    results = json.loads(out.read_text())
    assert results["protocol"]["n_folds"] == 3 and results["protocol"]["quick"] is True
    assert results["protocol"]["folds_file"] == "benchmarks/data/folds_s10_f3_bs42_ms1.json"
    medae = results["methods"]["column_mean"]["holdout"]["medae"]
    assert 10.0 < medae < 12.5
    with pytest.raises(CommandError, match="unknown method 'nope'"):
        args = parser.parse_args(["evaluate", "--quick", "--no-probe", "--methods", "nope"])
        args.func(args)


def test_holdout_reports_coverage_and_width_at_each_level():
    """`benchpress evaluate` shows 50/80/90/95% coverage and width; they must nest and agree."""
    values, _, _, scales = load_paper_matrix(DEFAULT_MATRIX_PATH)
    fold = load_folds(DEFAULT_FOLDS_PATH)[0]
    run = run_holdout(values, scales, [fold], complete_matrix)
    row = run.per_fold.row(0, named=True)
    widths = [row[f"median_width_{k}"] for k in ("50", "80", "90", "95")]
    coverages = [row[f"coverage_{k}"] for k in ("50", "80", "90", "95")]
    assert widths == sorted(widths) and widths[0] > 0
    assert coverages == sorted(coverages)
    # The 90% figures equal the completion's own interval at its default level (0.9); the
    # per-level width is over percent benchmarks only (Elo and ratings would mix units).
    assert row["coverage_90"] == pytest.approx(row["coverage"])
    cells = run.cells.with_columns(
        percent=pl.col("benchmark").map_elements(
            lambda j: scales[j] == "percent", return_dtype=pl.Boolean
        )
    )
    percent_widths = cells.filter("percent").select(pl.col("high") - pl.col("low")).to_series()
    assert cells.filter(~pl.col("percent")).height > 0  # the fold has rating cells too
    assert row["median_width_90"] == pytest.approx(percent_widths.median())
    assert row["median_width"] == pytest.approx((cells["high"] - cells["low"]).median())
    assert row["median_width_90"] != pytest.approx(row["median_width"])
    for level, cov in zip((0.5, 0.8, 0.9, 0.95), coverages, strict=True):
        assert abs(cov - level) < 0.08, (level, cov)
    baseline = run_holdout(values, scales, [fold], column_mean_baseline).per_fold.row(0, named=True)
    assert np.isnan(baseline["coverage_50"]) and np.isfinite(baseline["coverage"])
    summary = summarize_errors(run.per_fold)
    assert summary["median_width_95"] == pytest.approx(widths[-1])
    table = format_interval_table({"methods": {"ours": {"label": "ours", "holdout": summary}}})
    assert f"{coverages[0]:.3f} / {widths[0]:5.1f}" in table


def test_per_model_folds_split_every_row_in_thirds_on_seeds_of_our_own():
    values, _, _, _ = load_paper_matrix(DEFAULT_MATRIX_PATH)
    observed = np.isfinite(values)
    folds = per_model_folds(values, seeds=[1000, 1001])
    assert [(f.seed, f.fold) for f in folds] == [(s, k) for s in (1000, 1001) for k in range(3)]
    for seed in (1000, 1001):
        parts = [f.test_cells for f in folds if f.seed == seed]
        cells = np.concatenate(parts)
        assert len(cells) == observed.sum() == len({tuple(c) for c in cells})  # a partition
        for part in parts:
            per_row = np.bincount(part[:, 0], minlength=84)
            assert (np.abs(per_row - observed.sum(axis=1) / 3) <= 1).all()
            train = observed.copy()
            train[part[:, 0], part[:, 1]] = False
            assert train.sum(axis=0).min() >= 1  # no benchmark loses every score
    first = {tuple(c) for c in folds[0].test_cells}
    assert first != {tuple(c) for c in folds[3].test_cells}  # the seeds differ
    again = per_model_folds(values, seeds=[1000])
    assert all(
        np.array_equal(a.test_cells, b.test_cells) for a, b in zip(again, folds[:3], strict=True)
    )
    official = {tuple(c) for c in load_folds(DEFAULT_FOLDS_PATH)[0].test_cells}
    assert first != official


def test_side_information_follows_the_columns_each_fit_keeps():
    values, _, benchmark_ids, scales = load_paper_matrix(DEFAULT_MATRIX_PATH)
    side = paper_side_information(DEFAULT_MATRIX_PATH, DEFAULT_REGISTRY_PATH, benchmark_ids)
    j = benchmark_ids.index("gpqa_diamond")
    assert side.floors[j] == 25.0 and side.categories[j] == "knowledge"
    assert side.floors[benchmark_ids.index("mmlu_pro")] == 10.0
    assert side.families[0] == "o3" and side.release_year[0] == pytest.approx(2025 + 30 / 365)
    seen = {}

    def spy(values, scales, **kwargs):
        seen.update(kwargs)
        return column_mean_baseline(values, scales)

    # Hide every score of the first benchmark: the fit drops that column, the floors follow.
    cells = np.argwhere(np.isfinite(values[:, :1]))
    every_part = SideAware(side, PARTS, complete=spy)
    every_part(values[:, 1:], scales[1:], columns=np.arange(1, 133))
    assert len(seen["floors"]) == 132 and seen["floors"][j - 1] == 25.0
    assert seen["col_groups"][j - 1] == "knowledge" and len(seen["row_groups"]) == 84
    seen.clear()
    run = run_holdout(values, scales, [Fold(0, 0, cells)], SideAware(side, complete=spy))
    assert run.per_fold["n_unscored"][0] == len(cells) and len(seen["col_groups"]) == 132
    assert "floors" not in seen  # the default leaves chance floors out (docs/method.md)
    assert len(seen["lower"]) == 132 and seen["row_features"].shape == (84,)


def dated_matrix() -> tuple[np.ndarray, list[str], SideInformation]:
    """30 models x 8 benchmarks of rank-1 logits; 24 released in 2024, 6 in 2025Q1; benchmark
    j is scored by 24 - j of the earlier models."""
    rng = np.random.default_rng(3)
    logit = rng.normal(size=(30, 1)) @ rng.normal(size=(1, 8)) + rng.normal(0, 0.2, (30, 8))
    values = 100.0 / (1.0 + np.exp(-logit))
    for j in range(1, 8):  # benchmark j: j of the 24 earlier models never ran it
        values[:j, j] = np.nan
    years = np.concatenate([np.linspace(2024.0, 2024.7, 24), np.linspace(2025.0, 2025.2, 6)])
    return values, ["percent"] * 8, SideInformation(release_year=years)


def test_quarter_cuts_need_enough_models_on_both_sides():
    years = np.concatenate([np.linspace(2024.0, 2024.7, 24), np.linspace(2025.0, 2025.2, 6)])
    assert [c.label for c in quarter_cuts(years)] == ["2025Q1"]
    cut = quarter_cuts(years)[0]
    assert (cut.start, cut.end) == (2025.0, 2025.25)
    assert quarter_cuts(years, min_test=7) == []
    # 2024Q4 has no new model; 2024Q2 and Q3 have 9 and 17 earlier models
    assert [c.label for c in quarter_cuts(years, min_train=5)] == ["2024Q2", "2024Q3", "2025Q1"]
    counts = np.array([24, 23, 22, 21, 20, 19, 18, 17])
    assert probe_columns(np.ones(8, bool), counts, 5).tolist() == [0, 1, 2, 3, 4]
    ties = np.array([5, 9, 9, 9, 9, 9, 9, 0])
    assert probe_columns(np.ones(8, bool), ties, 5).tolist() == [1, 2, 3, 4, 5]


def test_future_protocol_fits_on_the_past_and_scores_the_quarter():
    values, scales, side = dated_matrix()
    methods = [
        FutureMethod("ours", "ours", ours_future(("date",))),
        FutureMethod("column_mean", "column mean", column_mean_future()),
    ]
    results = run_future_protocol(values, scales, side, methods)
    quarters = results["quarters"]
    assert quarters["quarter"].to_list() == ["2025Q1", "2025Q1"]
    row = quarters.filter(pl.col("method") == "column_mean").row(0, named=True)
    assert (row["n_train_models"], row["n_test_models"], row["n_cells"]) == (24, 6, 18)
    # column mean: the 24 earlier models' mean of benchmarks 5-7, each new model's 5 probes
    # being benchmarks 0-4 (the most widely scored)
    means = np.nanmean(values[:24, 5:], axis=0)
    assert row["medae"] == pytest.approx(np.median(np.abs(values[24:, 5:] - means)))
    ours = quarters.filter(pl.col("method") == "ours").row(0, named=True)
    assert ours["n_cells"] == 18 and ours["medae"] < 0.5 * row["medae"]
    assert 0.0 <= ours["coverage"] <= 1.0 and ours["median_width"] > 0
    pooled = results["pooled"]
    assert pooled["method"].to_list() == ["ours", "column_mean"]
    assert pooled["n_cells"].to_list() == [18, 18]
    table = format_future(results)
    assert "2025Q1" in table and "column mean" in table and "goal" not in table
    with pytest.raises(ValueError, match="needs a release date"):
        run_future_protocol(values, scales, SideInformation(), methods)


def test_evaluate_future_protocol_on_the_paper_matrix(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    out = tmp_path / "future.json"
    args = parser.parse_args(
        ["evaluate", "--protocol", "future", "--methods", "column_mean", "--out", str(out)]
    )
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "2025Q1" in printed and "2026Q2" in printed and "column mean" in printed
    results = json.loads(out.read_text())
    assert [q["quarter"] for q in results["quarters"]] == [
        "2025Q1",
        "2025Q2",
        "2025Q3",
        "2025Q4",
        "2026Q1",
        "2026Q2",
    ]
    assert [q["n_train_models"] for q in results["quarters"]] == [21, 32, 47, 57, 68, 77]
    pooled = results["pooled"][0]
    assert pooled["n_cells"] == 1657 and round(pooled["medae"], 2) == 13.2
    with pytest.raises(CommandError, match="--source snapshot needs --protocol future"):
        args = parser.parse_args(["evaluate", "--source", "snapshot", "--quick"])
        args.func(args)
    with pytest.raises(CommandError, match="'ours_date' is not a method of the future"):
        args = parser.parse_args(["evaluate", "--protocol", "future", "--methods", "ours_date"])
        args.func(args)
