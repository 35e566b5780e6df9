"""What `track --mlflow/--wandb` logs is named so a dashboard reads it:
`predicted/<benchmark>` with `/low` and `/high`, `observed/<benchmark>` for the checkpoint's
own scores, the snapshot pin as a param. Read back with MLflow's own client from a real
sqlite store (the full runs, W&B offline included, are in test_track_export.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from predictor.cli import main
from predictor.tracking.export import ExportError, TrackedCheckpoint, log_to_mlflow
from tests.predictor.test_track_export import mlflow_client, mlflow_runs, pin
from tests.warehouse.test_track import GLOB, write_run


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, benchpress_home: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    write_run(folder)
    return folder


def test_a_checkpoint_logs_predicted_low_high_and_observed_keys() -> None:
    checkpoint = TrackedCheckpoint(
        500, {"mmlu_pro": (40.0, 35.0, 45.5)}, 0.25, observed={"gpqa_diamond": 31.2}
    )
    assert checkpoint.metrics() == {
        "predicted/mmlu_pro": 40.0,
        "predicted/mmlu_pro/low": 35.0,
        "predicted/mmlu_pro/high": 45.5,
        "observed/gpqa_diamond": 31.2,
        "p_all": 0.25,
    }


def test_track_logs_slash_keys_and_the_snapshot_pin_to_an_mlflow_sqlite_file(
    work: Path, tmp_path: Path, capsys
) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    argv = ["track", "run-k", "--from", "ckpts/step-[12]00/*.json", "--targets", "mmlu_pro"]
    code = main([*argv, "--mlflow", uri, "--json"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    payload = json.loads(out)
    client = mlflow_client(uri)
    (run,) = mlflow_runs(client, "run-k")
    assert run.data.params["benchpress.snapshot"] == pin()
    first = payload["checkpoints"][0]
    mean = first["predictions"][0]
    probes = first["probes"]
    assert set(run.data.metrics) == {
        "predicted/mmlu_pro",
        "predicted/mmlu_pro/low",
        "predicted/mmlu_pro/high",
        *(f"observed/{b}" for b in probes),
    }
    assert "observed/open_llm_gpqa" in run.data.metrics  # leaderboard_gpqa, the checkpoint's
    history = client.get_metric_history(run.info.run_id, "predicted/mmlu_pro/high")
    assert sorted((m.step, m.value) for m in history)[0] == (100, mean["high"])
    observed = client.get_metric_history(run.info.run_id, "observed/open_llm_gpqa")
    assert sorted((m.step, m.value) for m in observed)[0] == (100, probes["open_llm_gpqa"])


@pytest.mark.parametrize("uri", ["./mlruns", "file:///tmp/mlruns"])
def test_an_mlflow_file_store_is_refused_before_anything_is_written(
    work: Path, benchpress_home: Path, capsys, uri: str
) -> None:
    code = main(["track", "run-f", "--from", GLOB, "--mlflow", uri])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (
        f"benchpress: error: MLflow at {uri}: a file store cannot hold the metrics "
        "predicted/BENCHMARK beside predicted/BENCHMARK/low; give sqlite:///FILE.db (no server "
        "needed) or a tracking server's http(s):// URI\n"
    )
    assert not benchpress_home.exists() and not (work / "mlruns").exists()
    with pytest.raises(ExportError, match="a file store cannot hold"):
        log_to_mlflow(uri, "run-f", "v@sha256:0", 0.9, [], None)
