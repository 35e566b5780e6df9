"""The private store on real DuckDB files in a temp BENCHPRESS_HOME: what is stored (every
results-frame row with its provenance), one transaction per import, hostile names kept as
data, the provider the predictor discovers, private models as reference models, and that
nothing of it reaches the pipeline's warehouse or a snapshot."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from predictor import BenchPress
from predictor.cli import main
from predictor.private import private_models, private_runs
from predictor.results.frame import result_frame
from warehouse import private_models as store

HOSTILE = ["'; DROP TABLE models; --", "evil\x1b[2J\x1b]0;title\x07", 'x"); DELETE FROM cells; --']


def rows(model: str, scores: dict[str, float], file: str = "a.json") -> pl.DataFrame:
    """A results frame as `read_results` gives it: mapped rows plus one unmapped task."""
    mapped = [
        {
            "model": model,
            "benchmark_id": benchmark,
            "score": score,
            "stderr": 1.5,
            "status": "mapped",
            "task": f"task_{benchmark}",
            "metric": "acc,none",
            "raw_score": score / 100,
            "unit": "fraction",
            "n": 448,
            "n_shot": 0,
            "group": "leaderboard",
            "note": "another harness",
            "format": "lm_eval",
            "tool": "lm-evaluation-harness",
            "tool_version": "0.4.9.2",
            "evaluated_at": "2026-01-21T03:44:18Z",
            "file": file,
            "file_sha256": "ab" * 32,
        }
        for benchmark, score in scores.items()
    ]
    unmapped = {**mapped[0], "benchmark_id": None, "score": None, "status": "unmapped"}
    unmapped.update(task="my_private_task", note=None)
    return result_frame([*mapped, unmapped])


def test_no_store_means_no_models_and_nothing_created(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert store.load_private_models(home) == []
    assert store.list_models(home).height == 0
    assert store.model_cells("x", home).height == 0
    assert store.remove_models(["x"], home=home) == []
    assert not home.exists()


def test_cells_keep_every_row_with_its_provenance(tmp_path: Path) -> None:
    frame = rows("org/model-7b", {"gpqa_diamond": 41.0, "mmlu_pro": 55.5})
    report = store.save_models(
        [store.ModelImport("mine", frame, snapshot_version="2026.11.30.2")], home=tmp_path
    )
    assert report == store.SaveReport(["mine"], [])
    cells = store.model_cells("mine", tmp_path)
    expected = (
        frame.rename({"model": "source_model"})
        .with_columns(pl.lit("mine").alias("model"))
        .select(store.CELL_COLUMNS)
    )
    assert cells.sort("task").equals(expected.sort("task"))
    assert cells["status"].to_list() == ["mapped", "mapped", "unmapped"]  # mapped rows first
    listed = store.list_models(tmp_path).row(0, named=True)
    assert {k: v for k, v in listed.items() if k != "added_at"} == {
        "name": "mine",
        "run": None,
        "step": None,
        "benchmarks": 2,
        "files": 1,
        "snapshot_version": "2026.11.30.2",
        "source_models": "org/model-7b",
    }
    assert store.model_files("mine", tmp_path).to_dicts() == [
        {
            "file": "a.json",
            "file_sha256": "ab" * 32,
            "format": "lm_eval",
            "tool": "lm-evaluation-harness",
            "tool_version": "0.4.9.2",
        }
    ]
    (loaded,) = store.load_private_models(tmp_path)
    assert loaded["scores"] == {"gpqa_diamond": 41.0, "mmlu_pro": 55.5}
    assert (loaded["name"], loaded["run"], loaded["step"]) == ("mine", None, None)
    assert loaded["added_at"] == listed["added_at"]


def test_hostile_names_are_stored_as_data(tmp_path: Path) -> None:
    imports = [store.ModelImport(n, rows(n, {"hle": 5.0 + k})) for k, n in enumerate(HOSTILE)]
    store.save_models(imports, home=tmp_path)
    assert sorted(store.list_models(tmp_path)["name"]) == sorted(HOSTILE)
    for k, name in enumerate(HOSTILE):
        cells = store.model_cells(name, tmp_path)
        assert cells["source_model"].unique().to_list() == [name]
        assert cells.filter(pl.col("status") == "mapped")["score"].to_list() == [5.0 + k]
    assert store.remove_models([HOSTILE[0]], home=tmp_path) == [HOSTILE[0]]
    assert sorted(store.list_models(tmp_path)["name"]) == sorted(HOSTILE[1:])
    con = duckdb.connect(str(store.store_path(tmp_path)), read_only=True)
    try:
        query = "SELECT table_name FROM information_schema.tables"
        tables = {r[0] for r in con.execute(query).fetchall()}
        assert tables == {"store_schema", "models", "model_files", "cells"}
        assert con.execute("SELECT count(*) FROM cells").fetchone()[0] == 4  # 2 models x 2 rows
    finally:
        con.close()


def test_an_import_is_one_transaction(tmp_path: Path) -> None:
    store.save_models([store.ModelImport("taken", rows("a", {"hle": 3.0}))], home=tmp_path)
    before = store.model_cells("taken", tmp_path)
    batch = [
        store.ModelImport("fresh", rows("b", {"hle": 4.0})),
        store.ModelImport("taken", rows("c", {"hle": 9.0})),
    ]
    with pytest.raises(store.NameTakenError, match="'taken' exists already; pass --replace"):
        store.save_models(batch, home=tmp_path)
    assert store.list_models(tmp_path)["name"].to_list() == ["taken"]  # not even "fresh"
    assert store.model_cells("taken", tmp_path).equals(before)
    report = store.save_models(batch, replace=True, home=tmp_path)
    assert report.replaced == ["taken"]
    assert store.model_cells("taken", tmp_path)["source_model"].unique().to_list() == ["c"]


def test_replacing_a_run_drops_its_old_checkpoints(tmp_path: Path) -> None:
    first = [
        store.ModelImport(f"r@step-{s}", rows("m", {"hle": s / 10}), "r", s) for s in (1, 2, 3)
    ]
    store.save_models(first, replace_run="r", home=tmp_path)
    store.save_models([store.ModelImport("other", rows("m", {"hle": 1.0}))], home=tmp_path)
    again = [store.ModelImport(f"r@step-{s}", rows("m", {"hle": s / 5}), "r", s) for s in (2, 4)]
    report = store.save_models(again, replace_run="r", home=tmp_path)
    assert report.replaced == ["r@step-1", "r@step-2", "r@step-3"]
    listed = store.list_models(tmp_path)
    assert listed.select("name", "run", "step").rows() == [
        ("other", None, None),
        ("r@step-2", "r", 2),
        ("r@step-4", "r", 4),
    ]
    assert store.list_models(tmp_path, run="r")["name"].to_list() == ["r@step-2", "r@step-4"]
    assert store.remove_models(run="r", home=tmp_path) == ["r@step-2", "r@step-4"]
    assert store.list_models(tmp_path)["name"].to_list() == ["other"]


def test_a_store_of_a_newer_schema_or_another_file_is_refused(tmp_path: Path) -> None:
    store.save_models([store.ModelImport("m", rows("m", {"hle": 1.0}))], home=tmp_path)
    con = duckdb.connect(str(store.store_path(tmp_path)))
    con.execute("INSERT INTO store_schema VALUES (99, now())")
    con.close()
    with pytest.raises(store.PrivateStoreError, match="schema version 99, newer than"):
        store.load_private_models(tmp_path)
    with pytest.raises(store.PrivateStoreError, match="schema version 99"):
        store.save_models([store.ModelImport("n", rows("n", {"hle": 1.0}))], home=tmp_path)
    other = tmp_path / "other"
    other.joinpath(store.STORE_DIR).mkdir(parents=True)
    con = duckdb.connect(str(store.store_path(other)))
    con.execute("CREATE TABLE unrelated (x INTEGER)")
    con.close()
    with pytest.raises(store.PrivateStoreError, match="not a benchpress private store"):
        store.list_models(other)


def test_names_are_checked() -> None:
    for bad, message in (
        ("", "must not be empty"),
        ("  ", "must not be empty"),
        (" padded", "starts or ends with blanks"),
        ("x" * 201, "longer than 200"),
    ):
        with pytest.raises(ValueError, match=message):
            store.check_name(bad)


def test_the_predictor_finds_the_store_through_its_entry_point(benchpress_home: Path) -> None:
    assert private_models() == []
    assert not benchpress_home.exists()
    imports = [
        store.ModelImport("solo", rows("m", {"gpqa_diamond": 50.0})),
        store.ModelImport("r@step-20", rows("m", {"hle": 6.0}), "r", 20),
        store.ModelImport("r@step-10", rows("m", {"hle": 4.0}), "r", 10),
    ]
    store.save_models(imports, home=benchpress_home)
    found = private_models()
    assert [(m.name, m.run, m.step) for m in found] == [
        ("solo", None, None),
        ("r@step-10", "r", 10),
        ("r@step-20", "r", 20),
    ]
    assert dict(found[0].scores) == {"gpqa_diamond": 50.0}
    assert [m.name for m in private_runs()["r"]] == ["r@step-10", "r@step-20"]


@pytest.fixture(scope="module")
def bp() -> BenchPress:
    return BenchPress.load()


def test_a_private_model_is_a_reference_model_by_name(benchpress_home: Path, bp) -> None:
    stored = {"gpqa_diamond": 62.0, "mmlu_pro": 71.0}
    store.save_models([store.ModelImport("team-7b", rows("m", stored))], home=benchpress_home)
    probes = {"gpqa_diamond": 55.0}
    targets = ["mmlu_pro", "gpqa_diamond", "hle"]
    result = bp.compare_with_known_models(probes, ["team-7b", "gpt-4o"], targets=targets)
    frame = result.to_frame()
    mine = {
        r["benchmark"]: r for r in frame.filter(pl.col("reference_model") == "team-7b").to_dicts()
    }
    assert mine["mmlu_pro"]["reference_score"] == 71.0
    assert mine["mmlu_pro"]["reference_observed"] is True
    assert mine["gpqa_diamond"]["reference_score"] == 62.0
    # folded in from its stored scores with their stored standard errors (1.5 each)
    folded = bp.predict({b: (v, 1.5) for b, v in stored.items()}, targets=["hle"])["hle"]
    assert mine["hle"]["reference_score"] == pytest.approx(folded.score)
    assert folded.score != pytest.approx(bp.predict(stored, targets=["hle"])["hle"].score)
    assert mine["hle"]["reference_observed"] is False
    # P(new better) on a predicted cell uses the private model's interval too
    assert 0.0 < mine["hle"]["p_new_better"] < 1.0
    summary = result.summary()
    assert summary.startswith("new model among 2 reference models")
    assert "vs team-7b (71.0, observed)" in summary
    assert f"vs team-7b ({folded.score:.1f}, predicted)" in summary
    # the CLI's `compare --reference` takes the private name as well
    code = main(
        ["compare", "--model", "gpqa_diamond=55", "--reference", "team-7b", "--targets", "hle"]
    )
    assert code == 0


def test_an_unknown_reference_is_still_an_error(benchpress_home: Path, bp) -> None:
    from predictor.names.resolve import UnknownNameError

    store.save_models([store.ModelImport("team-7b", rows("m", {"hle": 3.0}))], home=benchpress_home)
    with pytest.raises(UnknownNameError, match="unknown model 'team-8b'"):
        bp.compare_with_known_models({"gpqa_diamond": 55.0}, ["team-8b"], targets=["hle"])
    unusable = rows("m", {"hle": 3.0}).with_columns(pl.lit("not_in_any_fit").alias("benchmark_id"))
    store.save_models([store.ModelImport("odd", unusable)], home=benchpress_home)
    with pytest.raises(ValueError, match="'odd' has no score on a benchmark fitted in snapshot"):
        bp.compare_with_known_models({"gpqa_diamond": 55.0}, ["odd"], targets=["hle"])


def test_private_models_never_reach_the_warehouse_or_a_snapshot(
    benchpress_home: Path, tmp_path: Path, bp, capsys
) -> None:
    results = tmp_path / "mine.csv"
    results.write_text("model,benchmark,score\nm,gpqa_diamond,48\nm,mmlu_pro,61\n")
    assert main(["models", "add", "team-secret", "--from", str(results)]) == 0
    capsys.readouterr()
    # the only file written is the private store: no warehouse.duckdb, no snapshot store
    written = sorted(p.relative_to(benchpress_home).as_posix() for p in benchpress_home.rglob("*"))
    assert [p for p in written if not p.startswith("private/models.duckdb")] == ["private"]
    reloaded = BenchPress.load()
    assert reloaded.version == bp.version
    assert "team-secret" not in reloaded.models
    assert "team-secret" not in reloaded.snapshot.cells["model_id"].to_list()
    assert main(["snapshots", "list", "--json"]) == 0
    assert "team-secret" not in capsys.readouterr().out
