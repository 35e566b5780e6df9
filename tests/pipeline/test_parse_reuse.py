"""What a parse makes current, with real DuckDB warehouses and fetches over loopback HTTP.

- A leaderboard that goes back to bytes it had before: the newest fetch decides (A -> B -> A is
  A again), and `warehouse stats` says why a source is stale.
- A key repeated within one payload: a ParseError naming both rows where that is never
  legitimate; where it is (several runs or papers per model), every row stays, each names the
  rows sharing its key, and the matrix breaks ties in numeric row order (`line 3` before
  `line 129`).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipelines.cli.warehouse import stats_frame
from pipelines.fetch.plan import fetch_source, payload_map
from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, Fetcher
from pipelines.identity.registry import load_registry
from pipelines.run import run_refresh
from pipelines.sources import SOURCES, aider, arc_prize, livebench, swebench
from pipelines.sources.base import ParseError, natural_order
from pipelines.stages.ingest import ingest_source
from pipelines.stages.normalize import normalize_scores
from pipelines.stages.parse import ParseFailed, parse_source
from pipelines.transforms.matrix import build_matrix
from predictor import BenchPress
from predictor.util.paths import snapshot_store_dir, warehouse_path
from tests.support.mirror_server import MirrorServer
from warehouse.db import connect
from warehouse.scores import current_parses, current_source_scores, read_table
from warehouse.stats import warehouse_stats
from warehouse.status import source_status

REL = "evalplus.github.io/results.json"
MODEL, KEY = "OpenCoder-8B-Instruct", "humaneval+"  # 77.4 in the recording
A = (DEFAULT_REPLAY_ROOT / REL).read_bytes()
B = A.replace(b'"humaneval+": 77.4', b'"humaneval+": 50.0', 1)
BROKEN = b'{"OpenCoder-8B-Instruct": '  # not JSON: fails to parse
T1, T2, T3, T4 = (datetime(2026, 12, day, tzinfo=UTC) for day in (1, 2, 3, 4))


@pytest.fixture
def served(tmp_path: Path):
    """An evalplus-only mirror root on loopback whose file the test rewrites between fetches."""
    root = tmp_path / "mirror"
    (root / REL).parent.mkdir(parents=True)
    server = MirrorServer(root).start()
    try:
        yield root / REL, server
    finally:
        server.stop()


def refresh_evalplus(con: duckdb.DuckDBPyConnection, server: MirrorServer, when: datetime):
    """Fetch and parse evalplus as its two assets do; the clock dates the fetch."""
    fetcher = Fetcher("mirror", mirror=server.base_url, retries=0, clock=lambda: when)
    ingest = ingest_source(con, fetcher, SOURCES["evalplus"])
    return ingest, parse_source(con, SOURCES["evalplus"])


def current_value(con: duckdb.DuckDBPyConnection, as_of: datetime | None = None) -> float:
    rows = current_source_scores(con, as_of).filter(
        (pl.col("model_key") == MODEL) & (pl.col("benchmark_key") == KEY)
    )
    assert rows.height == 1
    return rows["value"][0]


def test_going_back_to_earlier_bytes_makes_them_current(served, tmp_path: Path) -> None:
    path, server = served
    with connect(tmp_path / "warehouse.duckdb") as con:
        path.write_bytes(A)
        _, first = refresh_evalplus(con, server, T1)
        path.write_bytes(B)
        _, second = refresh_evalplus(con, server, T2)
        assert current_value(con) == 50.0
        path.write_bytes(A)
        ingest, third = refresh_evalplus(con, server, T3)

        assert ingest.outcome == "new"  # the same bytes as T1, archived again as this fetch
        assert third.reused and third.parse_id not in (first.parse_id, second.parse_id)
        assert third.rows == first.rows
        assert current_value(con) == 77.4
        current = current_parses(con).row(0, named=True)
        assert current["parse_id"] == third.parse_id and current["fetched_at"] == T3
        # rows carry the fetch that confirmed them (provenance of the published cell)
        assert set(current_source_scores(con)["fetched_at"]) == {T3}
        # history: as of T2, B was current; as of T1, A
        assert current_value(con, T2) == 50.0 and current_value(con, T1) == 77.4

        # the matrix built from it has A's value
        normalize_scores(con, load_registry())
        cells, _ = build_matrix(read_table(con, "normalized_scores"))
        cell = cells.filter(
            (pl.col("source") == "evalplus") & (pl.col("model_key") == MODEL)
        ).filter(pl.col("benchmark_key") == KEY)
        assert cell["score"].to_list() == [77.4]

        # an unchanged re-fetch reuses the confirming parse as it is
        path.write_bytes(A)
        ingest, fourth = refresh_evalplus(con, server, T4)
        assert ingest.outcome == "unchanged" and fourth.parse_id == third.parse_id
        assert source_status(con)["evalplus"]["status"] == "ok"


def test_replay_recorded_dates_do_not_decide(tmp_path: Path) -> None:
    """Replayed payloads carry their recording date: B recorded after A, then A replayed again
    is still the newest fetch."""
    roots = {}
    for name, data, when in (("a", A, "2024-12-26T00:00:00+00:00"), ("b", B, "2025-06-01")):
        root = tmp_path / name
        (root / REL).parent.mkdir(parents=True)
        (root / REL).write_bytes(data)
        (root / "_sources").mkdir()
        index = {REL: {"recorded_at": when}}
        (root / "_sources" / "evalplus.recorded.json").write_text(json.dumps(index))
        roots[name] = root
    with connect(tmp_path / "warehouse.duckdb") as con:
        for name, expected in (("a", 77.4), ("b", 50.0), ("a", 77.4)):
            ingest_source(con, Fetcher("replay", replay_root=roots[name]), SOURCES["evalplus"])
            parse_source(con, SOURCES["evalplus"])
            assert current_value(con) == expected, name


def test_going_back_to_bytes_that_failed_fails_again(served, tmp_path: Path) -> None:
    """A -> broken -> A -> broken: the last good data stays, and the source is stale again."""
    path, server = served
    with connect(tmp_path / "warehouse.duckdb") as con:
        path.write_bytes(A)
        refresh_evalplus(con, server, T1)
        path.write_bytes(BROKEN)
        with pytest.raises(Exception, match="invalid JSON"):
            refresh_evalplus(con, server, T2)
        path.write_bytes(A)
        _, good = refresh_evalplus(con, server, T3)
        assert source_status(con)["evalplus"]["status"] == "ok"
        path.write_bytes(BROKEN)
        with pytest.raises(ParseFailed, match="the same bytes failed in parse"):
            refresh_evalplus(con, server, T4)
        status = source_status(con)["evalplus"]
        assert current_parses(con)["parse_id"].to_list() == [good.parse_id]
        assert current_value(con) == 77.4
    assert status["status"] == "stale" and "invalid JSON" in status["error"]
    assert status["data_fetched_at"] == T3.isoformat()


def test_stats_name_the_reason_a_source_is_stale(served, tmp_path: Path) -> None:
    """`warehouse stats` (Python, table and --json) says why a source is stale and since when."""
    path, server = served
    home = tmp_path / "home"
    db = warehouse_path(home)
    with connect(db) as con:
        path.write_bytes(A)
        refresh_evalplus(con, server, T1)
        path.unlink()  # the server now answers 404
        with pytest.raises(Exception, match="HTTP 404"):
            refresh_evalplus(con, server, T2)
        error_at = con.execute("SELECT max(started_at) FROM fetch_log").fetchone()[0]
    reason = "evalplus: fetching https://evalplus.github.io/results.json failed: HTTP 404"
    facts = warehouse_stats(db)["sources"]["evalplus"]
    assert facts["status"] == "stale" and facts["error"].startswith(reason)
    assert facts["error_at"] == error_at.isoformat() == facts["last_attempt"]
    assert facts["rows"] == 428 and facts["data_fetched_at"] == T1.isoformat()

    env = {**os.environ, "BENCHPRESS_HOME": str(home)}
    command = [str(Path(sys.executable).parent / "benchpress"), "warehouse", "stats"]
    table = subprocess.run(command, capture_output=True, text=True, env=env, check=True).stdout
    lines = table.splitlines()
    assert lines[0].split() == [
        "source",
        "status",
        "payloads",
        "rows",
        "models",
        "benchmarks",
        "rows",
        "placed",
        "unresolved",
        "models",
        "unresolved",
        "benchmarks",
        "data",
        "fetched",
    ]
    row = next(line for line in lines if line.startswith("evalplus ")).split()
    assert row[:4] == ["evalplus", "stale", "1", "428"] and row[-1] == T1.date().isoformat()
    assert f"evalplus is stale since {error_at.isoformat()}: {reason}" in lines
    assert lines[-1].startswith("matrix: ") and "{" not in table  # no Python dict
    listed = subprocess.run(
        [*command, "--json"], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert json.loads(listed)["sources"]["evalplus"]["error"].startswith(reason)
    csv = subprocess.run([*command, "--csv"], capture_output=True, text=True, env=env, check=True)
    expected = stats_frame(warehouse_stats(db)).drop("age_days")
    got = pl.read_csv(io.StringIO(csv.stdout), schema_overrides=expected.schema)
    assert got.drop("age_days").equals(expected)  # the CSV round-trips, reason included


@pytest.mark.slow
def test_refresh_publishes_the_reverted_values(refreshed_home, tmp_path, monkeypatch) -> None:
    """The reviewer's sequence through the whole job: A publishes, B publishes, A again must
    publish A's value (it used to report `evalplus: new` and keep B's snapshot). A is the
    recording: its refresh is the session's mirror refresh (a copy of its home,
    tests/conftest.py)."""
    benchpress_home, first = refreshed_home.home, refreshed_home.outcome
    root = tmp_path / "mirror"
    shutil.copytree(DEFAULT_REPLAY_ROOT, root)
    target = root / REL
    target.chmod(0o644)
    server = MirrorServer(root).start()
    monkeypatch.setenv("BENCHPRESS_HTTP_MIRROR", server.base_url)

    def published_value(version: str) -> float:
        cells = BenchPress.load(version, store=snapshot_store_dir(benchpress_home)).scores()
        row = cells.filter(
            (pl.col("model_id") == "opencoder-8b-instruct")
            & (pl.col("benchmark_id") == "humaneval_plus")
        )
        return row["score"][0]

    assert first.success and first.published, first
    assert first.source_outcomes["evalplus"] == "new"
    try:
        versions = [first.version]
        for data in (B, A):
            target.write_bytes(data)
            outcome = run_refresh(mode="mirror", home=benchpress_home)
            assert outcome.success and outcome.published, outcome
            assert outcome.source_outcomes["evalplus"] == "new"
            versions.append(outcome.version)
    finally:
        server.stop()
    assert len(set(versions)) == 3
    assert [published_value(v) for v in versions] == [77.4, 50.0, 77.4]
    con = duckdb.connect(str(warehouse_path(benchpress_home)), read_only=True)
    try:
        assert con.execute(
            "SELECT score FROM matrix_cells WHERE model_id = 'opencoder-8b-instruct'"
            " AND benchmark_id = 'humaneval_plus'"
        ).fetchone() == (77.4,)
    finally:
        con.close()


# ------------------------------------------------------------------- keys repeated in one payload
LIVEBENCH_TABLE = DEFAULT_REPLAY_ROOT / "livebench.ai/table_2026_01_08.csv"
OPUS = "claude-4-1-opus-20250805-base"  # line 3 of the recorded table (128 lines)


def livebench_with_repeated_opus() -> bytes:
    """The reviewer's edit: a second row for the same configuration, every value divided by 3."""
    table = LIVEBENCH_TABLE.read_bytes()
    line = next(row for row in table.decode().splitlines() if row.startswith(OPUS + ","))
    key, *values = line.split(",")
    thirds = ",".join(f"{float(v) / 3:.3f}" for v in values)
    return table + f"{key},{thirds}\n".encode()


def livebench_payloads(table: bytes) -> dict[str, bytes]:
    categories = (DEFAULT_REPLAY_ROOT / "livebench.ai/categories_2026_01_08.json").read_bytes()
    return {livebench.TABLE_URL: table, livebench.CATEGORIES_URL: categories}


def test_natural_order_puts_line_3_before_line_129() -> None:
    refs = ["line 129", "line 3", "x[10]", "x[9]", "a.csv line 20", "a.csv line 100"]
    assert sorted(refs, key=natural_order) == [
        "a.csv line 20",
        "a.csv line 100",
        "line 3",
        "line 129",
        "x[9]",
        "x[10]",
    ]


def test_livebench_repeated_configuration_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as caught:
        livebench.parse(livebench_payloads(livebench_with_repeated_opus()))
    message = str(caught.value)
    assert message.startswith(f"livebench: cannot parse {livebench.TABLE_URL} at line 129: ")
    assert f"model {OPUS!r} on " in message and "line 3 and line 129" in message
    assert "(23 repeated keys in all)" in message  # one per task of the row


def test_repeated_livebench_row_keeps_the_last_good_data(tmp_path: Path) -> None:
    """Through the stages: the payload is archived, its parse fails naming both rows, the last
    good parse stays current (so the matrix keeps the published values) and stats say why."""
    root = tmp_path / "mirror"
    for name in ("table_2026_01_08.csv", "categories_2026_01_08.json"):
        (root / "livebench.ai").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DEFAULT_REPLAY_ROOT / "livebench.ai" / name, root / "livebench.ai" / name)
    server = MirrorServer(root).start()
    source = SOURCES["livebench"]
    db = tmp_path / "warehouse.duckdb"
    try:
        with connect(db) as con:
            fetcher = Fetcher("mirror", mirror=server.base_url, retries=0)
            ingest_source(con, fetcher, source)
            good = parse_source(con, source)
            (root / "livebench.ai/table_2026_01_08.csv").write_bytes(livebench_with_repeated_opus())
            assert ingest_source(con, fetcher, source).outcome == "new"
            with pytest.raises(ParseError, match="line 3 and line 129"):
                parse_source(con, source)
            assert current_parses(con)["parse_id"].to_list() == [good.parse_id]
            values = current_source_scores(con).filter(
                (pl.col("model_key") == OPUS) & (pl.col("benchmark_key") == "AMPS_Hard")
            )["value"]
    finally:
        server.stop()
    assert values.to_list() == [89.0]
    facts = warehouse_stats(db)["sources"]["livebench"]
    assert facts["status"] == "stale" and "line 3 and line 129" in facts["error"]


def _swebench(*runs: dict) -> bytes:
    return json.dumps({"leaderboards": [{"name": "Verified", "results": list(runs)}]}).encode()


def _aider(*dirnames: str) -> bytes:
    return "".join(
        f"- dirname: {d}\n  model: m\n  edit_format: diff\n  pass_rate_2: {40 + i}\n"
        for i, d in enumerate(dirnames)
    ).encode()


@pytest.mark.parametrize(
    ("parse", "payloads", "message"),
    [
        (
            aider.parse,
            {aider.POLYGLOT_URL: _aider("run-a", "run-b", "run-a")},
            r"model 'run-a' \(agent 'diff'\) on 'polyglot' appears twice in one payload: "
            r"polyglot_leaderboard.yml\[0\] line 1 and polyglot_leaderboard.yml\[2\] line 9",
        ),
        (
            swebench.parse,
            {
                swebench.URL: _swebench(
                    {"name": "A", "folder": "f1", "resolved": 40.0},
                    {"name": "B", "folder": "f2", "resolved": 41.0},
                    {"name": "A again", "folder": "f1", "resolved": 13.3},
                )
            },
            r"model 'f1' on 'Verified' appears twice in one payload: leaderboards\[0\]"
            r".results\[0\] \(Verified\) and leaderboards\[0\].results\[2\] \(Verified\)",
        ),
    ],
    ids=["aider", "swebench"],
)
def test_repeated_run_key_is_a_parse_error(parse, payloads, message) -> None:
    with pytest.raises(ParseError, match=message) as caught:
        parse(payloads)
    assert str(caught.value).startswith(f"{caught.value.source}: cannot parse {caught.value.url}")


def _arc(*evaluations: dict) -> dict[str, bytes]:
    return {
        arc_prize.EVALUATIONS_URL: json.dumps(list(evaluations)).encode(),
        arc_prize.MODELS_URL: b'[{"id": "m1", "displayName": "M1"}]',
        arc_prize.DATASETS_URL: b'[{"id": "v2_Semi_Private", "displayName": "ARC-AGI-2"}]',
    }


def test_arc_prize_conflicting_evaluations_are_a_parse_error() -> None:
    ev = {"modelId": "m1", "datasetId": "v2_Semi_Private", "score": 0.25, "costPerTask": 1.0}
    # an exact copy (the recorded file has one) is kept and points at the first
    same = arc_prize.parse(_arc(ev, ev))
    assert json.loads(same["extra"][1])["duplicate_of"] == "evaluations[0]"
    with pytest.raises(ParseError, match=r"evaluations\[0\] and evaluations\[1\]"):
        arc_prize.parse(_arc(ev, {**ev, "score": 0.08}))


def test_recorded_payloads_still_parse_and_name_legitimate_repeats() -> None:
    """Every source parses its recorded payloads; Epoch's and llm-stats' repeated keys (several
    papers per model, records of one benchmark with other settings) are kept and name each
    other."""
    fetcher = Fetcher("replay")
    frames = {
        source_id: source.parse(payload_map(fetch_source(fetcher, source)))
        for source_id, source in SOURCES.items()
    }
    pairs = frames["llm_stats"].filter(
        (pl.col("model_key") == "claude-haiku-4-5-20251015")
        & (pl.col("benchmark_key") == "aime-2025")
    )
    named = [json.loads(extra)["same_key_rows"] for extra in pairs["extra"]]
    assert len(named) == 2 and named[0] == named[1] == sorted(pairs["row_ref"], key=natural_order)
    epoch = frames["epoch_ai"]
    marked = epoch.filter(pl.col("extra").str.contains('"same_key_rows"'))
    assert marked.height == 867  # every scored row of a repeated key, none other (rows read
    # from their Name, such as the Qwen2.5-Coder-3B row under 32B, are keyed by that Name)


def _observation(ref: str, score: float) -> dict:
    return {
        "source": "livebench",
        "model_id": "claude-opus-4-1",
        "benchmark_id": "livebench_amps_hard",
        "score": score,
        "resolution": "resolved",
        "payload_url": livebench.TABLE_URL,
        "payload_sha256": "0" * 64,
        "fetched_at": T1,
        "row_ref": ref,
        "model_key": OPUS,
        "model_name": OPUS,
        "benchmark_key": "AMPS_Hard",
        "setting": None,
        "model_setting": None,
        "agent": None,
        "eval_date": None,
        "raw_value": score,
        "raw_unit": "percent",
    }


def test_matrix_ties_go_to_the_earlier_row_in_numeric_order() -> None:
    """line 3 wins over line 129 (as text, "line 129" < "line 3"); the loser is reported."""
    benchmarks = pl.DataFrame(
        {"benchmark_id": ["livebench_amps_hard"], "owner_source": [""], "reference_agent": [""]}
    )
    rows = [_observation("line 129", 29.667), _observation("line 3", 89.0)]
    for ordered in (rows, rows[::-1]):
        cells, conflicts = build_matrix(pl.DataFrame(ordered), benchmarks=benchmarks)
        assert cells.select("score", "row_ref").row(0) == (89.0, "line 3")
        assert conflicts.select("chosen_row_ref", "other_row_ref", "other_score").row(0) == (
            "line 3",
            "line 129",
            29.667,
        )
