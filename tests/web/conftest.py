"""Fixtures for the web app: the app on a free loopback port (bundled snapshot, or a temp store
with hostile names), and headless Chromium driven by Selenium.

Chromium and chromedriver come from Debian (`apt-get install chromium chromium-driver`); when
they are missing the `browser` fixture installs them if it can (root with apt-get), and skips
with the reason only if it cannot. BENCHPRESS_REQUIRE_BROWSER=1 (CI) turns that skip into a
failure, so CI never passes without having run the browser tests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from predictor.snapshots.reader import list_versions, load_snapshot
from predictor.util.paths import bundled_snapshot_dir
from predictor.web.catalog import Catalog
from predictor.web.server import AppServer, make_server

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts" / "web"
BUNDLED_VERSION = list_versions(bundled_snapshot_dir())[-1]

CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMEDRIVER_PATHS = ("/usr/bin/chromedriver",)
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--window-size=1440,1000",
)

# Names a leaderboard could publish: they must show up as text, never run or become markup.
HOSTILE_MODELS = {
    "gpt-5.2": "<img src=x onerror=alert(1)>",
    "gemini-3-pro": '"><script>alert(1)</script>',
}
HOSTILE_BENCHMARKS = {"gpqa_diamond": "<b onmouseover=alert(1)>GPQA</b>"}
HOSTILE_VERSION = "2026.12.01.1"
HOLDOUT_PAIRS = 300  # recorded in the hostile version's manifest, to draw predicted vs actual


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class RunningApp:
    """An `AppServer` serving from a daemon thread; `get`/`post` return status and JSON."""

    def __init__(self, server: AppServer):
        self.server = server
        self.url = server.url.rstrip("/")
        self.thread = threading.Thread(target=server.serve_forever, daemon=True)
        self.thread.start()

    def request(
        self,
        path: str,
        data: bytes | None = None,
        headers: dict[str, str] | None = None,
        method: str | None = None,
    ) -> Response:
        request = urllib.request.Request(
            self.url + path, data=data, headers=headers or {}, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return Response(answer.status, dict(answer.headers.items()), answer.read())
        except urllib.error.HTTPError as exc:
            with exc:
                return Response(exc.code, dict(exc.headers.items()), exc.read())

    def get(self, path: str) -> Response:
        return self.request(path)

    def post(self, path: str, body: Any, content_type: str = "application/json") -> Response:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.request(path, data=data, headers={"Content-Type": content_type})

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def start_app(catalog: Catalog) -> RunningApp:
    return RunningApp(make_server("127.0.0.1", 0, catalog=catalog, quiet=True))


@pytest.fixture(scope="session")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    """The app on the snapshot bundled with the package (and nothing else: an empty home, so
    no private model of whoever runs the tests shows up)."""
    home = tmp_path_factory.mktemp("empty-home")
    running = start_app(Catalog(stores=[bundled_snapshot_dir()], home=home))
    try:
        yield running
    finally:
        running.stop()


def _republish(tables_from: Path, store: Path, staging: Path, today: date, rename: bool) -> None:
    """Copy a snapshot's tables (optionally with hostile names) into `store` as a new version."""
    from warehouse.snapshots import SnapshotTables, publish, stage

    snap = load_snapshot(tables_from)
    models, benchmarks = snap.models, snap.benchmarks
    if rename:
        models = models.with_columns(
            pl.col("model_id").replace_strict(HOSTILE_MODELS, default=pl.col("name")).alias("name")
        )
        benchmarks = benchmarks.with_columns(
            pl.col("benchmark_id")
            .replace_strict(HOSTILE_BENCHMARKS, default=pl.col("name"))
            .alias("name")
        )
    tables = SnapshotTables(snap.cells, models, benchmarks, snap.aliases, snap.conflicts, snap.fit)
    facts = {
        key: value
        for key, value in snap.manifest.items()
        if key in ("counts", "fit_params", "quality")
    }
    if rename:  # and record (actual, predicted) pairs, as a pipeline keeping them would
        facts["quality"] = {**facts["quality"], "holdout_pairs": _fitted_pairs(snap)}
    _, staged = stage(tables, staging, facts)
    publish(staged, store, today=today, elsewhere=[])  # a test store: its own names


def _fitted_pairs(snap: Any, limit: int = HOLDOUT_PAIRS) -> list[list[float]]:
    """(actual, fitted) for the first percent cells: stand-ins for held-out pairs."""
    from predictor import BenchPress

    bench = BenchPress(snap)
    fitted = bench.completer_.predict(keep_observed=False)
    actual: list[float] = []
    predicted: list[float] = []
    for (i, j), value in np.ndenumerate(bench.completer_.values_):
        scale = bench._scale[bench.fit_benchmarks_[j]]
        if np.isfinite(value) and scale == "percent" and len(actual) < limit:
            actual.append(float(value))
            predicted.append(round(float(fitted[i, j]), 4))
    return [actual, predicted]


@pytest.fixture(scope="session")
def hostile_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with two versions: the bundled one unchanged, then one with hostile names."""
    root = tmp_path_factory.mktemp("hostile")
    store, staging = root / "store", root / "staging"
    source = bundled_snapshot_dir() / BUNDLED_VERSION
    _republish(source, store, staging, date(2026, 11, 30), rename=False)
    _republish(source, store, staging, date(2026, 12, 1), rename=True)
    assert list_versions(store) == ["2026.11.30.1", HOSTILE_VERSION]
    return store


@pytest.fixture(scope="session")
def hostile_app(hostile_store: Path) -> Iterator[RunningApp]:
    running = start_app(Catalog(store=hostile_store))
    try:
        yield running
    finally:
        running.stop()


# ------------------------------------------------------------------ private models and runs
HOSTILE_NAME = "<img src=x onerror=alert(1)>"
TEAM_MODEL = "acme-7b-sft"
TEAM_SCORES = {"gpqa_diamond": 41.5, "mmlu_pro": 55.25, "humaneval": 71.0, "ifeval": 80.0}
RUN = "acme-sft-run"
RUN_STEPS = (100, 200, 300, 400, 500, 600)


def run_scores(step: int) -> dict[str, float]:
    """A checkpoint's probe scores, improving with the step (mmlu_pro from step 200 on)."""
    scores = {"gpqa_diamond": 20.0 + step / 20, "hle": 2.0 + step / 200}
    if step >= 200:
        scores["mmlu_pro"] = 30.0 + step / 25
    return scores


def tidy_rows(directory: Path, name: str, scores: dict[str, float]) -> pl.DataFrame:
    """A results frame read from a real model,benchmark,score CSV written for `scores`."""
    from predictor.results import read_results

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "results.csv"
    lines = ["model,benchmark,score", *(f"{name},{b},{v!r}" for b, v in scores.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return read_results(path)


@pytest.fixture(scope="session")
def team_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BENCHPRESS_HOME whose private store (made with `warehouse.private_models`, as
    `benchpress models add` and `benchpress track` make it) holds two models and two runs:
    `acme-sft-run` (six checkpoints) and one whose name, like a model's, is markup."""
    from warehouse.private_models import ModelImport, save_models

    root = tmp_path_factory.mktemp("team")
    home, files = root / "home", root / "files"
    imports = [
        ModelImport(TEAM_MODEL, tidy_rows(files / "m1", "acme", TEAM_SCORES)),
        ModelImport(HOSTILE_NAME, tidy_rows(files / "m2", "x", {"gpqa_diamond": 33.0})),
    ]
    for step in RUN_STEPS:
        rows = tidy_rows(files / f"step-{step}", "acme", run_scores(step))
        imports.append(ModelImport(f"{RUN}@step-{step}", rows, run=RUN, step=step))
    for step in (10, 20):
        rows = tidy_rows(files / f"h-{step}", "x", {"gpqa_diamond": 30.0 + step})
        imports.append(ModelImport(f"{HOSTILE_NAME}@{step}", rows, run=HOSTILE_NAME, step=step))
    save_models(imports, home=home)
    return home


@pytest.fixture(scope="session")
def team_app(team_home: Path) -> Iterator[RunningApp]:
    """The bundled snapshot and the team's private store (read through the
    `benchpress.private_models` entry point, as `benchpress app` reads it)."""
    running = start_app(Catalog(stores=[bundled_snapshot_dir()], home=team_home))
    try:
        yield running
    finally:
        running.stop()


# ------------------------------------------------------------------------------ the browser
def _first(paths: tuple[str, ...], env: str, name: str) -> str | None:
    for candidate in (os.environ.get(env), *paths, shutil.which(name)):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _find_chromium() -> tuple[str | None, str | None]:
    return (
        _first(CHROMIUM_PATHS, "BENCHPRESS_CHROMIUM", "chromium"),
        _first(CHROMEDRIVER_PATHS, "BENCHPRESS_CHROMEDRIVER", "chromedriver"),
    )


def _install_chromium() -> str | None:
    """Install Debian's chromium + chromium-driver; None on success, else why not."""
    if not shutil.which("apt-get"):
        return "apt-get is not available"
    if os.geteuid() != 0:
        return "not root, so apt-get cannot install them"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "update"],
        ["apt-get", "install", "-y", "chromium", "chromium-driver"],
    ):
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, env=env, timeout=900, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{' '.join(command)} failed: {exc}"
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
            return f"{' '.join(command)} exited {done.returncode}: {' '.join(tail)}"
    return None


def _unavailable(reason: str) -> None:
    message = f"browser tests need Debian's chromium and chromium-driver: {reason}"
    if os.environ.get("BENCHPRESS_REQUIRE_BROWSER") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def chromium_paths() -> tuple[str, str]:
    browser, driver = _find_chromium()
    if not (browser and driver):
        problem = _install_chromium()
        browser, driver = _find_chromium()
        if not (browser and driver):
            _unavailable(problem or "installed, but chromium/chromedriver still not found")
    assert browser and driver
    return browser, driver


@pytest.fixture(scope="session")
def browser(chromium_paths: tuple[str, str]) -> Iterator[Any]:
    """Headless Chromium; Selenium is given both paths, so Selenium Manager never runs."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("the selenium package is not installed (pip install -e '.[dev]')")
    binary, driver_path = chromium_paths
    profile = tempfile.mkdtemp(prefix="benchpress-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(30)
    # record alert() calls instead of blocking on them (CDP scripts are not subject to the CSP)
    driver.execute_cdp_cmd(
        "Page.addScriptToEvaluateOnNewDocument",
        {"source": "window.__alerts = []; window.alert = (m) => window.__alerts.push(String(m));"},
    )
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go (git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


# ------------------------------------------------------------------ browser test helpers
BROWSER_TIMEOUT = 15


def wait(driver: Any, condition: Any, message: str = "") -> Any:
    """Wait for `condition`; the page re-renders the table when the URL and the prediction
    settle, so reads of elements replaced in between are retried instead of failing."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    waiter = WebDriverWait(
        driver, BROWSER_TIMEOUT, ignored_exceptions=[StaleElementReferenceException]
    )
    return waiter.until(condition, message)


def open_page(driver: Any, url: str) -> None:
    """Load `url` with an empty console log and wait until the page says it is ready."""
    driver.get_log("browser")
    driver.get(url)
    wait(driver, lambda d: d.execute_script("return document.body.dataset.ready"), "page ready")
    state = driver.execute_script("return document.body.dataset.ready")
    assert state == "true", driver.find_element("id", "error").text


def table_rows(driver: Any) -> list[Any]:
    return driver.find_elements("css selector", "#prediction-table tbody tr[data-benchmark]")
