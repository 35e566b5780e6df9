"""`benchpress models add|list|show|remove` through the real CLI (`predictor.cli.main`), real
results files and a real DuckDB store in a temp BENCHPRESS_HOME: what users see, exit codes,
and that a refused command writes nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl
import pytest

from predictor import BenchPress
from predictor.cli import main
from warehouse import private_models as store

ESC = "\x1b[2J"
SQL = "'; DROP TABLE models; --"


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def csv_file(path: Path, rows: list[tuple[str, str, float]], stderr: bool = False) -> Path:
    head = "model,benchmark,score" + (",stderr" if stderr else "")
    lines = [head] + [",".join(str(v) for v in r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return csv_file(
        tmp_path / "team.csv",
        [("team/m-7b", "GPQA Diamond", 44.5, 1.2), ("team/m-7b", "mmlu_pro", 61.0, 0.8)],
        stderr=True,
    )


def store_state(home: Path) -> tuple[list, list]:
    models = store.list_models(home).drop("added_at").rows()
    cells = [store.model_cells(n, home).rows() for n in store.list_models(home)["name"]]
    return models, cells


def test_add_stores_the_scores_and_says_what_it_stored(
    benchpress_home: Path, results: Path, capsys, bp
) -> None:
    code, out, err = run(capsys, "models", "add", "team-7b", "--from", str(results))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "read 1 file (tidy) for team/m-7b: 2 scores used: gpqa_diamond=44.5, mmlu_pro=61",
        f"stored private model team-7b: 2 scores on snapshot {bp.version} benchmarks, "
        "1 file(s), 2 rows with provenance",
    ]
    cells = store.model_cells("team-7b", benchpress_home)
    assert cells.select("benchmark_id", "score", "stderr", "task", "file").rows() == [
        ("gpqa_diamond", 44.5, 1.2, "GPQA Diamond", str(results)),
        ("mmlu_pro", 61.0, 0.8, "mmlu_pro", str(results)),
    ]
    import hashlib

    sha = hashlib.sha256(results.read_bytes()).hexdigest()
    assert cells["file_sha256"].unique().to_list() == [sha]
    assert cells["source_model"].unique().to_list() == ["team/m-7b"]


def test_list_show_and_remove(benchpress_home: Path, results: Path, capsys, bp) -> None:
    assert run(capsys, "models", "list")[1] == (
        "no private models yet; add one: benchpress models add NAME --from FILES\n"
    )
    assert run(capsys, "models", "add", "team-7b", "--from", str(results))[0] == 0
    code, out, _ = run(capsys, "models", "list")
    added = store.list_models(benchpress_home)["added_at"][0]
    assert code == 0
    assert [line.split() for line in out.splitlines()] == [
        ["name", "run", "step", "benchmarks", "files", "added_at", "snapshot_version"],
        ["team-7b", "2", "1", added, bp.version],
    ]
    listed = json.loads(run(capsys, "models", "list", "--json")[1])
    assert [(m["name"], m["benchmarks"], m["source_models"]) for m in listed] == [
        ("team-7b", 2, "team/m-7b")
    ]
    as_csv = pl.read_csv(io.StringIO(run(capsys, "models", "list", "--csv")[1]))
    assert as_csv["name"].to_list() == ["team-7b"]

    code, out, _ = run(capsys, "models", "show", "team-7b", "--targets", "hle,mmlu_pro")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == (
        f"private model team-7b: added {added}, benchmark ids of snapshot {bp.version}, "
        "read from team/m-7b in 1 file(s)"
    )
    assert lines[1].startswith(f"  {results}  sha256 ")
    assert lines[3].split() == [
        "benchmark_id", "score", "stderr", "status", "task", "metric", "n", "n_shot", "tool",
        "tool_version", "evaluated_at", "file", "note",
    ]  # fmt: skip
    assert lines[4].split() == ["gpqa_diamond", "44.5", "1.20", "mapped", "GPQA", "Diamond",
                                "score", "tidy", str(results)]  # fmt: skip
    predicted = bp.predict({"gpqa_diamond": 44.5, "mmlu_pro": 61.0}, targets=["hle", "mmlu_pro"])
    hle = predicted["hle"]
    assert lines[-3].split() == ["benchmark", "score", "low", "high", "kind"]
    assert lines[-2].split() == ["hle", f"{hle.score:.1f}", f"{hle.low:.1f}", f"{hle.high:.1f}",
                                 "predicted"]  # fmt: skip
    assert lines[-1].split() == ["mmlu_pro", "61.0", "61.0", "61.0", "observed"]
    shown = json.loads(run(capsys, "models", "show", "team-7b", "--json")[1])
    assert [c["benchmark_id"] for c in shown["cells"]] == ["gpqa_diamond", "mmlu_pro"]
    assert shown["files"][0]["format"] == "tidy"

    code, out, _ = run(capsys, "models", "remove", "team-7b")
    assert (code, out) == (0, "removed 1 private model(s) team-7b\n")
    code, _, err = run(capsys, "models", "remove", "team-7b")
    assert code == 2
    assert "no private model named team-7b" in err
    code, _, err = run(capsys, "models", "show", "team-7c")
    assert code == 2


def test_a_public_name_or_a_taken_name_is_refused(
    benchpress_home: Path, results: Path, capsys, bp
) -> None:
    code, out, err = run(capsys, "models", "add", "gpt-4o", "--from", str(results))
    assert (code, out) == (2, "")
    assert err == (
        "benchpress: error: gpt-4o names the snapshot model gpt-4o (snapshot "
        f"{bp.version}); a private model needs a name of its own\n"
    )
    code, _, err = run(capsys, "models", "add", "GPT-4o", "--from", str(results))
    assert code == 2
    assert "names the snapshot model gpt-4o" in err
    assert not benchpress_home.exists()  # nothing written, not even an empty store

    assert run(capsys, "models", "add", "mine", "--from", str(results))[0] == 0
    before = store_state(benchpress_home)
    other = csv_file(results.parent / "other.csv", [("x", "hle", 9.0)])
    code, _, err = run(capsys, "models", "add", "mine", "--from", str(other))
    assert code == 2
    assert "a private model named mine exists already; pass --replace" in err
    assert store_state(benchpress_home) == before
    assert run(capsys, "models", "add", "mine", "--from", str(other), "--replace")[0] == 0
    assert store.load_private_models(benchpress_home)[0]["scores"] == {"hle": 9.0}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("model,benchmark,score\nM,hle,140\n", "lies outside its range 0 to 100"),
        ("model,benchmark,score\nM,hle,4\nM,HLE,5\n", "hle is scored twice"),
        ("model,benchmark,score\nM,GPQA Diamond,40\n", "gpqa_diamond is scored twice"),
        ("model,benchmark,score\nM,hle,oops\n", "score must be a number"),
        ("model,bench,score\nM,hle,4\n", "the CSV header lacks benchmark"),
        ("model,benchmark,score\nM,no_such_benchmark_x,4\n", "unknown benchmark"),
        ("model,benchmark,score\nM,hle,4\nother,hle,5\n", "the files hold 2 models"),
        ("model,benchmark,score\nM,hle,4\nM,hle", "line 3: score is empty"),  # truncated
    ],
)
def test_bad_input_exits_2_naming_the_file_and_writes_nothing(
    benchpress_home: Path, results: Path, capsys, content: str, message: str
) -> None:
    assert run(capsys, "models", "add", "kept", "--from", str(results))[0] == 0
    before = store_state(benchpress_home)
    bad = results.parent / "bad.csv"
    bad.write_text(content.replace("M,", "team/m-7b,"))
    code, out, err = run(capsys, "models", "add", "new", "--from", str(results), "--from", str(bad))
    assert (code, out) == (2, "")
    assert err.startswith("benchpress: error: ")
    assert message in err
    assert str(bad) in err or "files hold" in err
    assert len(err.splitlines()) == 1
    assert store_state(benchpress_home) == before


def test_several_models_name_their_files_and_model_picks_one(
    benchpress_home: Path, tmp_path: Path, capsys
) -> None:
    a = csv_file(tmp_path / "a.csv", [("model-a", "hle", 4.0)])
    b = csv_file(tmp_path / "b.csv", [("model-b", "hle", 7.0)])
    code, _, err = run(capsys, "models", "add", "x", "--from", str(a), "--from", str(b))
    assert code == 2
    assert f"the files hold 2 models: model-a in {a}; model-b in {b}" in err
    code, _, _ = run(capsys, "models", "add", "x", "--from", str(a), "--from", str(b),
                     "--model", "model-b")  # fmt: skip
    assert code == 0
    assert store.load_private_models(benchpress_home)[0]["scores"] == {"hle": 7.0}


def test_map_extends_the_tables_and_unmapped_tasks_are_listed(
    benchpress_home: Path, tmp_path: Path, capsys
) -> None:
    f = csv_file(tmp_path / "t.csv", [("m", "in_house_reasoning", 31.0), ("m", "hle", 4.0)])
    code, out, _ = run(capsys, "models", "add", "x", "--from", str(f),
                       "--map", "in_house_reasoning=gpqa_diamond")  # fmt: skip
    assert code == 0
    assert out.splitlines()[0] == "read 1 file (tidy) for m: 2 scores used: gpqa_diamond=31, hle=4"
    cells = store.model_cells("x", benchpress_home)
    assert cells.select("benchmark_id", "task", "note").rows() == [
        ("gpqa_diamond", "in_house_reasoning", "mapped by --map"),
        ("hle", "hle", None),
    ]


def test_hostile_names_are_stored_and_printed_inert(
    benchpress_home: Path, tmp_path: Path, capsys
) -> None:
    name = f"team{ESC}{SQL}"
    f = csv_file(tmp_path / "t.csv", [(f"org/{ESC}model", "hle", 4.0)])
    code, out, err = run(capsys, "models", "add", name, "--from", str(f))
    assert (code, err) == (0, "")
    assert "\x1b" not in out
    assert "team\\x1b[2J'; DROP TABLE models; --" in out
    assert "for org/\\x1b[2Jmodel:" in out
    assert store.list_models(benchpress_home)["name"].to_list() == [name]
    assert store.model_cells(name, benchpress_home)["source_model"].to_list() == [f"org/{ESC}model"]
    for argv in (("models", "list"), ("models", "show", name)):
        code, out, _ = run(capsys, *argv)
        assert code == 0
        assert "\x1b" not in out
        assert "team\\x1b[2J'; DROP TABLE models; --" in out
    code, out, _ = run(capsys, "models", "remove", name)
    assert code == 0
    assert "\x1b" not in out
    assert store.list_models(benchpress_home).height == 0


def test_usage_errors(benchpress_home: Path, results: Path, capsys) -> None:
    code, _, err = run(capsys, "models", "add", "x")
    assert code == 2
    assert "models add needs --from PATH" in err
    code, _, err = run(capsys, "models", "add", " x", "--from", str(results))
    assert code == 2
    assert "starts or ends with blanks" in err
    code, _, err = run(capsys, "models", "remove")
    assert code == 2
    assert "give the model NAME to remove, or --run RUN" in err
    code, _, err = run(capsys, "models", "remove", "--run", "nope")
    assert code == 2
    assert "no private models in run nope" in err
    code, _, err = run(capsys, "models", "add", "x", "--from", str(results.parent / "missing.csv"))
    assert code == 2
    assert "no such file or folder" in err
    assert not benchpress_home.exists()
