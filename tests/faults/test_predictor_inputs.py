"""Predictor input validation: every bad input is a clear error, never a silent wrong answer.

`BenchPress.predict`, `predictor.complete_matrix` and `benchpress predict` are given unknown
names, NaN, infinities, out-of-range and implausible scores, empty input, wrong types (strings,
booleans, None, lists), duplicate benchmarks after name resolution and very large inputs. Gaps
found by this suite are `xfail(strict=True)` with the fix in the issue 9 report.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from predictor import BenchPress, SnapshotError, UnknownNameError, complete_matrix
from predictor.cli import main
from predictor.results import ResultsError
from predictor.snapshots.reader import list_versions
from predictor.util.paths import bundled_snapshot_dir
from predictor.web import api
from predictor.web.catalog import Catalog
from predictor.web.errors import ApiError

BUNDLED = bundled_snapshot_dir()
VERSION = list_versions(BUNDLED)[-1]


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(VERSION, store=BUNDLED)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog(stores=[BUNDLED])


def unbounded(bp: BenchPress, benchmark: str) -> tuple[float, float]:
    table = bp.snapshot.benchmarks.filter(benchmark_id=benchmark)
    return float(table["lower"][0]), float(table["upper"][0])


# ----------------------------------------------------------------------- BenchPress.predict
@pytest.mark.parametrize(
    ("probes", "error", "message"),
    [
        ({}, ValueError, "empty"),
        (None, TypeError, "mapping"),
        ("gpqa_diamond=80", ResultsError, "a mapping {benchmark: score}"),  # read as a path
        ([("gpqa_diamond", 80.0)], TypeError, "mapping"),
        ({"gpqa_diamnd": 80.0}, UnknownNameError, "did you mean: gpqa_diamond"),
        ({"no such benchmark at all": 50.0}, UnknownNameError, "unknown benchmark"),
        ({"'); DROP TABLE cells; --": 50.0}, UnknownNameError, "unknown benchmark"),
        ({"<script>alert(1)</script>": 50.0}, UnknownNameError, "unknown benchmark"),
        ({"": 50.0}, TypeError, "non-empty string"),
        ({"   ": 50.0}, TypeError, "non-empty string"),
        ({1: 50.0}, TypeError, "non-empty string"),
        ({None: 50.0}, TypeError, "non-empty string"),
        ({"gpqa_diamond": float("nan")}, ValueError, "finite"),
        ({"gpqa_diamond": np.float32("nan")}, ValueError, "finite"),
        ({"gpqa_diamond": float("inf")}, ValueError, "finite"),
        ({"gpqa_diamond": -float("inf")}, ValueError, "finite"),
        ({"gpqa_diamond": -0.5}, ValueError, "0-100"),
        ({"gpqa_diamond": 100.5}, ValueError, "0-100"),
        ({"gpqa_diamond": 1e9}, ValueError, "0-100"),
        ({"codeforces_rating": 1e12}, ValueError, "implausibly large"),
        ({"gpqa_diamond": "80"}, TypeError, "must be a number"),
        ({"gpqa_diamond": None}, TypeError, "must be a number"),
        ({"gpqa_diamond": True}, TypeError, "must be a number"),
        ({"gpqa_diamond": np.bool_(False)}, TypeError, "must be a number"),
        ({"gpqa_diamond": [80.0]}, TypeError, "must be a number"),
        ({"gpqa_diamond": 80.0, "GPQA Diamond": 81.0}, ValueError, "given twice"),
        ({"gpqa_diamond": 80.0, "gpqa diamond": 80.0}, ValueError, "given twice"),
    ],
)
def test_bad_probes_are_clear_errors(bp, probes, error, message) -> None:
    with pytest.raises(error, match=message):
        bp.predict(probes)


@pytest.mark.parametrize("level", [0.0, 1.0, -0.1, 1.5, float("nan"), True])
def test_bad_levels_are_clear_errors(bp, level) -> None:
    with pytest.raises(ValueError, match="level must lie strictly between 0 and 1"):
        bp.predict({"gpqa_diamond": 80.0}, level=level)


def test_numpy_and_integer_scores_are_numbers(bp) -> None:
    plain = bp.predict({"gpqa_diamond": 80.0})
    for value in (80, np.int64(80), np.float32(80.0), np.float64(80.0)):
        assert bp.predict({"gpqa_diamond": value})["mmlu_pro"].score == pytest.approx(
            plain["mmlu_pro"].score
        )


def test_huge_inputs_fail_fast(bp) -> None:
    started = time.monotonic()
    with pytest.raises(UnknownNameError):
        bp.predict({f"benchmark {i}": 50.0 for i in range(100_000)})
    with pytest.raises(UnknownNameError):
        bp.predict({"x" * 1_000_000: 50.0})
    assert time.monotonic() - started < 30


def test_every_fitted_benchmark_as_probe_gives_back_the_probes(bp) -> None:
    probes = {b: 50.0 for b in bp.fit_benchmarks_ if bp._scale[b] == "percent"}
    predictions = bp.predict(probes)
    assert all(predictions[b].observed and predictions[b].score == 50.0 for b in probes)
    assert all(math.isfinite(p.low) and math.isfinite(p.high) for p in predictions.values())


@pytest.mark.parametrize(
    ("benchmark", "where"), [("chatbot_arena_elo", "below"), ("codeforces_rating", "above")]
)
def test_open_scale_scores_outside_the_valid_range_are_errors(bp, benchmark, where) -> None:
    lower, upper = unbounded(bp, benchmark)
    value = lower - 505.0 if where == "below" else upper * 25
    with pytest.raises(ValueError, match="outside"):
        bp.predict({benchmark: value})


def test_an_int_too_large_for_a_float_is_a_value_error(bp, catalog) -> None:
    with pytest.raises(ValueError, match="implausibly large"):
        bp.predict({"gpqa_diamond": 10**400})
    with pytest.raises(ApiError) as caught:
        api.handle(catalog, "/api/predict", {"scores": {"gpqa_diamond": 10**400}}, "POST")
    assert caught.value.status == 400


def test_web_api_turns_bad_probes_into_400s(catalog) -> None:
    for scores in (
        {"gpqa_diamond": True},
        {"gpqa_diamond": "eighty"},
        {"gpqa_diamond": None},
        {"gpqa_diamond": [80]},
        {"gpqa_diamnd": 80},
        "gpqa_diamond=nan",
        "gpqa_diamond=80,gpqa_diamond=70",
    ):
        with pytest.raises(ApiError) as caught:
            api.handle(catalog, "/api/predict", {"scores": scores}, "POST")
        assert caught.value.status == 400, scores


# ------------------------------------------------------------------------- complete_matrix
GOOD = np.array(
    [
        [50.0, 60.0, np.nan, 1200.0],
        [55.0, np.nan, 70.0, 1250.0],
        [40.0, 45.0, 50.0, np.nan],
        [70.0, 80.0, 90.0, 1300.0],
        [60.0, 65.0, 75.0, 1280.0],
    ]
)
SCALES = ["percent", "percent", "percent", "unbounded"]


def with_cell(value: float, i: int = 0, j: int = 0) -> np.ndarray:
    values = GOOD.copy()
    values[i, j] = value
    return values


@pytest.mark.parametrize(
    ("values", "scales", "level", "message"),
    [
        (GOOD[0], SCALES, 0.9, "2-D"),
        (None, SCALES, 0.9, "2-D"),
        (np.full((3, 4), np.nan), SCALES, 0.9, "no observed cells"),
        (with_cell(np.inf), SCALES, 0.9, "infinite"),
        (with_cell(-np.inf, 1, 3), SCALES, 0.9, "infinite"),
        ([["a", "b"], ["c", "d"]], ["percent", "percent"], 0.9, "could not convert"),
        (GOOD, SCALES[:3], 0.9, "4 columns"),
        (GOOD, "percent", 0.9, "scales"),
        (GOOD, ["percent", "percent", "percent", "elo"], 0.9, "expected one of"),
        (GOOD, SCALES, 1.0, "level"),
        (GOOD, SCALES, float("nan"), "level"),
    ],
)
def test_bad_matrices_are_clear_errors(values, scales, level, message) -> None:
    with pytest.raises(ValueError, match=message):
        complete_matrix(values, scales, level=level)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (with_cell(150.0), "outside 0-100"),
        (with_cell(-5.0, 2, 1), "outside 0-100"),
        (with_cell(1e12, 1, 3), "implausibly large"),
        (GOOD > 50, "booleans"),
        (np.empty((0, 4)), "empty"),
    ],
)
def test_out_of_range_and_mistyped_matrices_are_errors(values, message) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        complete_matrix(values, SCALES)


def test_observed_cells_come_back_unchanged() -> None:
    done = complete_matrix(GOOD, SCALES)
    observed = ~np.isnan(GOOD)
    assert np.array_equal(done.mean[observed], GOOD[observed])
    assert np.isfinite(done.mean).all() and (done.low <= done.high).all()


# ---------------------------------------------------------------------- benchpress predict
def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(["predict", "--version", VERSION, "--store", str(BUNDLED), *args])
    except SystemExit as exc:  # argparse usage errors (exit 2)
        code = int(exc.code)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("scores", "code", "message"),
    [
        ("gpqa_diamnd=80", 2, "unknown benchmark 'gpqa_diamnd'; did you mean: gpqa_diamond"),
        ("gpqa_diamond", 2, "expected name=value"),
        ("gpqa_diamond=eighty", 2, "non-numeric value 'eighty'"),
        ("", 2, "at least one"),
        (",,,", 2, "at least one"),
        ("=80", 2, "expected name=value"),
        ("gpqa_diamond=nan", 2, "must be finite"),
        ("gpqa_diamond=inf", 2, "must be finite"),
        ("gpqa_diamond=-1", 2, "0-100"),
        ("gpqa_diamond=1e9", 2, "0-100"),
        ("gpqa_diamond=80,GPQA Diamond=81", 2, "given twice"),
    ],
)
def test_cli_bad_scores_exit_non_zero_with_one_clear_line(capsys, scores, code, message) -> None:
    got, out, err = run_cli(capsys, "--scores", scores)
    assert got == code, err
    assert out == ""
    assert err.startswith("benchpress: error: ") and message in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("level", ["0", "1", "1.5", "nan"])
def test_cli_bad_level(capsys, level) -> None:
    got, _, err = run_cli(capsys, "--scores", "gpqa_diamond=80", "--level", level)
    assert got == 2 and "argument --level: level must lie strictly between 0 and 1" in err


def test_cli_same_name_twice_is_an_error(capsys) -> None:
    got, out, err = run_cli(capsys, "--scores", "gpqa_diamond=80,gpqa_diamond=20")
    assert got == 2 and "given twice" in err, (got, out[:200])


def test_cli_as_a_process(tmp_path: Path) -> None:
    """The installed command end to end: exit status and a single error line, no traceback."""
    command = [sys.executable, "-m", "predictor.cli", "predict", "--store", str(BUNDLED)]
    done = subprocess.run(
        [*command, "--scores", "gpqa_diamond=nan"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 2  # the caller's input: a usage error
    assert done.stderr.strip().splitlines() == [
        "benchpress: error: score for 'gpqa_diamond' must be finite, got nan"
    ]


# ------------------------------------------------------------------ versions never become paths
TRAVERSAL_VERSIONS = [
    "../../etc",
    "2026.11.30.1/../../x",
    "/etc/passwd",
    "..",
    "2026.11.30.1\x00",
    "2026.11.30.1\n",
    "latest/..",
    "2026.11.30.1/",
]


@pytest.mark.parametrize("version", TRAVERSAL_VERSIONS)
def test_versions_are_checked_before_any_path_is_built(catalog, version) -> None:
    with pytest.raises(SnapshotError, match="not a snapshot version"):
        BenchPress.load(version, store=BUNDLED)
    with pytest.raises(SnapshotError, match="not a snapshot version"):
        BenchPress.load(version)
    try:
        answer = api.handle(catalog, "/api/snapshot", {"version": version})
    except ApiError as exc:
        assert exc.status in (400, 404)
    else:  # the web layer trims surrounding whitespace; what it serves is exactly that version
        assert answer["version"] == version.strip() == VERSION


def test_cli_refuses_a_traversal_version(capsys) -> None:
    code = main(["snapshots", "show", "../../etc", "--store", str(BUNDLED)])
    _, err = capsys.readouterr()
    assert code == 1 and "not a snapshot version: '../../etc'" in err
