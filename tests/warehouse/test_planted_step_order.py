"""Checkpoints are ordered by their step NUMBER everywhere a run is shown: with steps 200 and
1000 (different digit counts, so ordering the text "1000" < "200" would show step 1000 first),
`benchpress track`, `benchpress models list` and the web app's `/api/runs/<run>` list step 200
before step 1000.

Real lm-evaluation-harness results files (the structure of the vendored real file), the real
CLI, a real DuckDB private store in a temp BENCHPRESS_HOME and the real web app on loopback."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import polars as pl
import pytest

from predictor.cli import main
from predictor.util.paths import bundled_snapshot_dir
from predictor.web.catalog import Catalog
from tests.warehouse.test_track import write_run
from tests.web.conftest import start_app
from warehouse import private_models as store

STEPS = (200, 1000)
NAMES = ["run-a@step-200", "run-a@step-1000"]
GLOB = "ckpts/step-*/results_*.json"  # the shell's order: step-1000 before step-200


@pytest.fixture
def tracked(benchpress_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_run(tmp_path, steps=STEPS)
    code = main(["track", "run-a", "--from", GLOB, "--targets", "mmlu_pro"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    return out


def run(capsys, *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), argv
    return out


def test_track_prints_step_200_before_step_1000(tracked: str, capsys) -> None:
    lines = tracked.splitlines()
    assert lines[0] == "run run-a: 2 checkpoints stored as private models run-a@step-200 ..."
    table = [re.split(r"\s{2,}", line.strip()) for line in lines[2:5]]
    assert table[0] == ["step", "probes", "mmlu_pro"]
    assert [row[0] for row in table[1:]] == ["200", "1000"]

    payload = json.loads(run(capsys, "track", "run-a", "--from", GLOB, "--json"))
    assert [(c["step"], c["model"]) for c in payload["checkpoints"]] == list(
        zip(STEPS, NAMES, strict=True)
    )
    assert sorted(payload["replaced"]) == sorted(NAMES)  # a set of names, whatever the order

    lines = run(capsys, "track", "run-a", "--from", GLOB, "--targets", "mmlu_pro", "--csv")
    rows = pl.read_csv(io.StringIO(lines))
    assert rows.select("step", "model").rows() == list(zip(STEPS, NAMES, strict=True))


def test_models_list_shows_step_200_before_step_1000(
    tracked: str, benchpress_home: Path, capsys
) -> None:
    assert store.list_models(benchpress_home).select("name", "step").rows() == list(
        zip(NAMES, STEPS, strict=True)
    )
    for argv in (("models", "list"), ("models", "list", "--run", "run-a")):
        lines = run(capsys, *argv).splitlines()
        assert lines[0].split()[:3] == ["name", "run", "step"]
        assert [line.split()[:3] for line in lines[1:]] == [
            ["run-a@step-200", "run-a", "200"],
            ["run-a@step-1000", "run-a", "1000"],
        ]
    listed = json.loads(run(capsys, "models", "list", "--json"))
    assert [(m["name"], m["step"]) for m in listed] == list(zip(NAMES, STEPS, strict=True))
    as_csv = pl.read_csv(io.StringIO(run(capsys, "models", "list", "--csv")))
    assert as_csv.select("name", "step").rows() == list(zip(NAMES, STEPS, strict=True))


def test_the_web_app_draws_step_200_before_step_1000(tracked: str, benchpress_home: Path) -> None:
    app = start_app(Catalog(stores=[bundled_snapshot_dir()], home=benchpress_home))
    try:
        listing = app.get("/api/runs")
        run_answer = app.get("/api/runs/run-a?targets=mmlu_pro")
    finally:
        app.stop()
    assert listing.status == 200
    assert listing.json()["runs"] == [
        {"run": "run-a", "checkpoints": 2, "first_step": 200, "last_step": 1000}
    ]
    assert run_answer.status == 200, run_answer.body
    body = run_answer.json()
    assert body["total_checkpoints"] == 2
    assert [(c["step"], c["name"]) for c in body["checkpoints"]] == list(
        zip(STEPS, NAMES, strict=True)
    )
    # and each checkpoint carries its own scores, not the other's
    first, last = body["checkpoints"]
    assert first["observed"].keys() == last["observed"].keys() != set()
    assert all(first["observed"][b] < last["observed"][b] for b in first["observed"])
