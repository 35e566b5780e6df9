"""The Dagster webserver loads the code location and shows the whole lineage (GraphQL API)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from pipelines.settings import DRIFT_CHECKS
from pipelines.sources import SOURCES

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
QUERY = """{
  assetNodes {
    assetKey { path } groupName dependencyKeys { path }
    assetChecksOrError { ... on AssetChecks { checks { name blocking } } }
  }
  repositoriesOrError { ... on RepositoryConnection { nodes {
    location { name } schedules { name cronSchedule pipelineName } jobs { name }
  } } }
}"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def webserver(tmp_path_factory):
    home = tmp_path_factory.mktemp("dagster_ui")
    dagster_home = home / "dagster"
    dagster_home.mkdir()
    shutil.copyfile(REPO / "dagster.yaml", dagster_home / "dagster.yaml")
    port = free_port()
    env = {**os.environ, "DAGSTER_HOME": str(dagster_home), "BENCHPRESS_HOME": str(home)}
    command = [
        str(Path(sys.executable).parent / "dagster-webserver"),
        "-m",
        "pipelines.definitions",
        "-h",
        "127.0.0.1",
        "-p",
        str(port),
    ]
    process = subprocess.Popen(
        command, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300  # about 20 s; far more on a loaded machine
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"webserver exited: {process.stderr.read().decode()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base}/server_info", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError("webserver did not answer within 300 s")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def graphql(base: str, query: str) -> dict:
    request = urllib.request.Request(
        f"{base}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        doc = json.load(answer)
    assert "errors" not in doc, doc.get("errors")
    return doc["data"]


def test_lineage_checks_and_schedule_are_served(webserver) -> None:
    data = graphql(webserver, QUERY)
    nodes = {"/".join(n["assetKey"]["path"]): n for n in data["assetNodes"]}
    assert len(nodes) == 2 * len(SOURCES) + 4
    deps = {name: {"/".join(d["path"]) for d in n["dependencyKeys"]} for name, n in nodes.items()}
    assert deps["published_snapshot"] == {"factorization"}
    assert deps["factorization"] == {"score_matrix"}
    assert deps["normalized_scores"] == {f"{s}_source_scores" for s in SOURCES}
    assert all(deps[f"{s}_source_scores"] == {f"{s}_payloads"} for s in SOURCES)
    assert nodes["score_matrix"]["groupName"] == "matrix"
    checks = {
        c["name"]: c["blocking"] for c in nodes["factorization"]["assetChecksOrError"]["checks"]
    }
    assert checks == {"rank2_structure": True, **{name: True for name in DRIFT_CHECKS}}
    (repository,) = data["repositoriesOrError"]["nodes"]
    assert repository["location"]["name"] == "pipelines.definitions"
    assert {"name": "daily_refresh", "cronSchedule": "17 4 * * *", "pipelineName": "refresh"} in (
        repository["schedules"]
    )
    assert "refresh" in {job["name"] for job in repository["jobs"]}
