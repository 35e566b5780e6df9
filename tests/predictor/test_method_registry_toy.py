"""A completion method is its module plus one line in the registry: a toy method registered for
one block is fitted by `complete_matrix` and `BenchPress.fit`, saved and loaded back, named by
the pipeline's reuse check from its own `state_version`, offered by `benchpress evaluate
--methods` and labelled on the page, with no other module told about it (issue 39)."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np
import polars as pl
import pytest

from pipelines.stages.fit import method_label
from predictor import BenchPress, LowRankCompleter
from predictor.cli import main
from predictor.fit.completion import complete_matrix
from predictor.fit.fitted_state import export_state, restore_state
from predictor.methods.registry import METHODS, completer_class, registered
from predictor.snapshots import fitted_method
from predictor.web.figures import fit_summary


class ToyCompleter(LowRankCompleter):
    """The recipe at rank 1 with two seeds, under its own name, label and state layout."""

    method: ClassVar[str] = "toy"
    label: ClassVar[str] = "toy: the recipe at rank 1"
    state_version: ClassVar[int] = 7

    def __init__(self, rank: int = 1, n_seeds: int = 2, cv_folds: int = 2, **params: Any):
        super().__init__(rank=rank, n_seeds=n_seeds, cv_folds=cv_folds, **params)

    def to_state(self) -> dict[str, Any]:
        return {**super().to_state(), "method": self.method}


def _matrix(seed: int = 0) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    u, v = rng.normal(size=(30, 2)), rng.normal(size=(12, 2))
    values = 100.0 / (1.0 + np.exp(-(u @ v.T)))
    values[rng.random(values.shape) < 0.25] = np.nan
    return values, ["percent"] * 12


def _scores(values: np.ndarray) -> pl.DataFrame:
    rows = [
        (f"m{i}", f"b{j}", float(values[i, j]))
        for i in range(values.shape[0])
        for j in range(values.shape[1])
        if np.isfinite(values[i, j])
    ]
    return pl.DataFrame(rows, schema=["model", "benchmark", "score"], orient="row")


@pytest.fixture
def toy():
    with registered(ToyCompleter) as cls:
        yield cls
    assert "toy" not in METHODS  # gone again after the block


def test_the_toy_is_fitted_saved_and_loaded_by_name(toy, tmp_path) -> None:
    values, scales = _matrix()
    completion = complete_matrix(values, scales, method="toy")
    assert type(completion.model) is ToyCompleter
    assert type(restore_state(export_state(completion.model), values)) is ToyCompleter

    bp = BenchPress.fit(_scores(values), method="toy")
    assert bp.snapshot.manifest["fit_params"]["method"] == "toy"
    assert bp.predict({"b0": 60.0, "b1": 40.0})["b5"].p_within_5 is None  # no trust figure
    version = bp.save(tmp_path / "store")
    loaded = BenchPress.load(version, store=tmp_path / "store")
    assert type(loaded.completer_) is ToyCompleter
    # what the fit records is what the pipeline names before fitting: a refresh reuses it
    assert fitted_method(tmp_path / "store" / version) == "toy@7" == method_label("toy")


def test_evaluate_and_the_page_read_the_registry(toy, capsys, tmp_path) -> None:
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    assert "column_mean,bayes,als,toy" in capsys.readouterr().out
    out = tmp_path / "eval.json"
    argv = ["evaluate", "--quick", "--no-probe", "--methods", "toy", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 0
    assert "toy: the recipe at rank 1" in capsys.readouterr().out
    figures = json.loads(out.read_text())["methods"]["toy"]
    assert figures["label"] == ToyCompleter.label and 0 < figures["holdout"]["medae"] < 20
    assert fit_summary({}, {"state": {"method": "toy"}})["method_label"] == ToyCompleter.label


def test_a_method_outside_the_block_is_unknown_everywhere() -> None:
    with registered(ToyCompleter):
        assert completer_class("toy") is ToyCompleter
    with pytest.raises(ValueError, match="method must be one of"):
        completer_class("toy")
    assert method_label("toy") is None
    assert fit_summary({}, {"method": "toy"})["method_label"] == "toy"


def test_a_method_without_what_consumers_read_is_refused() -> None:
    class NoVersion(ToyCompleter):
        state_version = None  # type: ignore[assignment]

    class Misnamed(ToyCompleter):
        method = "bayes"

    with pytest.raises(TypeError, match="needs an int `state_version`"), registered(NoVersion):
        pass
    with pytest.raises(ValueError, match="'bayes' is already registered"), registered(Misnamed):
        pass
    assert "toy" not in METHODS and METHODS["bayes"].method == "bayes"
