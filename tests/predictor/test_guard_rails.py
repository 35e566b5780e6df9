"""Guard rails of the newest modules that a planted bug got past (issue 39's mutation audit,
`benchmarks/mutation_audit.py`): the side information of a calibration, the valid range of a
team's own scores, the calibration cache's key, settings that must not turn a limit off,
another model's smoke test, and credentials in a tracking URI. Each test fails with its bug
planted."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from predictor import BenchPress
from predictor.fit import calibration_cache
from predictor.fit.calibration import calibrate_fold_in
from predictor.fit.calibration_cache import CACHE_ENV, cached_calibration, calibration_key
from predictor.fit.fitting import fit_calibrated
from predictor.fit.own_matrix import ScoresFrameError
from predictor.methods.bayesian import BayesianCompleter
from predictor.methods.fold_in_calibration import FoldInCalibration
from predictor.results import ResultsError
from predictor.side_information import SideInformation
from predictor.tracking.export import display_uri
from predictor.util.locking import WAIT_ENV, wait_seconds
from predictor.util.read_limits import limits_from_environment


def noisy_rank2(n: int = 40, m: int = 16, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logit = rng.normal(0, 0.8, (n, 2)) @ rng.normal(0, 0.8, (2, m)) + rng.normal(0, 0.3, (n, m))
    values = 100.0 / (1.0 + np.exp(-logit))
    return np.where(rng.random((n, m)) < 0.2, np.nan, values)


def small() -> BayesianCompleter:
    return BayesianCompleter(rank=2, n_chains=2, n_burn=5, n_samples=5)


VALUES = noisy_rank2()
SCALES = ["percent"] * VALUES.shape[1]


# ------------------------------------------------------------------ fit: side information
def test_new_model_intervals_are_calibrated_with_the_fits_side_information() -> None:
    """`fit_calibrated` (the pipeline's fit and `BenchPress.fit`) calibrates new-model
    intervals on held-out models fitted and folded in with the side information the fit was
    given: dated models also get the table of a model folded in without its date."""
    n, m = VALUES.shape
    side = SideInformation(
        release_year=np.linspace(2023.0, 2026.0, n),
        families=tuple(f"family-{i % 4}" for i in range(n)),
        lower=np.zeros(m),
        upper=np.full(m, 100.0),
        categories=tuple(("math", "coding")[j % 2] for j in range(m)),
    )
    completer, given = fit_calibrated(VALUES, SCALES, small, side)
    assert {"row_features", "row_groups", "col_groups"} <= set(given)
    calibration = completer.fold_in_calibration_
    assert calibration == calibrate_fold_in(VALUES, SCALES, small, fit_kwargs=given)
    assert calibration.release_factors is not None  # only a fit with dates has this table
    assert calibration != calibrate_fold_in(VALUES, SCALES, small)


# ------------------------------------------------------------------ BenchPress.fit: ranges
def test_a_score_outside_its_benchmarks_valid_range_is_refused_before_the_fit() -> None:
    """An Elo of 100 (chatbot_arena_elo's valid range is 500-3000) on an open scale passes
    the percent check; the registry's range refuses it, naming the row."""
    frame = pl.DataFrame(
        {
            "model": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
            "benchmark": ["gpqa_diamond", "mmlu_pro", "chatbot_arena_elo"] * 3,
            "score": [50.0, 60.0, 1250.0, 40.0, 55.0, 100.0, 30.0, 45.0, 1100.0],
            "scale": ["percent", "percent", "unbounded"] * 3,
        }
    )
    with pytest.raises(ScoresFrameError) as caught:
        BenchPress.fit(frame)
    assert str(caught.value) == (
        "row 6: b on chatbot_arena_elo scores 100, outside its valid range 500 to 3000"
    )


# ------------------------------------------------------------------ the calibration cache
@pytest.fixture(scope="module")
def computed() -> FoldInCalibration:
    """A real calibration (computed without any cache) to store and read back."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(CACHE_ENV, raising=False)
        return calibrate_fold_in(VALUES, SCALES, small, n_splits=3)


def test_a_calibration_cached_by_other_code_is_computed_again(
    computed: FoldInCalibration, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key covers the predictor package's source: after an upgrade (or any edit) an
    entry of the old code is not used."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "calibrations"))
    calls: list[int] = []

    def compute() -> FoldInCalibration:
        calls.append(1)
        return computed

    inputs = {"values": VALUES, "scales": SCALES}
    assert cached_calibration(inputs, compute) == computed
    again = cached_calibration(inputs, compute)
    assert (len(calls), again, again.cache_key is not None) == (1, computed, True)
    monkeypatch.setattr(calibration_cache, "source_digest", lambda packages: "other code")
    cached_calibration(inputs, compute)
    assert len(calls) == 2
    assert len(list((tmp_path / "calibrations").glob("*.json"))) == 2


def test_arrays_of_the_same_bytes_in_other_shapes_have_other_keys() -> None:
    flat = np.arange(12.0)
    shapes = [(12,), (3, 4), (4, 3), (2, 6), (12, 1)]
    keys = {calibration_key(values=flat.reshape(shape)) for shape in shapes}
    assert len(keys) == len(shapes)
    assert calibration_key(values=flat.reshape(3, 4)) == calibration_key(values=flat.reshape(3, 4))


# ------------------------------------------------------------------ settings of limits
@pytest.mark.parametrize("name", ["BENCHPRESS_READ_SECONDS", "BENCHPRESS_READ_MEMORY_MB"])
@pytest.mark.parametrize("text", ["nan", "NaN", "-nan"])
def test_a_nan_read_limit_is_refused_not_turned_off(
    name: str, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, text)
    with pytest.raises(ValueError) as caught:
        limits_from_environment()
    assert str(caught.value) == f"{name} must be a number of 0 or more (0: no limit), got {text!r}"


@pytest.mark.parametrize("text", ["nan", "-1"])
def test_a_lock_wait_that_is_not_a_duration_is_refused(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NaN would never compare as past the deadline: the track would wait for ever."""
    monkeypatch.setenv(WAIT_ENV, text)
    with pytest.raises(ValueError) as caught:
        wait_seconds()
    assert str(caught.value) == f"{WAIT_ENV} must be >= 0 seconds, got {text!r}"


# ------------------------------------------------------------------ smoke tests of others
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FULL = FIXTURES / "eval_formats" / "lm_eval" / "results_2026-01-21T03-44-18.458309.json"
LIMITED = FIXTURES / "limited_runs" / "results_2026-01-21T03-44-18.458309_edited_to_limit_2.json"
MODEL = "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"
MAP = "math_perturbed_full=math_level_5"


def test_another_models_smoke_test_does_not_refuse_this_models_full_run(tmp_path: Path) -> None:
    """A folder of two models' runs: the full run of the model asked for is used; the other
    model's smoke test (`--limit 2`) is refused only when that model is asked for."""
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copyfile(FULL, folder / FULL.name)
    smoke = folder / "other" / LIMITED.name
    smoke.parent.mkdir()
    text = LIMITED.read_text(encoding="utf-8")
    smoke.write_text(text.replace(MODEL, "acme/other-model"), encoding="utf-8")
    bp = BenchPress.load()
    frame = bp.read_results(folder, overrides=[MAP])
    assert set(frame["model"].to_list()) == {MODEL, "acme/other-model"}
    answer = bp.predict(frame, targets="mmlu_pro", model=MODEL)
    assert answer == bp.predict({"math_level_5": 0.0}, targets="mmlu_pro", model=MODEL)
    with pytest.raises(ResultsError) as caught:
        bp.predict(frame, targets="mmlu_pro", model="acme/other-model")
    assert str(caught.value).startswith(f"{smoke}, config.limit: the run was limited to 2 items")


# ------------------------------------------------------------------ tracking URIs
@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        ("http://alice:pw-s3cret@127.0.0.1:5000/mlflow", "http://127.0.0.1:5000/mlflow"),
        ("https://tok-s3cret@tracking.example.org/", "https://tracking.example.org/"),
        ("https://alice:p%40ss@tracking.example.org", "https://tracking.example.org"),
        ("http://127.0.0.1:5000", "http://127.0.0.1:5000"),
        ("sqlite:///runs/ml.db", "sqlite:///runs/ml.db"),
    ],
)
def test_a_tracking_uri_is_shown_without_its_credentials(uri: str, shown: str) -> None:
    assert display_uri(uri) == shown
