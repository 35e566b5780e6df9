"""Hardening of what `--from` reads and what `--csv` writes.

- Globs and folder walks do not follow directory symlinks (two folders linking to each other,
  a folder linking to itself), and a file reached under two names is read once.
- Every CSV the CLI writes neutralises text cells a spreadsheet would run as a formula
  (`=`, `+`, `-`, `@`, tab, CR: prefixed with `'`), while numbers stay numbers.

Real symlinks in a temp folder, the real `benchpress` CLI in-process against the bundled
snapshot."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import polars as pl
import pytest

from predictor.cli import output
from predictor.results.paths import expand_paths
from tests.support.cli_runs import bundled_cli

SCORES = "model,benchmark,score\nm,gpqa_diamond,80\nm,hle,20\n"
FAST = 30.0  # seconds, on a loaded machine, for a walk over a handful of files: one that
# followed the links round their loops would not end


def relative(paths: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


@pytest.fixture
def loops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """d/a/one.json, d/b/two.json, d/a/to_b -> ../b, d/b/to_a -> ../a (two loops), and
    d/self -> . (a folder linking to itself)."""
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "d"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "one.json").write_text("{}")
    (root / "b" / "two.json").write_text("{}")
    os.symlink("../b", root / "a" / "to_b", target_is_directory=True)
    os.symlink("../a", root / "b" / "to_a", target_is_directory=True)
    os.symlink(".", root / "self", target_is_directory=True)
    return root


# ---------------------------------------------------------------------------- globs
def test_a_recursive_glob_does_not_follow_directory_symlink_loops(loops: Path) -> None:
    start = time.monotonic()
    found = expand_paths("d/**/*.json")
    elapsed = time.monotonic() - start
    assert [p.as_posix() for p in found] == ["d/a/one.json", "d/b/two.json"]
    assert elapsed < FAST


def test_a_self_link_reads_the_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.json").write_text("{}")
    os.symlink(".", tmp_path / "d" / "loop", target_is_directory=True)
    start = time.monotonic()
    assert [p.as_posix() for p in expand_paths("d/**/*.json")] == ["d/x.json"]
    assert [p.as_posix() for p in expand_paths(str(tmp_path / "d" / "**" / "*.json"))] == [
        (tmp_path / "d" / "x.json").as_posix()
    ]
    assert time.monotonic() - start < FAST


def test_a_folder_walk_does_not_follow_directory_symlinks(loops: Path) -> None:
    start = time.monotonic()
    assert relative(expand_paths(loops), loops) == ["a/one.json", "b/two.json"]
    assert time.monotonic() - start < FAST


def test_a_file_named_twice_is_read_once_in_the_order_first_named(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    real = tmp_path / "x.json"
    real.write_text("{}")
    (tmp_path / "y.json").write_text("{}")
    os.symlink("x.json", tmp_path / "alias.json")
    found = expand_paths(
        [tmp_path / "y.json", tmp_path / "sub" / ".." / "x.json", real, tmp_path / "alias.json"]
    )
    assert found == [tmp_path / "y.json", tmp_path / "sub" / ".." / "x.json"]
    # a folder holding a file and a link to it: the file once (the first name in sorted order)
    assert relative(expand_paths(tmp_path), tmp_path) == ["alias.json", "y.json"]


def test_predict_from_a_glob_over_a_self_link_reads_one_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BENCHPRESS_HOME", str(tmp_path / "home"))
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "sub" / "scores.csv").write_text(SCORES)
    os.symlink("..", tmp_path / "d" / "sub" / "up", target_is_directory=True)
    start = time.monotonic()
    code, out, err = bundled_cli(capsys, "predict", "--from", "d/**/*.csv", "--targets", "mmlu_pro")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (
        "read 1 file (tidy) for m: 2 scores used: gpqa_diamond=80, hle=20"
    )
    assert time.monotonic() - start < 60  # a prediction, on a loaded machine; a loop never ends


# ---------------------------------------------------------------------------- CSV cells
def csv_rows(text: str) -> list[list[str]]:
    """The CSV as text cells (no type inference: what a spreadsheet would be handed)."""
    frame = pl.read_csv(io.StringIO(text), infer_schema=False)
    return [frame.columns, *(list(row) for row in frame.rows())]


def test_compare_csv_neutralises_formula_names_and_keeps_numbers(capsys) -> None:
    code, out, err = bundled_cli(
        capsys,
        "compare",
        "--model=@SUM(A1):gpqa_diamond=80,hle=20",
        "--model=-2+3:gpqa_diamond=30,hle=2",
        "--model=+cmd|' /C calc'!A0:gpqa_diamond=50,hle=9",
        "--targets",
        "chat",
        "--csv",
    )
    assert (code, err) == (0, "")
    rows = csv_rows(out)
    model = rows[0].index("model")
    assert {row[model] for row in rows[1:]} == {"'@SUM(A1)", "'-2+3", "'+cmd|' /C calc'!A0"}
    typed = pl.read_csv(io.StringIO(out))
    assert typed.schema["score"] == pl.Float64  # numbers are numbers still


def test_suspicious_csv_keeps_negative_numbers(capsys) -> None:
    code, out, err = bundled_cli(capsys, "suspicious", "--csv")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "model_id,benchmark_id,observed,predicted,z,source,reason"
    z = [line.split(",")[4] for line in lines[1:]]
    assert any(value.startswith("-") for value in z)  # written as numbers, sign and all
    frame = pl.read_csv(io.StringIO(out))
    assert frame.schema["z"] == pl.Float64
    assert frame["z"].min() < 0


def test_every_formula_start_is_neutralised_in_text_cells_only(capsys, monkeypatch) -> None:
    monkeypatch.setattr(output, "_is_terminal", lambda stream: False)
    frame = pl.DataFrame(
        {
            "name": ["=1+1", "+1", "-1", "@x", "\tx", "\rx", "ok", "a=b", None, "'quoted"],
            "delta": [-1.5, -2.0, 0.0, 1.0, -0.25, 3.0, -7.0, 1e-9, None, 2.0],
            "count": [-3, -2, -1, 0, 1, 2, 3, 4, None, 5],
        }
    )
    output.write_csv(frame)
    text = capsys.readouterr().out
    names = pl.read_csv(io.StringIO(text), infer_schema=False)["name"].to_list()
    assert names == ["'=1+1", "'+1", "'-1", "'@x", "'\tx", "'\rx", "ok", "a=b", None, "'quoted"]
    back = pl.read_csv(io.StringIO(text), schema_overrides={"name": pl.String})
    assert back["delta"].to_list() == frame["delta"].to_list()
    assert back["count"].to_list() == frame["count"].to_list()
    assert text.splitlines()[1] == "'=1+1,-1.5,-3"


def test_formula_column_names_are_neutralised(capsys, monkeypatch) -> None:
    monkeypatch.setattr(output, "_is_terminal", lambda stream: False)
    output.write_csv(pl.DataFrame({"=HYPERLINK(1)": [1], "model": ["-x"]}))
    assert capsys.readouterr().out.splitlines() == ["'=HYPERLINK(1),model", "1,'-x"]
