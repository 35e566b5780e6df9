"""The whole refresh job with one source down and one source publishing hostile names.

Two in-process refreshes over the loopback mirror: a good one (the session's, tests/conftest.py),
then one where LiveBench answers 503 and LMArena's text arena adds models named with SQL,
HTML/JS, control characters, RTL overrides, path traversal and 5,000 characters. The run must
report every source, keep LiveBench stale with its last good data, publish (or be stopped by a
blocking check, never crash), store the hostile strings verbatim as inert data, leave every
table in place with only the new payload added, and publish only snapshots that load and answer.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT
from pipelines.run import RefreshOutcome, run_refresh
from pipelines.sources import SOURCES
from predictor import BenchPress, UnknownNameError
from predictor.snapshots.reader import list_versions
from predictor.util.paths import snapshot_store_dir, warehouse_path
from tests.faults.faults import HOSTILE_NAMES
from tests.support.mirror_server import MirrorServer, serve_status
from tests.support.shared_home import copy_home
from warehouse.status import source_status

pytestmark = pytest.mark.slow
LIVEBENCH_TABLE = "/livebench.ai/table_2026_01_08.csv"
LMARENA_TEXT = "/raw.githubusercontent.com/fboulnois/llm-leaderboard-csv/main/csv/lmarena_text.csv"
HOSTILE = [*HOSTILE_NAMES.values(), "../../../etc/passwd", "ollama/../../x", "/abs/path"]
MAX_ID_CHARS = 200  # a model id longer than this cannot be a file name on common filesystems


def with_hostile_models(data: bytes) -> bytes:
    """The text arena CSV with one more row per hostile name (the real rows unchanged)."""
    text = data.decode("utf-8")
    header = next(csv.reader(io.StringIO(text)))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n" if "\r\n" in text else "\n")
    for i, name in enumerate(HOSTILE):
        cell = {"rank": "999", "model": name, "arena_score": str(1100 + i), "95_pct_ci": "+9/-9"}
        writer.writerow([cell.get(column, "1") for column in header])
    return (data if data.endswith(b"\n") else data + b"\n") + out.getvalue().encode()


@dataclass
class TwoRuns:
    home: Path
    first: RefreshOutcome
    second: RefreshOutcome
    tables_before: list[str]
    payloads_before: set[tuple[str, str, str]]


def read(home: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(warehouse_path(home)), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def tables(home: Path) -> list[str]:
    return sorted(r[0] for r in read(home, "SELECT table_name FROM duckdb_tables()"))


def payloads(home: Path) -> set[tuple[str, str, str]]:
    return set(read(home, "SELECT source, url, sha256 FROM raw_payloads"))


@pytest.fixture(scope="module")
def two_runs(refreshed_template, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoRuns]:
    # the good refresh: the session's mirror refresh of the recorded payloads (tests/conftest.py,
    # the full fit), in a copy of its home; the second refresh fits the same way
    home = copy_home(refreshed_template.home, tmp_path_factory.mktemp("full-job") / "home")
    first = refreshed_template.outcome
    server = MirrorServer(DEFAULT_REPLAY_ROOT).start()
    try:
        with pytest.MonkeyPatch.context() as env:
            env.setenv("BENCHPRESS_HOME", str(home))
            env.setenv("BENCHPRESS_HTTP_MIRROR", server.base_url)
            env.delenv("BENCHPRESS_MIN_CELLS_PER_MODEL", raising=False)
            before = tables(home), payloads(home)
            server.faults[LIVEBENCH_TABLE] = serve_status(503, b"down", {"Retry-After": "0"})
            hostile = with_hostile_models((server.root / LMARENA_TEXT[1:]).read_bytes())
            server.faults[LMARENA_TEXT] = serve_status(200, hostile)
            second = run_refresh(mode="mirror", home=home)
        yield TwoRuns(home, first, second, *before)
    finally:
        server.stop()


def test_every_source_is_reported_and_the_down_one_stays_stale(two_runs) -> None:
    first, second = two_runs.first, two_runs.second
    assert first.success, first
    assert set(second.source_outcomes) == set(SOURCES)  # no source drops out silently
    assert second.source_outcomes["livebench"].startswith("FETCH FAILED, keeping last good data")
    assert second.source_outcomes["lmarena"] == "new"
    assert not second.failed_steps, second.failed_steps  # nothing crashed
    # published, or a blocking check stopped it naming why; never a half state
    assert second.success or second.failed_checks, second
    con = duckdb.connect(str(warehouse_path(two_runs.home)), read_only=True)
    try:
        status = source_status(con)
        livebench_cells = con.execute(
            "SELECT count(*) FROM matrix_cells WHERE source = 'livebench'"
        ).fetchone()[0]
    finally:
        con.close()
    assert status["livebench"]["status"] == "stale" and "HTTP 503" in status["livebench"]["error"]
    assert status["livebench"]["age_days"] is not None
    assert livebench_cells > 0  # its last good data is still in the matrix


def test_hostile_names_are_stored_verbatim_and_inert(two_runs) -> None:
    home = two_runs.home
    assert tables(home) == two_runs.tables_before  # nothing dropped or created by a name
    after = payloads(home)
    assert two_runs.payloads_before <= after  # every archived payload is still there
    (added,) = after - two_runs.payloads_before  # and only the new LMArena CSV was added
    assert added[0] == "lmarena"
    for name in HOSTILE:
        stored = read(
            home,
            "SELECT s.model_key, s.model_name FROM source_scores s JOIN parses p USING (parse_id)"
            " WHERE p.status = 'ok' AND s.source = 'lmarena' AND s.model_key = ?",
            [name],
        )
        assert stored == [(name, name)], name[:40]  # byte for byte, found by a bound parameter
    # the published snapshot (new or previous) loads, verifies and answers
    store = snapshot_store_dir(home)
    latest = BenchPress.load(list_versions(store)[-1], store=store)
    assert latest.predict({"gpqa_diamond": 70.0})["gpqa_diamond"].observed


def _unsafe(model_id: str) -> str | None:
    """Why a model id could not safely become a file name or URL path segment, if it can't."""
    if len(model_id) > MAX_ID_CHARS:
        return f"{len(model_id)} characters"
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in model_id):
        return "control or format characters"
    if model_id.startswith("/") or ".." in model_id.split("/") or "\\" in model_id:
        return "a path that climbs or is absolute"
    if not re.fullmatch(r"[\w.+@/=-]+", model_id):
        return "characters outside [A-Za-z0-9_.+@/=-]"
    return None


def test_hostile_names_never_become_published_models(two_runs) -> None:
    rows = read(
        two_runs.home,
        "SELECT model_key, model_id, resolution FROM normalized_scores"
        " WHERE source = 'lmarena' AND list_contains(?, model_key)",
        [HOSTILE],
    )
    placed = {key: model_id for key, model_id, resolution in rows if resolution == "resolved"}
    assert not placed, placed
    store = snapshot_store_dir(two_runs.home)
    latest = BenchPress.load(list_versions(store)[-1], store=store)
    for name in HOSTILE:
        with pytest.raises(UnknownNameError, match="unknown model"):
            latest.resolve_model(name)


def test_published_model_ids_are_safe_path_segments(two_runs) -> None:
    store = snapshot_store_dir(two_runs.home)
    latest = BenchPress.load(list_versions(store)[-1], store=store)
    unsafe = {m: why for m in latest.models if (why := _unsafe(m))}
    assert not unsafe, {m[:60]: why for m, why in unsafe.items()}
