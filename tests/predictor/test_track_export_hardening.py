"""Hardening of `benchpress track --mlflow / --wandb` (issue 38, items 10 and 11):

- Two `track --step N` of one run at once, as two real processes started together on a new
  MLflow sqlite database: both exit 0 and every checkpoint reaches MLflow (a lock per run in
  BENCHPRESS_HOME, held from reading the stored checkpoints through the export; one per
  sqlite database while it is written, its tables created). A track that waits too long for
  its run's lock fails in one line with nothing stored.
- A tracker that cannot be written is one error line naming it, within seconds, with the
  results printed and the checkpoints stored: an MLflow database in a folder nobody can
  create files in, a database path that is a folder or not a database, W&B's client refusing
  its settings; a server that echoes the credentials it was sent does not get them printed.

Real MLflow (sqlite store, its REST client against a loopback server) and W&B clients; the
checkpoints are the lm-eval results files of tests/warehouse/test_track.py."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from predictor.cli import main
from predictor.tracking.export import ExportError, TrackedCheckpoint, log_to_mlflow, require_mlflow
from predictor.util import locking
from tests.warehouse.test_track import write_run
from warehouse import private_models

REPO_ROOT = Path(__file__).resolve().parents[2]
FAILS_WITHIN = 60.0  # seconds, on a busy 2-core machine: MLflow's retries took 109-191 s
RACE_TIMEOUT = 300  # seconds for both racing processes (a new MLflow database's tables)
STORED = "(the checkpoints are stored; track again to log them)"
CHECKPOINT = TrackedCheckpoint(1, {"mmlu_pro": (40.0, 35.0, 45.0)})

# A racer: imports what `track` needs, says it is ready, waits for the go, then runs the
# command, so the two start the command within milliseconds of each other.
RACER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path

    from predictor.cli import main
    from predictor.tracking.export import require_mlflow
    import warehouse.cli_private.commands

    require_mlflow()
    import mlflow.tracking

    ready, go = Path(sys.argv[1]), Path(sys.argv[2])
    ready.touch()
    deadline = time.monotonic() + 120
    while not go.exists():
        if time.monotonic() > deadline:
            sys.exit("racer: no go within 120 s")
        time.sleep(0.005)
    sys.exit(main(sys.argv[3:]))
    """
)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, benchpress_home: Path) -> Path:
    """The folder the commands run in: checkpoints 1, 10 and 11 of a run."""
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    write_run(folder, steps=(1, 10, 11))
    return folder


def stored_steps(home: Path, run: str) -> list[int]:
    return sorted(private_models.list_models(home, run=run)["step"].to_list())


def mlflow_steps(uri: str, run: str) -> list[list[int]]:
    """mmlu_pro's logged steps of each MLflow run tracked as `run`, read with MLflow's client."""
    require_mlflow()
    from mlflow.tracking import MlflowClient

    with warnings.catch_warnings():  # SQLAlchemy's deprecations, from MLflow's store
        warnings.simplefilter("ignore")
        client = MlflowClient(tracking_uri=uri)
        experiment = client.get_experiment_by_name("benchpress")
    runs = [
        r
        for r in client.search_runs([experiment.experiment_id])
        if r.data.tags.get("benchpress.run") == run
    ]
    assert all(r.info.status == "FINISHED" for r in runs)
    return [
        sorted(m.step for m in client.get_metric_history(r.info.run_id, "predicted/mmlu_pro"))
        for r in runs
    ]


def track_step(step: int, *more: str) -> list[str]:
    return ["track", "r", "--from", f"ckpts/step-{step}/*.json", "--step", str(step),
            "--targets", "mmlu_pro", *more]  # fmt: skip


# ------------------------------------------------------------------ two tracks at once
@pytest.mark.slow
def test_two_concurrent_tracks_of_a_run_log_every_checkpoint_to_a_new_mlflow_database(
    work: Path, benchpress_home: Path, tmp_path: Path
) -> None:
    uri = f"sqlite:///{tmp_path / 'ml.db'}"  # a new database: both would create its tables
    go = tmp_path / "go"
    path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    racers = []
    for step in (10, 11):
        argv = [str(tmp_path / f"{step}.ready"), str(go), *track_step(step, "--mlflow", uri)]
        command = [sys.executable, "-c", RACER, *argv]
        with (
            (tmp_path / f"{step}.out").open("wb") as out,
            (tmp_path / f"{step}.err").open("wb") as err,
        ):
            racer = subprocess.Popen(command, cwd=work, env=env, stdout=out, stderr=err)
        racers.append(racer)
    try:
        deadline = time.monotonic() + 120
        while not all((tmp_path / f"{step}.ready").exists() for step in (10, 11)):
            assert all(r.poll() is None for r in racers), "a racer died before the start"
            assert time.monotonic() < deadline, "the racers did not get ready"
            time.sleep(0.01)
        go.touch()
        codes = [r.wait(timeout=RACE_TIMEOUT) for r in racers]
    finally:
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
                racer.wait()
    errors = [(tmp_path / f"{step}.err").read_text(errors="replace") for step in (10, 11)]
    assert codes == [0, 0], errors
    assert errors == ["", ""]
    for step in (10, 11):
        out = (tmp_path / f"{step}.out").read_text()
        assert out.splitlines()[-1].startswith("mlflow: run "), out
    assert stored_steps(benchpress_home, "r") == [10, 11]
    # one MLflow run for the tracked run (the later track replaced the earlier's), holding
    # both checkpoints: the later track read the store after the earlier one had written it
    assert mlflow_steps(uri, "r") == [[10, 11]]


def test_a_track_that_waits_too_long_for_its_run_fails_in_one_line_with_nothing_stored(
    work: Path, benchpress_home: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv(locking.WAIT_ENV, "0.5")
    with locking.held(locking.lock_file("track", "r"), "held by the test"):
        started = time.monotonic()
        code = main(track_step(1))
        waited = time.monotonic() - started
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err.startswith(
        f"benchpress: error: run r is being tracked by another process; nothing was stored "
        f"(its lock: pid {os.getpid()} holds it since 20"
    )
    assert err.endswith("; waited 0.5 s, BENCHPRESS_TRACK_LOCK_WAIT=SECONDS waits longer)\n")
    assert len(err.splitlines()) == 1
    assert waited < FAILS_WITHIN
    assert not private_models.store_path(benchpress_home).exists()
    # the lock is the run's: another run is tracked meanwhile, and r once it is free
    with locking.held(locking.lock_file("track", "r"), "held by the test"):
        assert main(["track", "other", *track_step(1)[2:]]) == 0
    assert main(track_step(1)) == 0
    assert stored_steps(benchpress_home, "r") == stored_steps(benchpress_home, "other") == [1]


# ------------------------------------------------------------- a tracker that cannot be written
@pytest.fixture
def unwritable_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder in which no file can be created: one without write permission, or, when the
    tests run as root (which writes there all the same), the root of /proc."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        for candidate in (folder, Path("/proc")):
            try:
                (candidate / ".probe").touch()
            except OSError:
                yield candidate
                return
            (candidate / ".probe").unlink()
        pytest.skip("no folder here refuses to create a file")
    finally:
        folder.chmod(0o700)


def test_an_mlflow_database_in_an_unwritable_folder_is_one_error_line_within_seconds(
    work: Path, benchpress_home: Path, unwritable_folder: Path, capsys
) -> None:
    uri = f"sqlite:///{unwritable_folder / 'ml.db'}"
    started = time.monotonic()
    code = main(track_step(1, "--mlflow", uri))
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == 1  # an export that failed, after the checkpoints were stored
    assert elapsed < FAILS_WITHIN  # not MLflow's minutes of retries
    assert out.startswith("run r: checkpoint 1 stored as private model r@step-1")
    assert "step  probes  mmlu_pro" in out  # the results table
    assert "mlflow:" not in out
    assert err.startswith(
        f"benchpress: error: MLflow at {uri}: cannot write in the folder {unwritable_folder} ("
    )
    assert err.endswith(f") {STORED}\n")
    assert len(err.splitlines()) == 1
    assert stored_steps(benchpress_home, "r") == [1]
    assert not (unwritable_folder / "ml.db").exists()

    code = main(track_step(1, "--mlflow", uri, "--json"))  # tracked again: --json says it too
    out, err = capsys.readouterr()
    payload = json.loads(out)
    assert code == 1 and len(err.splitlines()) == 1
    assert payload["mlflow"]["error"].startswith(f"MLflow at {uri}: cannot write in the folder")
    assert [c["step"] for c in payload["checkpoints"]] == [1]


@pytest.mark.parametrize("kind", ["folder", "not a database", "under a file"])
def test_an_mlflow_database_path_mlflow_cannot_open_is_an_export_error_at_once(
    tmp_path: Path, benchpress_home: Path, kind: str
) -> None:
    database = tmp_path / "store" / "ml.db"
    database.parent.mkdir()
    if kind == "folder":
        database.mkdir()
        reason = f"{database} is not a file"
    elif kind == "not a database":
        database.write_text("a notebook, not a database\n" * 10)
        reason = f"{database} is not an SQLite database"
    else:
        database = tmp_path / "afile" / "ml.db"
        database.parent.write_text("a file")
        reason = f"{database.parent} is not a folder"
    uri = f"sqlite:///{database}"
    started = time.monotonic()
    with pytest.raises(ExportError) as raised:
        log_to_mlflow(uri, "r", "v@sha256:0", 0.9, [CHECKPOINT], None)
    assert time.monotonic() - started < FAILS_WITHIN
    assert str(raised.value) == f"MLflow at {uri}: {reason}"
    if kind == "under a file":
        assert database.parent.read_text() == "a file"
    else:  # nothing written beside it, and the file as it was
        assert [p.name for p in database.parent.iterdir()] == ["ml.db"]
    if kind == "not a database":
        assert database.read_text() == "a notebook, not a database\n" * 10


@pytest.fixture
def echoing_server() -> Iterator[str]:
    """A loopback 'tracking server' refusing every request with a body that echoes the
    request's headers, credentials included (as a misconfigured proxy may)."""

    class Echo(BaseHTTPRequestHandler):
        def _refuse(self) -> None:
            message = f"refused: {dict(self.headers)}"
            body = json.dumps({"error_code": "PERMISSION_DENIED", "message": message}).encode()
            self.send_response(403)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _refuse

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("where", ["uri", "environment"])
def test_credentials_an_mlflow_server_echoes_are_not_in_the_export_error(
    echoing_server: str, benchpress_home: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    for name in ("MLFLOW_TRACKING_TOKEN", "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    if where == "uri":
        uri = f"http://alice:pw-s3cret@{echoing_server}"
        secrets = ["pw-s3cret", base64.b64encode(b"alice:pw-s3cret").decode()]
    else:
        uri = f"http://{echoing_server}"
        monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "tok-s3cret-0123")
        secrets = ["tok-s3cret-0123"]
    with pytest.raises(ExportError) as raised:
        log_to_mlflow(uri, "r", "v@sha256:0", 0.9, [CHECKPOINT], None)
    message = str(raised.value)
    assert message.startswith(f"MLflow at http://{echoing_server}: PERMISSION_DENIED: refused: ")
    assert "Authorization" in message and "***" in message  # the echo, without the secret
    assert not [secret for secret in secrets if secret in message]
    assert "\n" not in message


def test_a_wandb_client_error_is_one_export_error_line_after_the_results(
    work: Path, benchpress_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no account, nothing in the user's folders
    monkeypatch.setenv("WANDB_MODE", "ofline")  # a typo: W&B's settings refuse it
    code = main(track_step(1, "--wandb", "my-project"))
    out, err = capsys.readouterr()
    assert code == 1
    assert out.startswith("run r: checkpoint 1 stored as private model r@step-1")
    assert "step  probes  mmlu_pro" in out and "wandb:" not in out
    assert err.startswith("benchpress: error: W&B project my-project: ")
    assert "ofline" in err and err.endswith(f"{STORED}\n")
    assert len(err.splitlines()) == 1
    assert stored_steps(benchpress_home, "r") == [1]
