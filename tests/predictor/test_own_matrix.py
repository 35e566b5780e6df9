"""`BenchPress.fit`: a predictor of a team's own long score frame, fitted like a snapshot."""

from __future__ import annotations

import polars as pl
import pytest

from predictor import BenchPress
from predictor.evaluation.protocols import DEFAULT_MATRIX_PATH, paper_scores_frame
from predictor.fit.own_matrix import ScoresFrameError


@pytest.fixture(scope="module")
def paper() -> pl.DataFrame:
    """The BenchPress paper matrix as a long frame, with release dates and scales."""
    return paper_scores_frame(DEFAULT_MATRIX_PATH)


@pytest.fixture(scope="module")
def fitted(paper: pl.DataFrame) -> BenchPress:
    return BenchPress.fit(paper.filter(pl.col("model") != "gpt-5.5"))


def test_fit_builds_a_predictor_with_the_frames_side_information(fitted: BenchPress) -> None:
    assert fitted.version == "unpublished"
    assert len(fitted.models) == 83 and len(fitted.benchmarks) == 133
    models = fitted.snapshot.models.filter(pl.col("model_id") == "gpt-5.4").row(0, named=True)
    assert (models["family"], models["release_date"]) == ("gpt5.4", "2026-03-01")
    bench = fitted.snapshot.benchmarks.filter(pl.col("benchmark_id") == "gpqa_diamond")
    assert bench.row(0, named=True)["category"] == "knowledge"  # the registry's, id known
    answer = fitted.predict(
        {"gpqa_diamond": 93.6, "hle": 41.4, "mmlu_pro": 88.0},
        model="gpt-5.5",
        release_date="2026-04-22",
    )
    assert (answer.side.family, answer.side.family_known) == ("gpt5.5", False)
    assert answer.side.release_date == "2026-04-22"
    assert answer["gpqa_diamond"].observed and answer["gpqa_diamond"].score == 93.6
    within = [p.p_within_5 for p in answer.values() if not p.observed and p.p_within_5]
    assert len(within) > 100  # the calibrated predictive of the default method
    # the intervals were calibrated on held-out models of the frame, as in the pipeline
    state = fitted.snapshot.fit["state"]
    assert state["method"] == "bayes" and "fold_in_calibration" in state


def test_a_sparse_frame_is_refused_with_the_counts() -> None:
    frame = pl.DataFrame(
        {
            "model": ["a", "a", "a", "b", "b", "b", "c", "c"],
            "benchmark": ["x", "y", "z", "x", "y", "z", "x", "y"],
            "score": [50.0, 60.0, 70.0, 40.0, 55.0, 65.0, 30.0, 45.0],
        }
    )
    with pytest.raises(ScoresFrameError) as caught:
        BenchPress.fit(frame)
    assert str(caught.value) == (
        "1 model(s) have fewer than 3 scores: c (2); each model needs at least 3 (min_per_model=3)"
    )
    with pytest.raises(ScoresFrameError, match=r"1 benchmark\(s\) have fewer than 3 scores: z"):
        BenchPress.fit(frame, min_per_model=2)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"score": [50.0, 160.0, 70.0]}, "row 2: a on y scores 160, outside 0-100 (percent)"),
        ({"benchmark": ["x", "x", "z"]}, "rows 1, 2: a on x is scored more than once"),
        ({"scale": ["percent", "elo", "percent"]}, "row 2: scale 'elo' is not one of"),
        ({"release_date": ["2025-01-01", "soon", "2025-01-01"]}, "row 2: release_date 'soon'"),
        ({"score": [50.0, float("nan"), 70.0]}, "row 2: score must be a finite number"),
    ],
)
def test_bad_rows_are_named(change: dict, message: str) -> None:
    base = {"model": ["a", "a", "a"], "benchmark": ["x", "y", "z"], "score": [50.0, 60.0, 70.0]}
    with pytest.raises(ScoresFrameError, match=message.replace("(", r"\(").replace(")", r"\)")):
        BenchPress.fit(pl.DataFrame({**base, **change}))


def test_columns_are_checked() -> None:
    with pytest.raises(ScoresFrameError, match="lacks column\\(s\\) score"):
        BenchPress.fit(pl.DataFrame({"model": ["a"], "benchmark": ["x"], "value": [1.0]}))
    with pytest.raises(TypeError, match="must be a Polars DataFrame"):
        BenchPress.fit([("a", "x", 50.0)])  # type: ignore[arg-type]


def test_save_publishes_a_verified_version_once(fitted: BenchPress, tmp_path) -> None:
    store = tmp_path / "team-snapshots"
    version = fitted.save(store)
    assert version.count(".") == 3  # a calendar version, YYYY.MM.DD.N
    assert fitted.save(store) == version  # identical content: nothing new
    loaded = BenchPress.load(version, store=store)
    assert loaded.models == fitted.models and loaded.benchmarks == fitted.benchmarks
    probes = {"gpqa_diamond": 93.6, "hle": 41.4, "mmlu_pro": 88.0}
    assert loaded.predict(probes, model="gpt-5.5") == fitted.predict(probes, model="gpt-5.5")
    assert loaded.manifest["parent"] is None
    assert loaded.manifest["fit_params"]["method"] == "bayes"
