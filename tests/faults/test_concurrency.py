"""Two refreshes at once, and readers during a refresh.

- A second `benchpress refresh` in the same BENCHPRESS_HOME fails at once with exit code 3 and a
  message naming the running refresh's pid and start time; the warehouse stays intact.
- Readers never block the writer: while a refresh writes DuckDB and publishes a new version,
  `benchpress app` (its own process) and a loaded `BenchPress` keep answering from published
  snapshots, never open the warehouse file, and see the new version once it is published; the
  previous version keeps giving the same answers.
- The predictor package never imports DuckDB (nor Dagster, nor the pipeline).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

import warehouse.db
from predictor.snapshots.reader import verify
from predictor.util.paths import snapshot_store_dir
from tests.faults.refreshing import EXIT_LOCKED, duckdb_intact

pytestmark = pytest.mark.slow
MAX_READ_SECONDS = 20.0  # one read on a loaded 2-core machine; a refresh takes far longer


def test_second_refresh_fails_clearly_while_one_runs(uninterrupted) -> None:
    first, second = uninterrupted.refresh, uninterrupted.rival
    assert uninterrupted.exit_code == 0, first.tail()
    assert second is not None and uninterrupted.rival_exit_code == EXIT_LOCKED, second.tail()
    message = second.stderr
    assert "another refresh is running" in message
    assert f"pid {first.pid}" in message and "running since 20" in message
    assert "--wait" in message  # says how to wait instead
    assert uninterrupted.rival_ended_first  # it did not wait for the first one
    assert not any(step for step, _ in second.events())  # it ran no step at all
    counts = duckdb_intact(uninterrupted.home)
    assert counts["raw_payloads"] > 0 and counts["matrix_cells"] > 0
    assert len(uninterrupted.end.versions) == 2  # the previous one and one new version


def test_readers_keep_reading_while_a_refresh_publishes(uninterrupted) -> None:
    run, readers, app = uninterrupted, uninterrupted.readers, uninterrupted.app
    assert run.exit_code == 0, run.refresh.tail()
    previous, new = run.end.versions
    assert previous == run.previous and new != previous  # a new version was published

    # reads went on through the whole refresh, every one answered, none waited on the writer
    during = [s for s in readers.samples if s.at < run.refresh.started + run.refresh.seconds]
    kinds = {s.what for s in during}
    assert kinds == {"app versions", "app predict", "BenchPress"}, kinds
    assert len(during) >= 3 * 3
    failed = [s for s in readers.samples if not s.ok]
    assert not failed, failed[:5]
    slowest = max(readers.samples, key=lambda s: s.seconds)
    assert slowest.seconds < MAX_READ_SECONDS, slowest
    assert readers.warehouse_use == [], readers.warehouse_use  # never the live DuckDB file

    # the app lists the new version as latest (its listing is cached for a few seconds)
    deadline = time.monotonic() + 120
    while True:
        status, body, _ = app.get("/api/versions")
        if status == 200 and body["latest"] == new or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert status == 200 and body["latest"] == new, body
    assert [v["version"] for v in body["versions"]] == [new, previous]
    status, answer, _ = app.get(f"/api/predict?version={new}&scores=gpqa_diamond%3D70")
    assert status == 200 and answer["version"] == new

    # the previous version is unchanged: same files, same answers
    verify(snapshot_store_dir(run.home) / previous)
    assert readers._app_prediction()[1] == readers.expected_app
    assert readers._bench_prediction() == readers.expected_bench


def test_predictor_never_imports_duckdb() -> None:
    """Import every module of the package, load the bundled snapshot, predict, serve a request."""
    code = textwrap.dedent(
        """
        import importlib, pkgutil, sys, threading, urllib.request
        import predictor
        for module in pkgutil.walk_packages(predictor.__path__, "predictor."):
            importlib.import_module(module.name)
        from predictor import BenchPress
        from predictor.cli import build_parser
        from predictor.web.server import make_server
        BenchPress.load().predict({"gpqa_diamond": 70})
        server = make_server("127.0.0.1", 0, quiet=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        with urllib.request.urlopen(server.url + "api/versions", timeout=60) as answer:
            assert answer.status == 200
        server.shutdown()

        def loaded(*packages):
            return sorted(n for n in sys.modules if n.split(".")[0] in packages)

        leaked = loaded("duckdb", "dagster", "pipelines", "warehouse")
        assert not leaked, leaked
        build_parser()  # the `benchpress` command, with the pipeline's commands registered
        leaked = loaded("duckdb", "dagster")
        assert not leaked, leaked
        print("clean")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "clean", done.stderr[-2000:]


READER = textwrap.dedent(
    """
    import sys, time
    import duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)  # e.g. `benchpress warehouse stats`
    print("reading", flush=True)
    time.sleep(float(sys.argv[2]))
    open(sys.argv[3], "w").close()  # about to let go
    con.close()
    """
)


def test_a_short_read_of_the_live_warehouse_does_not_fail_the_writer(tmp_path) -> None:
    path = tmp_path / "warehouse.duckdb"
    with warehouse.db.connect(path):
        pass  # created and migrated
    letting_go = tmp_path / "reader-letting-go"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(path), "1.5", str(letting_go)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
        with warehouse.db.connect(path) as con:  # what every asset does to write
            assert con.execute("SELECT count(*) FROM raw_payloads").fetchone() == (0,)
            assert letting_go.exists()  # it waited for the reader, then wrote
    finally:
        reader.kill()
        reader.wait()


def test_private_store_help_works_without_duckdb() -> None:
    """`models --help` and `track --help` only add options: where DuckDB is not installed (the
    predictor alone) they print their help; the handlers that need it load when run."""
    code = textwrap.dedent(
        """
        import sys
        sys.modules["duckdb"] = None  # as if not installed: importing it raises ImportError
        from predictor.cli import main
        for argv in (["models", "--help"], ["models", "list", "--help"], ["track", "--help"]):
            try:
                main(argv)
            except SystemExit as exc:
                assert exc.code == 0, (argv, exc.code)
        print("helped")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.rstrip().endswith("helped")
    assert "usage: benchpress track" in done.stdout and "--release-date" in done.stdout
