"""The cluster recipe (deploy/): the container image definition, the Helm values for the official
Dagster chart and the K8sRunLauncher instance settings.

No Kubernetes cluster, Helm or Docker daemon can run here, so nothing is deployed or built: the
files are loaded and checked against what does run here: Dagster's own instance config schema
and dagster-k8s's K8sRunLauncher schema, the code location module they name (imported), the
`dagster code-server start` command line (parsed by Dagster's own CLI), and the repo's
instance settings they must agree with. The Helm values are checked against the key names of the
chart's values schema for Dagster 1.13 (the chart itself is not installed here)."""

from __future__ import annotations

import importlib
import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import dagster as dg
import yaml
from dagster._cli.code_server import code_server_cli
from dagster._config import validate_config
from dagster._core.instance.config import dagster_instance_config
from dagster._serdes.config_class import class_from_code_pointer
from dagster_postgres import DagsterPostgresStorage

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
LOCAL = yaml.safe_load((REPO / "dagster.yaml").read_text())
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
MODULE = PYPROJECT["tool"]["dagster"]["module_name"]  # the code location `make dagster` loads


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of deploy/Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    steps = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            instruction, _, rest = line.partition(" ")
            steps.append((instruction.upper(), rest.strip()))
    return steps


def only(steps: list[tuple[str, str]], instruction: str) -> list[str]:
    return [rest for name, rest in steps if name == instruction]


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def test_the_image_installs_the_pinned_team_extra_and_serves_the_code_location() -> None:
    steps = dockerfile()
    assert steps[0][0] == "FROM" and re.fullmatch(r"python:3\.1[1-9]-slim(-\w+)?", steps[0][1])
    installs = [run for run in only(steps, "RUN") if "pip install" in run]
    assert len(installs) == 1
    words = shlex.split(installs[0])
    assert words[words.index("-c") + 1] == "constraints.txt"  # the pins the suite runs on
    assert ".[pipeline,team]" in words
    copied = {source for arg in only(steps, "COPY") for source in shlex.split(arg)[:-1]}
    assert {"pyproject.toml", "constraints.txt", "pipelines", "warehouse", "predictor"} <= copied
    users = only(steps, "USER")
    assert users and users[-1].split(":")[0] not in ("root", "0")  # the server never runs as root
    assert "BENCHPRESS_HOME=/var/lib/benchpress" in " ".join(only(steps, "ENV"))

    command = json.loads(only(steps, "CMD")[-1])  # exec form: no shell between
    assert command[:3] == ["dagster", "code-server", "start"]
    assert command[command.index("--module-name") + 1] == MODULE
    # Dagster's own CLI accepts the arguments (parsed, not run)
    context = code_server_cli.commands["start"].make_context("start", command[3:])
    assert context.params["module_name"] == MODULE and context.params["port"] == 3030
    definitions = importlib.import_module(MODULE)
    assert isinstance(definitions.defs, dg.Definitions)
    assert definitions.defs.resolve_job_def("refresh") is not None


def test_the_k8s_instance_validates_with_dagsters_schemas() -> None:
    config, _ = dagster_instance_config(str(DEPLOY), "dagster-k8s.yaml")
    launcher = config["run_launcher"]
    cls = class_from_code_pointer(launcher["module"], launcher["class"])
    assert cls.__name__ == "K8sRunLauncher" and cls.__module__.startswith("dagster_k8s")
    checked = validate_config(cls.config_type(), launcher["config"])
    assert checked.success, checked.errors
    checked = validate_config(DagsterPostgresStorage.config_type(), config["storage"]["postgres"])
    assert checked.success, checked.errors
    # same pool, run queue and monitoring as the local default
    for section in ("concurrency", "run_monitoring", "telemetry"):
        assert config[section] == LOCAL[section], section
    assert "BENCHPRESS_HOME=/var/lib/benchpress" in launcher["config"]["env_vars"]
    text = (DEPLOY / "dagster-k8s.yaml").read_text()
    assert "password:\n        env: BENCHPRESS_PG_PASSWORD" in text


def helm() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "helm" / "values.yaml").read_text())


def test_helm_values_deploy_our_image_and_module() -> None:
    values = helm()
    user = values["dagster-user-deployments"]
    assert user["enabled"] is True
    (deployment,) = user["deployments"]
    assert set(deployment["image"]) == {"repository", "tag", "pullPolicy"}
    assert deployment["image"]["repository"].endswith("/benchpress-llm")  # deploy/Dockerfile's
    args = deployment["codeServerArgs"]
    assert args[args.index("--module-name") + 1] == MODULE
    assert deployment["port"] == 3030  # the port the image's CMD serves on
    assert deployment["podSecurityContext"]["runAsUser"] == 10001  # the image's USER
    assert deployment["includeConfigInLaunchedRuns"] == {"enabled": True}


def test_helm_values_configure_postgres_from_a_secret() -> None:
    values = helm()
    postgres = values["postgresql"]
    assert postgres["enabled"] is False and postgres["postgresqlHost"]
    assert set(postgres) >= {"postgresqlHost", "postgresqlUsername", "postgresqlDatabase"}
    assert postgres["postgresqlPassword"] == ""  # never in the values file
    assert values["generatePostgresqlPasswordSecret"] is False
    assert values["global"]["postgresqlSecretName"]  # the chart reads the password from it
    deployment = values["dagster-user-deployments"]["deployments"][0]
    secrets = {s["name"] for s in deployment["envSecrets"]}
    launcher = values["runLauncher"]["config"]["k8sRunLauncher"]
    assert {s["name"] for s in launcher["envSecrets"]} == secrets == {"benchpress-env"}


def test_helm_values_launch_runs_on_kubernetes_with_our_pool_and_monitoring() -> None:
    values = helm()
    launcher = values["runLauncher"]
    assert launcher["type"] == "K8sRunLauncher"
    fields = set(class_from_code_pointer("dagster_k8s", "K8sRunLauncher").config_type().keys())
    for key in launcher["config"]["k8sRunLauncher"]:  # the chart maps camelCase to these
        assert snake(key) in fields, key
    mounts = launcher["config"]["k8sRunLauncher"]["volumeMounts"]
    assert [m["mountPath"] for m in mounts] == ["/var/lib/benchpress"]  # the image's home

    daemon = values["dagsterDaemon"]
    assert daemon["enabled"] is True
    assert daemon["runCoordinator"]["type"] == "QueuedRunCoordinator"
    # Dagster refuses a run-queue limit both here and in concurrency.runs
    assert "maxConcurrentRuns" not in json.dumps(daemon["runCoordinator"])
    monitoring = {snake(k): v for k, v in daemon["runMonitoring"].items()}
    assert monitoring == LOCAL["run_monitoring"]

    concurrency = values["concurrency"]
    assert concurrency["enabled"] is True
    assert concurrency["pools"] == {"defaultLimit": LOCAL["concurrency"]["pools"]["default_limit"]}
    assert concurrency["runs"] == {
        "maxConcurrentRuns": LOCAL["concurrency"]["runs"]["max_concurrent_runs"]
    }
    assert values["telemetry"] == LOCAL["telemetry"]
