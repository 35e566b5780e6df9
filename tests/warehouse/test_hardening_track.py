"""Hardening of `benchpress track` and the private models' CSV:

- `--step-from` runs in linear time (RE2): a catastrophically backtracking pattern answers at
  once; lookaround and backreferences (which RE2 has not) are a usage error saying so.
- `--plot PATH` and the run name are checked before anything is read or predicted: a folder
  or a symlink at PATH, a run name too long for its checkpoints' names exit 2 with nothing
  stored; the plot is written to a temporary file and moved into place.
- `--csv` neutralises names a spreadsheet would run as formulas.

Real lm-evaluation-harness results files, the real CLI in-process, a real DuckDB store in a
temp BENCHPRESS_HOME (helpers of tests/warehouse/test_track.py)."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import polars as pl
import pytest

from predictor.api import BenchPress
from predictor.cli import main
from tests.warehouse.test_track import GLOB, STEPS, track, write_run

AT_ONCE = 30.0  # seconds, on a loaded machine: a backtracking engine takes hours (2**32 paths)
FORMULA = "=cmd|' /C calc'!A0"


def refused_early(capsys, monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str, str]:
    """`benchpress track ARGV` with snapshot loading made to fail the test: a refusal comes
    before any snapshot is loaded or prediction made (an event, where a clock would be late
    on a busy machine)."""

    def load(cls: type, *args: object, **kwargs: object) -> None:
        raise AssertionError("a snapshot was loaded before the refusal")

    with monkeypatch.context() as patched:
        patched.setattr(BenchPress, "load", classmethod(load))
        return track(capsys, *argv)


@pytest.fixture
def run_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[int, Path]:
    monkeypatch.chdir(tmp_path)
    return write_run(tmp_path)


def stored(capsys) -> list:
    """What `benchpress models list --json` shows."""
    code = main(["models", "list", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    return json.loads(out)


# ---------------------------------------------------------------------------- --step-from
def test_a_backtracking_step_pattern_answers_at_once(
    benchpress_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "redos" / ("a" * 32)
    folder.mkdir(parents=True)
    (folder / "results.json").write_text("{}")
    start = time.monotonic()
    argv = ("r", "--from", "redos/*/results.json", "--step-from", r"^redos/(?:a+)+x(\d+)")
    code, out, err = refused_early(capsys, monkeypatch, *argv)
    assert time.monotonic() - start < AT_ONCE
    assert (code, out) == (2, "")
    assert err == (
        f"benchpress: error: redos/{'a' * 32}/results.json: --step-from "
        "'^redos/(?:a+)+x(\\\\d+)' does not match\n"
    )
    assert not benchpress_home.exists()


@pytest.mark.parametrize(
    "pattern",
    [r"(?<=step-)(\d+)", r"(?<!x)step-(\d+)", r"step-(?=\d)(\d+)", r"(\d)\1*", r"(?P<s>\d+)(?P=s)"],
)
def test_lookaround_and_backreferences_are_refused_saying_so(
    benchpress_home: Path, run_files: dict[int, Path], capsys, pattern: str
) -> None:
    code, out, err = track(capsys, "r", "--from", GLOB, "--step-from", pattern)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1
    assert err.startswith("benchpress: error: --step-from: ")
    assert "lookaround and backreferences are not supported" in err
    assert not benchpress_home.exists()


def test_a_step_pattern_in_re2_syntax_is_used(
    benchpress_home: Path, run_files: dict[int, Path], capsys
) -> None:
    code, out, err = track(
        capsys, "r", "--from", GLOB, "--step-from", r"(?i)STEP-(\d+)/", "--targets", "mmlu_pro"
    )
    assert (code, err) == (0, "")
    assert [m["step"] for m in stored(capsys)] == list(STEPS)
    code, _, err = track(capsys, "r", "--from", GLOB, "--step-from", "step-(")
    assert code == 2
    assert "--step-from: not a regular expression (missing ): step-()" in err


def test_step_from_help_names_the_syntax(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["track", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "RE2 syntax" in help_text
    assert "no lookaround or backreferences" in help_text


# ---------------------------------------------------------------------------- --plot, names
def test_a_folder_at_the_plot_path_is_refused_before_anything_is_stored(
    benchpress_home: Path, run_files: dict[int, Path], capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    Path("plot.svg").mkdir()
    code, out, err = refused_early(
        capsys, monkeypatch, "run-a", "--from", GLOB, "--plot", "plot.svg"
    )
    assert (code, out) == (2, "")
    assert err == "benchpress: error: --plot plot.svg: a folder is there; name a file\n"
    assert stored(capsys) == []
    assert Path("plot.svg").is_dir()


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlink_at_the_plot_path_is_refused_and_its_target_kept(
    benchpress_home: Path, run_files: dict[int, Path], tmp_path: Path, capsys, dangling: bool
) -> None:
    target = tmp_path / "precious.txt"
    if not dangling:
        target.write_text("keep me")
    Path("plot.png").symlink_to(target)
    code, out, err = track(capsys, "run-a", "--from", GLOB, "--plot", "plot.png")
    assert (code, out) == (2, "")
    assert err == (
        "benchpress: error: --plot plot.png: a symbolic link is there; the plot is never "
        "written through a link, name another file or remove the link\n"
    )
    assert Path("plot.png").is_symlink()
    if dangling:
        assert not target.exists()
    else:
        assert target.read_text() == "keep me"
    assert stored(capsys) == []


def test_a_run_name_too_long_for_its_checkpoints_is_refused_before_predicting(
    benchpress_home: Path, run_files: dict[int, Path], capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = "r" * 199  # a usable name, but run@step-100 is 208 characters
    for extra in ([], ["--step", "100"]):
        argv = (run, "--from", GLOB, "--plot", "p.svg", *extra)
        code, out, err = refused_early(capsys, monkeypatch, *argv)
        assert (code, out) == (2, "")
        assert err == (
            f"benchpress: error: the checkpoint name {run}@step-100 is longer than 200 "
            "characters; give the run a shorter name\n"
        )
    assert not benchpress_home.exists()  # the store was never opened
    assert not Path("p.svg").exists()


def test_the_plot_replaces_a_file_and_leaves_no_temporary_file(
    benchpress_home: Path, run_files: dict[int, Path], tmp_path: Path, capsys
) -> None:
    Path("out").mkdir()
    Path("out/run.svg").write_text("old plot")
    code, out, err = track(capsys, "run-a", "--from", GLOB, "--targets", "mmlu_pro",
                           "--plot", "out/run.svg")  # fmt: skip
    assert (code, err) == (0, "")
    assert "plot: out/run.svg" in out.splitlines()
    assert Path("out/run.svg").read_bytes().startswith(b"<?xml")
    assert os.listdir("out") == ["run.svg"]
    assert len(stored(capsys)) == len(STEPS)


# ---------------------------------------------------------------------------- CSV
def test_models_list_csv_neutralises_a_formula_name(
    benchpress_home: Path, tmp_path: Path, capsys
) -> None:
    lone = tmp_path / "lone.csv"
    lone.write_text("model,benchmark,score\nm,hle,4\n")
    assert main(["models", "add", FORMULA, "--from", str(lone)]) == 0
    capsys.readouterr()
    assert main(["models", "list", "--csv"]) == 0
    out = capsys.readouterr().out
    frame = pl.read_csv(io.StringIO(out), infer_schema=False)
    assert frame["name"].to_list() == ["'" + FORMULA]
    assert out.splitlines()[1].startswith("'=cmd|' /C calc'!A0,")
    assert [m["name"] for m in stored(capsys)] == [FORMULA]  # stored (and in --json) as given


def test_track_csv_neutralises_the_run_name_and_keeps_numbers(
    benchpress_home: Path, run_files: dict[int, Path], capsys
) -> None:
    code, out, _ = track(capsys, "@run", "--from", GLOB, "--targets", "mmlu_pro", "--csv")
    assert code == 0
    frame = pl.read_csv(io.StringIO(out))
    assert frame["run"].unique().to_list() == ["'@run"]
    assert frame["model"].to_list() == [f"'@run@step-{s}" for s in STEPS]
    assert frame["step"].to_list() == list(STEPS)
    assert frame.schema["score"] == pl.Float64
