"""`benchpress track --mlflow URI / --wandb PROJECT`: each checkpoint's predicted targets,
P(all) and the plot logged where teams follow their runs, read back with the trackers' own
clients: a real `mlflow server` on loopback (shared by the session), an MLflow sqlite file
without a server, and a W&B offline run decoded from its transaction log with wandb's own
protobuf records. The checkpoints are the five lm-eval results files of tests/warehouse/
test_track.py (the vendored real file's structure, scores that improve with the step)."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.request
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from wandb.proto import wandb_internal_pb2

from predictor import BenchPress
from predictor.cli import main
from predictor.tracking.export import require_mlflow, wandb_mode
from tests.warehouse.test_track import GLOB, PNG_MAGIC, STEPS, write_run

TARGETS = "mmlu_pro,gpqa_diamond"
REQUIRE = "mmlu_pro>=50"
SERVER_START = 90  # seconds for `mlflow server` to answer /health on a busy machine


# ------------------------------------------------------------------------------ helpers
@dataclass(frozen=True)
class MlflowServer:
    uri: str
    artifacts: Path  # its --artifacts-destination


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    """`mlflow server` on a free loopback port with a sqlite backend and its own artifact
    folder, once per session; a server that does not come up fails the tests using it."""
    folder = tmp_path_factory.mktemp("mlflow-server")
    port = free_port()
    log = (folder / "server.log").open("wb")
    env = {
        **os.environ,
        "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",  # no job runner (huey) processes
        "MLFLOW_DISABLE_TELEMETRY": "true",
    }
    command = [
        str(Path(sys.executable).with_name("mlflow")), "server",
        "--backend-store-uri", f"sqlite:///{folder / 'mlflow.db'}",
        "--artifacts-destination", str(folder / "artifacts"),
        "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
    ]  # fmt: skip
    server = subprocess.Popen(
        command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + SERVER_START
        while not answers(f"http://127.0.0.1:{port}/health"):
            if server.poll() is not None or time.monotonic() > deadline:
                text = (folder / "server.log").read_text(errors="replace")[-3000:]
                pytest.fail(f"mlflow server did not come up (exit {server.poll()}):\n{text}")
            time.sleep(0.3)
        yield MlflowServer(f"http://127.0.0.1:{port}", folder / "artifacts")
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the server and its uvicorn worker
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, benchpress_home: Path) -> Path:
    """The folder the command runs in, holding the run's five checkpoints only."""
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # the tests' downloads
    write_run(folder)
    return folder


def track(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(["track", *argv, "--targets", TARGETS, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else {}, err


def expected_metrics(payload: dict) -> dict[str, list[tuple[int, float]]]:
    """Metric name -> (step, value) as the command printed them (--json): `predicted/B`,
    `predicted/B/low`, `predicted/B/high`, `observed/B` of each probe score, `p_all`."""
    out: dict[str, list[tuple[int, float]]] = {}
    for checkpoint in payload["checkpoints"]:
        step = checkpoint["step"]
        for p in checkpoint["predictions"]:
            for suffix, key in (("", "score"), ("/low", "low"), ("/high", "high")):
                out.setdefault(f"predicted/{p['benchmark']}{suffix}", []).append((step, p[key]))
        for benchmark, score in checkpoint["probes"].items():
            out.setdefault(f"observed/{benchmark}", []).append((step, score))
        if checkpoint["p_all"] is not None:
            out.setdefault("p_all", []).append((step, checkpoint["p_all"]))
    return out


def mlflow_client(uri: str):
    """MLflow's own client, to read back. mlflow is first imported the way the command
    imports it (its usage telemetry off), never at collection."""
    require_mlflow()
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def pin() -> str:
    bp = BenchPress.load()
    return f"{bp.version}@{bp.snapshot.digest}"


def mlflow_runs(client, run: str) -> list:
    experiment = client.get_experiment_by_name("benchpress")
    runs = client.search_runs([experiment.experiment_id])
    return [r for r in runs if r.data.tags.get("benchpress.run") == run]


def assert_logged_to_mlflow(client, payload: dict, run: str, tmp: Path) -> None:
    """The run's MLflow run holds exactly what the command printed, its snapshot pin, and
    the plot as a PNG."""
    (found,) = mlflow_runs(client, run)
    run_id = found.info.run_id
    assert run_id == payload["mlflow"]["run_id"]
    assert found.info.status == "FINISHED"
    assert found.data.tags["benchpress.snapshot"] == payload["snapshot_pin"] == pin()
    assert found.data.params["level"] == "0.9"
    assert found.data.params["benchpress.snapshot"] == pin()
    expected = expected_metrics(payload)
    assert set(found.data.metrics) == set(expected)
    for key, points in expected.items():
        history = sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))
        assert history == points, key
    assert [a.path for a in client.list_artifacts(run_id, "benchpress")] == ["benchpress/track.png"]
    local = client.download_artifacts(run_id, "benchpress/track.png", str(tmp))
    assert Path(local).read_bytes().startswith(PNG_MAGIC)


# ------------------------------------------------------------------------------- MLflow
@pytest.mark.slow
def test_track_logs_every_checkpoint_to_an_mlflow_server(
    mlflow_server: MlflowServer, work: Path, tmp_path: Path, capsys
) -> None:
    code, payload, err = track(
        capsys, "my-run", "--from", GLOB, "--require", REQUIRE, "--mlflow", mlflow_server.uri
    )
    assert (code, err) == (0, "")
    assert [c["step"] for c in payload["checkpoints"]] == list(STEPS)
    assert payload["mlflow"]["uri"] == mlflow_server.uri
    expected = expected_metrics(payload)
    # 2 targets x 3, P(all) and each checkpoint's probe scores, at every step
    probes = sorted(f"observed/{b}" for b in payload["checkpoints"][0]["probes"])
    assert sorted(k for k in expected if k.startswith("observed/")) == probes != []
    assert len(expected) == 2 * 3 + 1 + len(probes)
    assert {len(v) for v in expected.values()} == {5}
    client = mlflow_client(mlflow_server.uri)
    assert_logged_to_mlflow(client, payload, "my-run", tmp_path / "download")
    # the server stored the plot in its own artifact folder
    assert [p.name for p in mlflow_server.artifacts.rglob("*.png")] == ["track.png"]
    assert sorted(p.name for p in work.iterdir()) == ["ckpts"]

    # tracking the run again replaces its MLflow run: one run, the new checkpoints only
    code, again, err = track(
        capsys, "my-run", "--from", "ckpts/step-[1-3]00/*.json", "--mlflow", mlflow_server.uri
    )
    assert (code, err) == (0, "")
    (found,) = mlflow_runs(client, "my-run")
    assert found.info.run_id == again["mlflow"]["run_id"] != payload["mlflow"]["run_id"]
    history = client.get_metric_history(found.info.run_id, "predicted/mmlu_pro")
    assert sorted(m.step for m in history) == [100, 200, 300]
    assert "p_all" not in found.data.metrics  # no --require this time


def test_track_logs_to_an_mlflow_sqlite_file_without_a_server(
    work: Path, tmp_path: Path, capsys
) -> None:
    store = tmp_path / "tracking"
    store.mkdir()
    uri = f"sqlite:///{store / 'mlflow.db'}"
    run = "run 'a' \"b\""  # both quotes: MLflow's filter strings cannot escape them
    code = main(["track", run, "--from", GLOB, "--mlflow", uri])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    client = mlflow_client(uri)
    (first,) = mlflow_runs(client, run)
    assert out.splitlines()[-1] == (
        f"mlflow: run {first.info.run_id} in experiment benchpress at {uri}"
    )
    # again, with criteria and an SVG plot: the MLflow run is replaced, the tracker gets a PNG
    code, payload, err = track(
        capsys, run, "--from", GLOB, "--require", REQUIRE, "--mlflow", uri, "--plot", "p.svg"
    )
    assert (code, err) == (0, "")
    assert_logged_to_mlflow(client, payload, run, tmp_path / "download")
    # the artifacts are beside the database; the working folder holds the inputs and --plot
    assert sorted(p.name for p in store.iterdir()) == ["artifacts", "mlflow.db"]
    assert len(list((store / "artifacts").rglob("track.png"))) == 2  # the replaced run's too
    assert sorted(p.name for p in work.iterdir()) == ["ckpts", "p.svg"]
    assert Path("p.svg").read_bytes().startswith(b"<?xml")


def test_an_unreachable_mlflow_server_is_one_error_line_after_the_checkpoints_are_stored(
    work: Path, benchpress_home: Path, capsys
) -> None:
    uri = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    started = time.monotonic()
    code = main(["track", "my-run", "--from", GLOB, "--targets", "mmlu_pro", "--mlflow", uri])
    out, err = capsys.readouterr()
    assert code == 1
    assert time.monotonic() - started < 120  # a few retries (loaded machine), not MLflow's 4 min
    assert out.startswith("run my-run: 5 checkpoints stored as private models")
    assert "mlflow:" not in out
    assert err.startswith(f"benchpress: error: MLflow at {uri}: ")
    assert err.endswith("(the checkpoints are stored; track again to log them)\n")
    assert len(err.splitlines()) == 1
    assert main(["models", "list", "--run", "my-run"]) == 0
    assert "my-run@step-500" in capsys.readouterr().out


# ------------------------------------------------------------------------ Weights & Biases
BLOCK = 32768  # LevelDB log format: 32 KiB blocks of chunks
CHUNK_HEADER = struct.Struct("<IHB")  # CRC-32 of type + data, data length, chunk type
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def wandb_records(path: Path) -> Iterator[wandb_internal_pb2.Record]:
    """The records of a W&B transaction log (`run-ID.wandb`): W&B's 7-byte file header, then
    LevelDB's log format holding one protobuf `Record` each. wandb 0.31 writes it from its
    Go core and ships no Python reader for it, so the framing is read here."""
    data = path.read_bytes()
    assert data[:7] == struct.pack("<4sHB", b":W&B", 0xBEE1, 0)
    pos, parts = 7, []
    while pos + CHUNK_HEADER.size <= len(data):
        left = BLOCK - pos % BLOCK
        if left < CHUNK_HEADER.size:  # a block's tail too short for a header is padding
            pos += left
            continue
        crc, length, kind = CHUNK_HEADER.unpack_from(data, pos)
        if (crc, length, kind) == (0, 0, 0):
            pos += left
            continue
        body = data[pos + CHUNK_HEADER.size : pos + CHUNK_HEADER.size + length]
        assert zlib.crc32(bytes([kind]) + body) == crc
        pos += CHUNK_HEADER.size + length
        parts.append(body)
        if kind in (FULL, LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(b"".join(parts))
            parts = []
            yield record
    assert parts == []


def test_track_logs_an_offline_wandb_run_under_benchpress_home(
    work: Path, benchpress_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    home = tmp_path / "user-home"  # no account: no netrc, no key
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("WANDB_MODE", "offline")
    for name in ("WANDB_API_KEY", "WANDB_DIR", "WANDB_CACHE_DIR", "NETRC"):
        monkeypatch.delenv(name, raising=False)
    code, payload, err = track(
        capsys, "my-run", "--from", GLOB, "--require", REQUIRE, "--wandb", "my-project"
    )
    assert (code, err) == (0, "")
    assert payload["wandb"]["mode"] == "offline"
    folder = Path(payload["wandb"]["folder"])
    assert folder.parent == benchpress_home / "wandb"
    assert folder.name.startswith("offline-run-")
    assert not list(home.rglob("*wandb*"))  # W&B's files and logs stay in BENCHPRESS_HOME
    assert sorted(p.name for p in work.iterdir()) == ["ckpts"]

    (log,) = folder.glob("run-*.wandb")
    history: dict[int, dict[str, object]] = {}
    config: dict[str, object] = {}
    runs = []
    for record in wandb_records(log):
        kind = record.WhichOneof("record_type")
        if kind == "history":
            row = history.setdefault(record.history.step.num, {})
            row.update(
                {"/".join(i.nested_key): json.loads(i.value_json) for i in record.history.item}
            )
        elif kind in ("run", "config"):
            updates = record.run.config.update if kind == "run" else record.config.update
            config.update({u.key: json.loads(u.value_json) for u in updates})
            if kind == "run":
                runs.append(record.run)
    assert [(r.project, r.display_name) for r in runs] == [("my-project", "my-run")]
    assert config["benchpress.snapshot"] == payload["snapshot_pin"] == pin()
    assert config["level"] == 0.9
    assert sorted(history) == list(STEPS)
    for key, points in expected_metrics(payload).items():
        assert [(step, history[step][key]) for step, _ in points] == points, key
    # the plot: an image logged with the last checkpoint, kept in the run's media folder
    image = history[STEPS[-1]]
    assert image["benchpress/track/format"] == "png"
    assert (folder / "files" / image["benchpress/track/path"]).read_bytes().startswith(PNG_MAGIC)


def test_without_an_api_key_wandb_stays_offline(tmp_path: Path) -> None:
    netrc = tmp_path / "netrc"
    assert wandb_mode({"NETRC": str(netrc)}) == "offline"
    assert wandb_mode({"NETRC": str(netrc), "WANDB_API_KEY": "k" * 40}) == "online"
    assert wandb_mode({"NETRC": str(netrc), "WANDB_MODE": "disabled"}) == "disabled"
    netrc.write_text("machine api.wandb.ai\n  login user\n  password " + "k" * 40 + "\n")
    netrc.chmod(0o600)
    assert wandb_mode({"NETRC": str(netrc)}) == "online"  # after `wandb login`
    assert wandb_mode({"NETRC": str(netrc), "WANDB_BASE_URL": "https://wandb.example"}) == (
        "offline"
    )


# ------------------------------------------------------------------------------ refusals
@pytest.mark.parametrize(
    ("tracker", "value"), [("mlflow", "sqlite:///m.db"), ("wandb", "my-project")]
)
def test_a_missing_extra_is_one_line_before_anything_is_written(
    work: Path, benchpress_home: Path, monkeypatch: pytest.MonkeyPatch, capsys, tracker, value
) -> None:
    monkeypatch.setitem(sys.modules, tracker, None)  # as if not installed: import fails
    message = f"--{tracker} needs the {tracker} extra: pip install 'benchpress-llm[{tracker}]'"
    code = main(["track", "my-run", "--from", GLOB, f"--{tracker}", value])
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", f"benchpress: error: {message}\n")
    assert not benchpress_home.exists()


def test_an_sqlite_file_in_a_missing_folder_is_refused_before_anything_is_written(
    work: Path, benchpress_home: Path, capsys
) -> None:
    code = main(["track", "my-run", "--from", GLOB, "--mlflow", "sqlite:///nowhere/m.db"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert "nowhere does not exist" in err
    assert not benchpress_home.exists()
