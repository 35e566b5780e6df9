"""`make dagster` (`python -m pipelines.ui`): the UI and daemon from DAGSTER_HOME with our
instance settings, without Dagster's `dagster dev` supersession notice or its "dagster.yaml will
not be used" warning, and no process left behind when it is stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.pipeline.test_dagster_ui import free_port, graphql

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def test_make_dagster_serves_the_location_with_our_instance_settings(tmp_path) -> None:
    home = tmp_path / "home"
    port = free_port()
    env = {**os.environ, "BENCHPRESS_HOME": str(home)}
    env.pop("DAGSTER_HOME", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "pipelines.ui", "--port", str(port)],
        env=env,
        cwd=REPO,  # where `make dagster` runs, beside the repo's dagster.yaml
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # about 20 s; far more on a loaded machine
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stdout.read()[-2000:]
            try:
                with urllib.request.urlopen(f"{base}/server_info", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("the Dagster UI did not answer within 300 s")
        data = graphql(
            base,
            "{ instance { info daemonHealth { allDaemonStatuses { daemonType } } } "
            "repositoriesOrError { ... on RepositoryConnection { nodes { location { name } } } } }",
        )
        locations = {n["location"]["name"] for n in data["repositoriesOrError"]["nodes"]}
        assert locations == {"benchpress"}
        info = data["instance"]["info"]
        assert str(home / "dagster") in info and "run_monitoring" in info
        children = psutil.Process(process.pid).children(recursive=True)
        assert any("dagster-daemon" in " ".join(c.cmdline()) for c in children)
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=60)[0]
    assert process.returncode == 0
    assert "superseded" not in output and "will not be used" not in output
    assert f"Dagster instance: {home / 'dagster'}" in output
    psutil.wait_procs(children, timeout=60)  # the daemon and webserver, as they exit
    assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
