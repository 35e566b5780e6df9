"""Issue 16, the web page's first-hour defects, through the JSON API (no browser): the Fit
tab's parameters, held-out pairs for predicted vs actual, the fraction-scores warning and the
heatmap's suspicious cells. The page side is in test_web_first_hour_browser.py."""

from __future__ import annotations

import json
import warnings

import numpy as np
import polars as pl
import pytest

from predictor import BenchPress, FractionScoresWarning
from predictor.util.paths import bundled_snapshot_dir
from predictor.web.figures import fit_summary, holdout
from tests.web.conftest import BUNDLED_VERSION, HOLDOUT_PAIRS, HOSTILE_VERSION, RunningApp


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(BUNDLED_VERSION, store=bundled_snapshot_dir())


# ------------------------------------------------------------------ 1. the fit's parameters
def test_snapshot_lists_the_bayesian_methods_own_parameters(app: RunningApp) -> None:
    fit = app.get("/api/snapshot").json()["fit"]
    assert fit["method"] == "bayes"
    assert fit["method_label"] == "robust Bayesian matrix factorisation"
    assert [(p["label"], p["value"]) for p in fit["params"]] == [
        ("rank", "4"),
        ("chains", "8"),
        ("burn-in sweeps per chain", "20"),
        ("samples per chain", "20"),
        ("draws kept", "40"),
        ("Student-t degrees of freedom", "3"),
        ("percent link", "learned per benchmark, shrunk to the plain logit by n / (n + 30)"),
        ("min. scores per model", "15"),
        ("min. scores per benchmark", "8"),
        ("random seed", "0"),
    ]
    # the older ALS recipe's fields are not invented for a method that lacks them
    assert not {"alpha", "n_iter", "n_seeds"} & {p["key"] for p in fit["params"]}


def test_fit_summary_of_the_als_recipe_and_of_missing_values() -> None:
    als = fit_summary(
        {"fit_params": {"rank": 2, "alpha": 0.1, "n_iter": 50, "n_seeds": 3}},
        {"method": "als", "params": {"rank": 2}},
    )
    assert als["method_label"] == "alternating least squares (ALS)"
    assert [(p["label"], p["value"]) for p in als["params"]] == [
        ("rank", "2"),
        ("λ (ridge)", "0.1"),
        ("iterations", "50"),
        ("seeds", "3"),
    ]
    broken = fit_summary(
        {"fit_params": {"rank": None, "alpha": float("nan"), "n_iter": True, "n_seeds": ""}}, None
    )
    assert broken == {"method": None, "method_label": "unrecorded", "params": []}
    assert "null" not in json.dumps(broken["params"]) and "NaN" not in json.dumps(broken)
    # a state written before the link could bend, with the link off, with a broken value
    links = [
        fit_summary({}, {"method": "bayes", "params": params})["params"]
        for params in ({"rank": 4}, {"link_prior": 0.0}, {"link_prior": float("nan")})
    ]
    assert links[0] == [{"key": "rank", "label": "rank", "value": "4"}]
    assert links[1] == [{"key": "link", "label": "percent link", "value": "plain logit"}]
    assert links[2] == []


# --------------------------------------------------------------- 1b. predicted vs actual
def test_plots_serve_the_snapshots_held_out_pairs(app: RunningApp, bp: BenchPress) -> None:
    """The bundled manifest keeps no pairs (the pipeline's 5-fold refit pairs are dropped when
    staging), but the snapshot's residuals.parquet holds every fitted cell's held-out
    (leave-one-out) prediction: the percent cells of it are what the page plots."""
    doc = app.get("/api/plots").json()["holdout"]
    percent = set(
        bp.snapshot.benchmarks.filter(pl.col("scale") == "percent")["benchmark_id"].to_list()
    )
    stored = bp.snapshot.residuals.filter(pl.col("benchmark_id").is_in(percent))
    assert doc["cells"] == stored.height == bp.manifest["quality"]["holdout_cells"] == 7405
    expected = [
        [round(a, 4), round(p, 4)] for a, p in stored.select("observed", "predicted").iter_rows()
    ]
    assert doc["pairs"] == expected
    errors = (stored["observed"] - stored["predicted"]).abs().to_numpy()
    assert doc["medae"] == pytest.approx(float(np.median(errors)), abs=1e-4)
    assert "leave-one-out" in doc["note"] and "flags suspicious scores" in doc["note"]
    assert "3.69 points" in doc["note"]  # the manifest's 5-fold figure, named as such


def test_pairs_a_manifest_records_still_come_first(hostile_app: RunningApp) -> None:
    doc = hostile_app.get(f"/api/plots?version={HOSTILE_VERSION}").json()["holdout"]
    assert doc["cells"] == HOLDOUT_PAIRS
    assert "note" not in doc  # they are what the manifest says they are


def test_no_pairs_anywhere_is_none() -> None:
    empty = pl.DataFrame(
        schema={"benchmark_id": pl.String, "observed": pl.Float64, "predicted": pl.Float64}
    )
    assert holdout({"quality": {}}, empty, ["gpqa_diamond"]) is None
    assert holdout({"quality": {}}, None, ["gpqa_diamond"]) is None


# -------------------------------------------------------------- 2. fraction-scores warning
def test_predict_returns_the_fraction_warning_python_gives(app: RunningApp, bp: BenchPress) -> None:
    with pytest.warns(FractionScoresWarning) as caught:
        bp.predict({"gpqa_diamond": 0.8})
    said = str(caught[0].message)
    assert said.startswith("every percent score given is at most 1 (gpqa_diamond=0.8)")
    for answer in (
        app.get("/api/predict?scores=gpqa_diamond=0.8"),
        app.post("/api/predict", {"scores": {"gpqa_diamond": 0.8}}),
    ):
        assert answer.status == 200
        assert answer.json()["warnings"] == [said]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a percent score warns nothing, here or in Python
        bp.predict({"gpqa_diamond": 80})
    assert app.get("/api/predict?scores=gpqa_diamond=80").json()["warnings"] == []


# ------------------------------------------------------------- 5. suspicious heatmap cells
def test_matrix_lists_the_cells_suspicious_scores_flags(app: RunningApp, bp: BenchPress) -> None:
    doc = app.get("/api/matrix").json()
    flagged = bp.suspicious_scores()
    assert doc["suspicious_threshold_z"] == 3.5
    assert len(doc["suspicious"]) == flagged.height
    residual = [f for f in doc["suspicious"] if f["reason"] == "residual"]
    assert len(residual) == bp.manifest["quality"]["suspicious_cells"]
    assert [(f["model"], f["benchmark"]) for f in doc["suspicious"]] == list(
        flagged.select("model_id", "benchmark_id").iter_rows()
    )
    worst = residual[0]
    assert worst == {
        "model": "gpt-5.5@medium",
        "benchmark": "livebench_olympiad",
        "observed": 0.0,
        "predicted": pytest.approx(91.0117, abs=1e-4),
        "z": pytest.approx(-30.7283, abs=1e-4),
        "reason": "residual",
    }
    # every flagged cell is one the heatmap draws
    assert all(f["model"] in doc["models"] for f in doc["suspicious"])
    assert all(f["benchmark"] in doc["benchmarks"] for f in doc["suspicious"])
