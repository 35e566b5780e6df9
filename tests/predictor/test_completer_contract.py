"""The completer contract: every method implements it, says what it cannot do, and round-trips
through snapshot state; the API reaches methods only through it."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from predictor import BayesianCompleter, BenchPress, Completer, LowRankCompleter
from predictor.fit.fitted_state import export_state, restore_state
from predictor.methods.base import NotSupportedError
from predictor.methods.registry import METHODS, completer_class, make_completer

REPO = Path(__file__).resolve().parents[2]


def _matrix(seed: int = 0) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    u, v = rng.normal(size=(30, 2)), rng.normal(size=(12, 2))
    values = 100.0 / (1.0 + np.exp(-(u @ v.T)))
    values[rng.random(values.shape) < 0.25] = np.nan
    return values, ["percent"] * 12


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_registered_method_implements_the_contract(method: str) -> None:
    values, scales = _matrix()
    completer = make_completer(method, random_state=0).fit(values, scales)
    assert isinstance(completer, Completer)
    assert completer.method == method
    row = values[0].copy()
    row[4:] = np.nan
    mean, low, high, within = completer.fold_in_summary(row, 0.9, 5.0)
    assert mean.shape == low.shape == high.shape == (12,)
    assert np.all(low <= mean + 1e-9) and np.all(mean <= high + 1e-9)
    known = np.isfinite(row)
    assert known.sum() >= 2 and np.array_equal(mean[known], row[known])  # known: as given
    restored = restore_state(export_state(completer), values)
    assert type(restored) is type(completer)
    # what the pipeline names a fit before fitting is what the fit records (`method_label`)
    assert export_state(completer)["state_version"] == type(completer).state_version
    np.testing.assert_allclose(restored.fold_in(row), completer.fold_in(row), rtol=1e-7)
    place = completer.placement(values)
    assert place.n_models == 30


def test_the_recipe_says_what_it_cannot_do() -> None:
    values, scales = _matrix()
    recipe = LowRankCompleter(random_state=0).fit(values, scales)
    row = values[0].copy()
    row[4:] = np.nan
    assert recipe.fold_in_summary(row)[3] is None  # no trust figure
    for call in (
        lambda: recipe.fold_in_draws(row),
        lambda: recipe.batch_fold_in(values),
        lambda: recipe.predict_within(),
        lambda: recipe.interval_multiplier(0.9),
    ):
        with pytest.raises(NotSupportedError, match="no predictive distribution"):
            call()
    assert recipe.new_model_side() == (None, [])


def test_side_information_a_method_does_not_use_is_refused() -> None:
    values, scales = _matrix()
    with pytest.raises(ValueError, match="row_groups needs method='bayes'"):
        LowRankCompleter().fit(values, scales, row_groups=["a"] * 30)
    with pytest.raises(ValueError, match=r"method must be one of \('bayes', 'als'\), got 'svd'"):
        completer_class("svd")


def test_the_default_method_remembers_its_new_model_side() -> None:
    values, scales = _matrix()
    years = np.linspace(2024.0, 2026.0, 30)
    fitted = BayesianCompleter(random_state=0).fit(
        values,
        scales,
        row_features=years,
        new_model_features=[2026.0],
        row_groups=["a"] * 15 + ["b"] * 15,
    )
    features, families = fitted.new_model_side()
    assert features == pytest.approx([2026.0])
    assert families == ["a", "b"]


def test_no_module_above_the_methods_probes_a_concrete_completer() -> None:
    """Consumers talk to the contract: no hasattr/isinstance on a completer, no import of a
    concrete class outside the methods package, its registry and the public re-exports."""
    allowed = {"predictor/__init__.py", "predictor/fit/completion.py"}
    offenders = []
    for path in sorted((REPO / "predictor").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith("predictor/methods/") or rel in allowed:
            continue
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in (
                "predictor.methods.bayesian",
                "predictor.methods.als",
            ):
                offenders.append(f"{rel}: imports {node.module}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "hasattr"
                and "completer" in ast.unparse(node.args[0])
            ):
                offenders.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert offenders == []


def test_a_recipe_snapshot_answers_without_a_trust_figure() -> None:
    import polars as pl

    values, _ = _matrix()
    rows = [
        (f"m{i}", f"b{j}", float(values[i, j]))
        for i in range(30)
        for j in range(12)
        if np.isfinite(values[i, j])
    ]
    frame = pl.DataFrame(rows, schema=["model", "benchmark", "score"], orient="row")
    bp = BenchPress.fit(frame, method="als")
    answer = bp.predict({"b0": 60.0, "b1": 40.0})
    assert answer["b5"].p_within_5 is None
    with pytest.raises(TypeError, match="it has no predictive draws"):
        bp.predictive_draws({"b0": 60.0})
