"""`benchpress ... --csv` is the Python API's frame; `--json`/`--csv` exclude each other;
progress bars only on stderr, only when asked for or on a terminal; one-line errors."""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from pipelines.sources import SOURCES
from predictor import BenchPress
from predictor.api import predictions_frame
from predictor.cli import main
from predictor.cli.output import Progress, progress_enabled
from predictor.snapshots.reader import manifest_digest
from predictor.snapshots.stores import open_store
from predictor.trust import (
    compare_models,
    compare_with_known_models,
    select_probes_for,
    suspicious_scores,
    what_to_run_next,
)
from predictor.util.paths import bundled_snapshot_dir

BIN = Path(sys.executable).parent / "benchpress"
STORE = str(bundled_snapshot_dir())
BAR = re.compile(r"\d+%\|")  # tqdm: "probe search:  40%|####      | 2/5 [...]"
ALLOW = "gpqa_diamond,mmlu_pro,ifeval,hle"


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load(store=STORE)


@pytest.fixture(autouse=True)
def _home(benchpress_home: Path) -> Path:  # never the developer's ./.benchpress
    return benchpress_home


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def read_csv(text: str, like: pl.DataFrame) -> pl.DataFrame:
    """Parse CLI CSV with the expected dtypes (names and values are then compared exactly)."""
    assert text.splitlines()[0] == ",".join(like.columns)  # header: same names, same order
    return pl.read_csv(io.StringIO(text), schema_overrides=like.schema)


def assert_csv_is(text: str, expected: pl.DataFrame) -> None:
    assert expected.height > 0 or text.count("\n") == 1
    assert_frame_equal(read_csv(text, expected), expected, check_exact=True)


def run_bin(*argv: str, home: Path) -> subprocess.CompletedProcess[str]:
    """The installed script, stdout and stderr pipes (not terminals)."""
    env = {**os.environ, "BENCHPRESS_HOME": str(home)}
    return subprocess.run(
        [str(BIN), *argv], capture_output=True, text=True, env=env, timeout=120, check=False
    )


# ------------------------------------------------------------------- --csv = the API's frame
def test_predict_csv_is_predictions_frame(capsys, bp: BenchPress) -> None:
    code, out, err = cli(
        capsys, "predict", "--scores", "gpqa_diamond=80,hle=20", "--store", STORE, "--csv"
    )
    assert code == 0 and err == ""
    expected = predictions_frame(bp.predict({"gpqa_diamond": 80, "hle": 20}, level=0.9))
    assert_csv_is(out, expected)
    assert expected.filter(pl.col("observed")).height == 2


def test_predict_json_is_strict_json_with_null_for_missing_trust_figures(capsys) -> None:
    code, out, _ = cli(capsys, "predict", "--scores", "gpqa_diamond=80", "--store", STORE, "--json")

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    doc = json.loads(out, parse_constant=refuse)
    rows = {r["benchmark"]: r for r in doc["predictions"]}
    assert code == 0 and rows["chatbot_arena_elo"]["p_within_5"] is None
    assert 0 < rows["hle"]["p_within_5"] < 1 and rows["gpqa_diamond"]["p_within_5"] == 1.0


def test_compare_csv_is_comparison_frame(capsys, bp: BenchPress) -> None:
    a, b = {"gpqa_diamond": 80.0, "hle": 20.0}, {"gpqa_diamond": 40.0, "hle": 5.0}
    code, out, _ = cli(
        capsys,
        "compare",
        *("--model", "A:gpqa_diamond=80,hle=20", "--model", "B:gpqa_diamond=40,hle=5"),
        *("--targets", "chat", "--store", STORE, "--csv"),
    )
    assert code == 0
    assert_csv_is(out, compare_models(bp, [a, b], "chat", names=["A", "B"]).to_frame())

    code, out, _ = cli(
        capsys,
        "compare",
        *("--model", "new:gpqa_diamond=80", "--reference", "claude-3-opus"),
        *("--targets", "ifeval", "--store", STORE, "--csv"),
    )
    assert code == 0
    known = compare_with_known_models(
        bp, {"gpqa_diamond": 80.0}, ["claude-3-opus"], targets="ifeval", name="new"
    )
    assert_csv_is(out, known.to_frame())


def test_probes_next_suspicious_csv_are_their_frames(capsys, bp: BenchPress) -> None:
    code, out, err = cli(
        capsys,
        "probes",
        "--k",
        "2",
        "--targets",
        "chat",
        "--allow",
        ALLOW,
        "--store",
        STORE,
        "--csv",
    )
    assert code == 0 and err == ""  # no bar: not a terminal, and --csv
    selection = select_probes_for(bp, k=2, targets="chat", allowlist=ALLOW.split(","))
    assert_csv_is(out, selection.to_frame())

    code, out, _ = cli(
        capsys,
        "next",
        *("--scores", "gpqa_diamond=80,hle=20", "--targets", "reasoning", "--top", "3"),
        *("--store", STORE, "--csv"),
    )
    assert code == 0
    expected = what_to_run_next(bp, {"gpqa_diamond": 80.0, "hle": 20.0}, "reasoning", top=3)
    assert_csv_is(out, expected)

    code, out, _ = cli(
        capsys, "suspicious", "--threshold", "8", "--top", "4", "--store", STORE, "--csv"
    )
    assert code == 0
    assert_csv_is(out, suspicious_scores(bp, threshold=8).head(4))


def test_suspicious_says_how_many_rows_it_left_out(capsys, bp: BenchPress) -> None:
    every = suspicious_scores(bp)
    assert every.height > 50  # the bundled snapshot flags more than one table's worth
    code, out, _ = cli(capsys, "suspicious", "--store", STORE, "--csv")
    assert code == 0
    assert_csv_is(out, every)  # the whole Python frame, as for every --csv
    code, out, _ = cli(capsys, "suspicious", "--store", STORE, "--json")
    doc = json.loads(out)
    assert doc["total"] == every.height and len(doc["rows"]) == every.height
    code, out, _ = cli(capsys, "suspicious", "--store", STORE, "--json", "--top", "2")
    assert json.loads(out)["total"] == every.height and len(json.loads(out)["rows"]) == 2
    code, out, _ = cli(capsys, "suspicious", "--store", STORE)
    lines = out.strip().splitlines()
    assert len(lines) == 2 + 50 + 1  # title, header, 50 rows, what was left out
    assert lines[-1] == f"... {every.height - 50} more of {every.height}; --top N shows more"


def test_snapshots_list_and_diff_csv(capsys, bp: BenchPress) -> None:
    code, out, _ = cli(capsys, "snapshots", "list", "--store", STORE, "--csv")
    assert code == 0
    versions = open_store(STORE).list_versions()  # the store's own listing, in its order
    manifests = [BenchPress.load(v, store=STORE).manifest for v in versions]
    expected = pl.DataFrame(
        {
            "version": versions,
            "models": [m["counts"]["models"] for m in manifests],
            "benchmarks": [m["counts"]["benchmarks"] for m in manifests],
            "cells": [m["counts"]["cells"] for m in manifests],
            "content_hash": [m["content_hash"][:12] for m in manifests],
            "digest": [manifest_digest(m) for m in manifests],  # what VERSION@DIGEST pins
            "parent": [m.get("parent") or "" for m in manifests],
            "cached": [True] * len(versions),
            "store": [STORE] * len(versions),
            "status": ["ok"] * len(versions),
            "error": [""] * len(versions),
        }
    )
    assert_csv_is(out, expected)

    # the tabular part of a diff: models/benchmarks added or removed (none against itself)
    code, out, _ = cli(
        capsys, "snapshots", "diff", bp.version, bp.version, "--store", STORE, "--csv"
    )
    assert code == 0 and out == "kind,change,name\n"


def test_diff_frame_rows_follow_snapshot_diff() -> None:
    from predictor.cli.snapshots import diff_frame

    diff = {
        "models_added": ["m-new"],
        "models_removed": [],
        "benchmarks_added": ["b1", "b2"],
        "benchmarks_removed": ["old"],
    }
    assert diff_frame(diff).rows() == [
        ("model", "added", "m-new"),
        ("benchmark", "added", "b1"),
        ("benchmark", "added", "b2"),
        ("benchmark", "removed", "old"),
    ]


def test_sources_csv_one_row_per_url(capsys) -> None:
    code, out, _ = cli(capsys, "sources", "--csv")
    assert code == 0
    got = pl.read_csv(io.StringIO(out))
    described = [source.describe() for source in SOURCES.values()]
    assert got.columns == [("url" if k == "urls" else k) for k in described[0]]
    expected = [
        (s["id"], url, s["licence"], s["max_bytes"]) for s in described for url in s["urls"]
    ]
    assert got.select("id", "url", "licence", "max_bytes").rows() == expected


def test_evaluate_csv_one_row_per_method(capsys, tmp_path: Path) -> None:
    out_json = tmp_path / "results.json"
    code, out, err = cli(
        capsys,
        *("evaluate", "--quick", "--no-probe", "--methods", "column_mean"),
        *("--csv", "--out", str(out_json)),
    )
    assert code == 0 and err == ""  # no "... held-out" chatter with --csv
    frame = pl.read_csv(io.StringIO(out))
    results = json.loads(out_json.read_text())
    holdout = results["methods"]["column_mean"]["holdout"]
    assert frame.columns == ["method", "label", *(f"holdout_{k}" for k in holdout)]
    row = frame.row(0, named=True)
    assert (row["method"], row["label"]) == ("column_mean", "column mean")
    for key, value in holdout.items():
        got = row[f"holdout_{key}"]
        if value is None:  # strict JSON: a NaN figure is null in the --out file
            assert got is None or math.isnan(got), key
        else:
            assert got == value, key
    assert row["holdout_n_folds"] == 3


# ------------------------------------------------------------------- --json and --csv
@pytest.mark.parametrize(
    "argv",
    [
        ["predict", "--scores", "gpqa_diamond=80"],
        ["compare", "--model", "gpqa_diamond=80", "--model", "hle=3", "--targets", "chat"],
        ["probes"],
        ["next", "--scores", "gpqa_diamond=80"],
        ["suspicious"],
        ["snapshots", "list"],
        ["snapshots", "diff", "a", "b"],
        ["sources"],
        ["warehouse", "stats"],
        ["evaluate", "--quick"],
    ],
    ids=lambda argv: "-".join(a for a in argv[:2] if not a.startswith("-")),
)
def test_json_and_csv_exclude_each_other(capsys, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--json", "--csv"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "argument --csv: not allowed with argument --json" in err


def test_json_and_csv_error_from_the_installed_script(benchpress_home: Path) -> None:
    done = run_bin(
        "predict", "--scores", "gpqa_diamond=80", "--csv", "--json", home=benchpress_home
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        "benchpress predict: error: argument --json: not allowed with argument --csv"
    )


# ------------------------------------------------------------------- progress bars
def test_probe_search_bar_only_when_forced(benchpress_home: Path) -> None:
    argv = ["probes", "--k", "2", "--targets", "chat", "--allow", ALLOW, "--store", STORE]
    piped = run_bin(*argv, home=benchpress_home)
    assert piped.returncode == 0 and piped.stderr == ""  # a pipe: no bar by default
    forced = run_bin(*argv, "--progress", "--csv", home=benchpress_home)
    assert forced.returncode == 0
    assert "probe search:" in forced.stderr and BAR.search(forced.stderr), forced.stderr
    assert "/7 " in forced.stderr  # 4 candidates, then 3: seven looked at
    assert forced.stdout.startswith("step,benchmark,column,")  # stdout stays clean CSV
    off = run_bin(*argv, "--no-progress", home=benchpress_home)
    assert off.stderr == "" and off.stdout == piped.stdout


def test_evaluate_bar_counts_fits(capsys) -> None:
    argv = ["evaluate", "--quick", "--no-probe", "--methods", "column_mean", "--csv"]
    code, out, err = cli(capsys, *argv, "--progress")
    assert code == 0 and out.startswith("method,label,")
    assert "evaluate" in err and BAR.search(err) and "/3 " in err  # 3 quick folds x 1 method
    code, _, err = cli(capsys, *argv)
    assert code == 0 and err == ""


def test_probe_progress_callback_counts_every_candidate(bp: BenchPress) -> None:
    calls: list[tuple[int, int]] = []
    plain = select_probes_for(bp, k=2, targets="chat", allowlist=ALLOW.split(","))
    watched = select_probes_for(
        bp, k=2, targets="chat", allowlist=ALLOW.split(","), progress=lambda *a: calls.append(a)
    )
    assert watched == plain  # the callback changes nothing
    assert calls == [(done, 7) for done in range(1, 8)]


def test_progress_default_is_terminal_and_table_only(monkeypatch) -> None:
    def args(**kw) -> argparse.Namespace:
        return argparse.Namespace(**{"json": False, "csv": False, "progress": None, **kw})

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert progress_enabled(args())
    assert not progress_enabled(args(json=True)) and not progress_enabled(args(csv=True))
    assert not progress_enabled(args(progress=False))
    assert not progress_enabled(args(), auto=False)  # e.g. refresh --verbose
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert not progress_enabled(args())
    assert progress_enabled(args(progress=True, csv=True))  # explicit wins; stdout untouched
    bar = Progress(args())
    bar.update_to(3, 10)  # disabled: no tqdm made, nothing written
    assert bar.bar is None


# ------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["probes", "--k", "0"], 2, "argument --k: must be at least 1, got 0"),
        (["suspicious", "--top", "-1"], 2, "argument --top: must be at least 1, got -1"),
        (["next", "--scores", "hle=1", "--budget", "0"], 2, "must be a positive number"),
        (["compare", "--model", "hle=1"], 2, "give two or more --model"),
        (["warehouse", "stats"], 1, "run `benchpress refresh` to build it"),
        (["warehouse", "rebuild", "--as-of", "2026-01-01", "--out", "x"], 1, "no warehouse"),
        (["evaluate", "--out", "."], 2, "--out . is a directory"),
    ],
)
def test_errors_are_one_line_with_a_next_step(capsys, argv, code, message) -> None:
    try:
        got = main(argv)
    except SystemExit as stop:  # argparse usage errors
        got = stop.code
    assert got == code
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("benchpress") and message in err


def test_command_errors_are_caught_when_run_as_a_module(benchpress_home: Path) -> None:
    """`python -m predictor.cli`: `__main__` and `predictor.cli` share one CommandError."""
    env = {**os.environ, "BENCHPRESS_HOME": str(benchpress_home)}
    done = subprocess.run(
        [sys.executable, "-m", "predictor.cli", "compare", "--model", "hle=1", "--store", STORE],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "benchpress: error: give two or more --model, or one --model with --reference"
    )


def test_predict_targets_keep_only_those_benchmarks(capsys, bp: BenchPress) -> None:
    scores = {"gpqa_diamond": 70.0, "mmlu_pro": 75.0, "hle": 15.0}
    chosen = bp.predict(scores, targets=["SWE-bench Verified", "aime_2025"])
    assert sorted(chosen) == ["aime_2025", "swe_bench_verified"]
    assert chosen["aime_2025"] == bp.predict(scores)["aime_2025"]  # the same answer, fewer rows
    profile = bp.predict(scores, targets="coding_assistant")
    assert "swe_bench_verified" in profile and len(profile) < 10

    argv = ["predict", "--scores", "gpqa_diamond=70,mmlu_pro=75,hle=15", "--store", STORE]
    code, out, _ = cli(capsys, *argv, "--targets", "swe_bench_verified,aime_2025", "--csv")
    assert code == 0
    assert_csv_is(out, predictions_frame(chosen))
    code, out, err = cli(capsys, *argv, "--targets", "reasonin")
    assert code == 2 and "unknown profile or benchmark 'reasonin'" in err
