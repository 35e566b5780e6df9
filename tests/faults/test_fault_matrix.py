"""Every source x every fault, through the real fetch, archive and parse code paths.

Each cell starts from a DuckDB warehouse seeded with one good ingest + parse of the source, serves
the fault from the loopback mirror, then runs `ingest_source` and `parse_source` exactly as the
source's assets do, with a real `Fetcher` in mirror mode (retries kept, waits recorded instead of
slept, short read timeout for the timeout faults). The outcome of a cell is one of:

- `rejected`: a FetchError / ParseError naming the source and the URL (and row or member); nothing
  new in source_scores; the last good parse still current and the source reported stale with the
  reason and the age of its data. Bytes of a content fault are archived (so a fixed parser can
  re-read them); a transport fault archives nothing.
- `degraded`: the payload parses; nothing scored was lost without a `rejected` marker, no bad
  value was taken as a score, and hostile names are stored verbatim as inert data.
- failures: `crash` (any other exception), `silent loss` (fewer scored rows, not marked),
  `bad data accepted` (a faulty payload or value taken as good).

Cells that currently fail are listed in KNOWN_ISSUES (xfail, strict: a fixed cell must be removed
from the list); the parser diffs that fix them are in the issue 9 report. Every outcome is
printed as a fault x source table at the end of the session (tests/faults/conftest.py).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pytest

from pipelines.fetch.transports import Fetcher, FetchError
from pipelines.sources import SOURCES
from pipelines.sources.base import ParseError
from pipelines.stages.ingest import ingest_source
from pipelines.stages.parse import ParseFailed, parse_source
from tests.faults.faults import (
    BAD_VALUES,
    DETAILS,
    FAULTS,
    FAULTS_BY_NAME,
    HOSTILE_NAMES,
    RESULTS,
    Plan,
    applicable,
    mirror_path,
    plan,
)
from tests.support.mirror_server import MirrorServer
from warehouse.db import connect
from warehouse.scores import current_parses
from warehouse.status import source_status

RETRIES = 2
BACKOFF = 0.01
SHORT_READ_TIMEOUT = 0.25  # seconds; only for the two timeout faults
TIMEOUT_FAULTS = {"timeout", "stalled_body"}
RETRY_AFTER = 7.0  # what the 503 responder asks for (faults.transport_responder)
GOOD = ("rejected", "degraded")
SHORT = {  # table labels (legend printed by conftest)
    "rejected": "rejected",
    "degraded": "degraded",
    "crash": "CRASH",
    "silent loss": "LOSS",
    "bad data accepted": "BAD",
}

# (fault, source) -> why the cell currently fails. Fixed by the parser / fetch diffs in the
# issue 9 report; remove an entry once its fix is in (the cell then fails loudly as XPASS).
KNOWN_ISSUES: dict[tuple[str, str], str] = {}

CELLS = [
    pytest.param(fault.name, source_id, id=f"{fault.name}-{source_id}")
    for fault in FAULTS
    for source_id in SOURCES
    if applicable(fault, source_id)
]


@dataclass
class Outcome:
    label: str  # rejected | degraded | crash | silent loss | bad data accepted
    detail: str
    problems: list[str] = field(default_factory=list)  # broken invariants: always a failure


@dataclass(frozen=True)
class State:
    payload_shas: frozenset[str]  # of this source
    payloads: int  # all sources
    current_parse: int | None
    scores: int  # all rows of source_scores
    tables: tuple[str, ...]


@dataclass(frozen=True)
class ParseStats:
    rows: int
    valued: int  # rows with a score
    rejected: int  # rows carrying a `rejected` reason
    accounted: int  # rows with a score or a `rejected` reason: nothing silently gone
    duplicates: int  # rows flagged as (or as having) a duplicate


def read_state(con: duckdb.DuckDBPyConnection, source_id: str) -> State:
    shas = con.execute("SELECT sha256 FROM raw_payloads WHERE source = ?", [source_id]).fetchall()
    current = current_parses(con).filter(source=source_id)["parse_id"].to_list()
    tables = con.execute(
        "SELECT table_name FROM information_schema.tables ORDER BY table_name"
    ).fetchall()
    return State(
        frozenset(row[0] for row in shas),
        con.execute("SELECT count(*) FROM raw_payloads").fetchone()[0],
        current[0] if current else None,
        con.execute("SELECT count(*) FROM source_scores").fetchone()[0],
        tuple(row[0] for row in tables),
    )


def parse_stats(con: duckdb.DuckDBPyConnection, parse_id: int) -> ParseStats:
    row = con.execute(
        "WITH s AS (SELECT value, json_extract_string(extra, '$.rejected') AS rejected,"
        " json_extract_string(extra, '$.duplicate_of') IS NOT NULL"
        " OR json_extract_string(extra, '$.records_for_pair') IS NOT NULL AS duplicate"
        " FROM source_scores WHERE parse_id = ?)"
        " SELECT count(*), count(value), count(rejected),"
        " count(*) FILTER (WHERE value IS NOT NULL OR rejected IS NOT NULL),"
        " count(*) FILTER (WHERE duplicate OR rejected ILIKE '%duplicate%') FROM s",
        [parse_id],
    ).fetchone()
    return ParseStats(*row)


def stale_problems(con: duckdb.DuckDBPyConnection, source_id: str, reason: str) -> list[str]:
    """The failing source keeps its last good data, marked stale with the reason and the age."""
    status = source_status(con).get(source_id, {})
    problems = []
    if status.get("status") != "stale":
        problems.append(f"source status is {status.get('status')!r}, not 'stale'")
    if not status.get("error") or reason not in status["error"]:
        problems.append(f"stale reason {status.get('error')!r} does not give {reason!r}")
    if status.get("data_fetched_at") is None or status.get("age_days") is None:
        problems.append("the age of the last good data is not reported")
    return problems


def message_problems(message: str, source_id: str, url: str) -> list[str]:
    missing = [what for what in (source_id, url) if what not in message]
    return [f"error message does not name {missing}: {message[:300]!r}"] if missing else []


def fetch_rejected(
    con: duckdb.DuckDBPyConnection,
    exc: FetchError,
    fault: str,
    source_id: str,
    cell: Plan,
    before: State,
    server: MirrorServer,
    sleeps: list[float],
) -> Outcome:
    problems = message_problems(str(exc), source_id, cell.url)
    after = read_state(con, source_id)
    if after.payload_shas != before.payload_shas or after.payloads != before.payloads:
        problems.append("a failed fetch archived payload bytes")
    outcome, error = con.execute(
        "SELECT outcome, error FROM fetch_log WHERE source = ?"
        " ORDER BY started_at DESC, fetch_id DESC LIMIT 1",
        [source_id],
    ).fetchone()
    if outcome != "failed" or error != str(exc):
        problems.append(f"fetch_log says {outcome!r} / {error!r}")
    summary = parse_source(con, SOURCES[source_id])  # what the source's parse asset does next
    if not summary.reused or summary.parse_id != before.current_parse:
        problems.append("the parse after a failed fetch is not the last good one")
    if read_state(con, source_id).scores != before.scores:
        problems.append("source_scores changed after a failed fetch")
    problems += stale_problems(con, source_id, exc.reason)
    attempts = sum(1 for path, _ in server.requests if path == mirror_path(cell.url))
    if fault in ("http_500", "http_503_retry_after"):
        if attempts != RETRIES + 1:
            problems.append(f"{attempts} attempts, expected {RETRIES + 1}")
        expected = (
            [RETRY_AFTER] * RETRIES
            if fault == "http_503_retry_after"
            else [BACKOFF * 2**i for i in range(RETRIES)]
        )
        if sleeps != pytest.approx(expected):
            problems.append(f"waited {sleeps} between attempts, expected {expected}")
    return Outcome("rejected", f"fetch: {exc.reason}", problems)


def parse_rejected(
    con: duckdb.DuckDBPyConnection, exc: ParseError, source_id: str, cell: Plan, before: State
) -> Outcome:
    problems = message_problems(str(exc), source_id, cell.url)
    after = read_state(con, source_id)
    if after.current_parse != before.current_parse:
        problems.append("a failed parse replaced the last good one")
    if after.scores != before.scores:
        problems.append("a failed parse left rows in source_scores")
    status, error = con.execute(
        "SELECT status, error FROM parses WHERE source = ? ORDER BY parse_id DESC LIMIT 1",
        [source_id],
    ).fetchone()
    if status != "failed" or error != str(exc):
        problems.append(f"the failed parse is recorded as {status!r} / {error!r}")
    try:  # the next run re-reads the same archived bytes: the same clear error, no re-parse
        parse_source(con, SOURCES[source_id])
        problems.append("re-running the parse of the same bytes succeeded")
    except ParseFailed as again:
        if str(exc) not in str(again):
            problems.append(f"the repeated failure does not repeat the reason: {again}")
    problems += stale_problems(con, source_id, str(exc))
    reason = str(exc).split(": ", 2)[-1]
    where = f" at {exc.row}" if exc.row else ""
    return Outcome("rejected", f"parse{where}: {reason}", problems)


def bad_values_kept(con: duckdb.DuckDBPyConnection, fault: str, parse_id: int) -> int:
    """Rows of the new parse holding the injected value as a score, with no rejected marker."""
    value = BAD_VALUES[fault]
    if math.isnan(value):
        condition, params = "isnan(value)", []
    elif math.isinf(value):
        condition, params = "isinf(value)", []
    else:
        condition, params = "value = ?", [value]
    return con.execute(
        f"SELECT count(*) FROM source_scores WHERE parse_id = ? AND {condition}"
        " AND json_extract_string(extra, '$.rejected') IS NULL",
        [parse_id, *params],
    ).fetchone()[0]


def score_column_switches(con: duckdb.DuckDBPyConnection, before: int, after: int) -> int:
    """Scored rows whose source records a score column the last good parse never used."""
    return con.execute(
        "WITH old AS (SELECT DISTINCT benchmark_key, json_extract_string(extra, '$.score_column')"
        " AS col FROM source_scores WHERE parse_id = ? AND col IS NOT NULL)"
        " SELECT count(*) FROM source_scores s JOIN old USING (benchmark_key)"
        " WHERE s.parse_id = ? AND s.value IS NOT NULL"
        " AND json_extract_string(s.extra, '$.score_column') <> old.col",
        [before, after],
    ).fetchone()[0]


def parsed(
    con: duckdb.DuckDBPyConnection, fault: str, source_id: str, parse_id: int, before: State
) -> Outcome:
    after = read_state(con, source_id)
    if after.current_parse != parse_id:
        return Outcome("crash", "the new parse is not current", ["new parse not current"])
    old, new = parse_stats(con, before.current_parse), parse_stats(con, parse_id)
    notes = [f"rows {old.rows} -> {new.rows}"]
    if new.rejected > old.rejected:
        notes.append(f"{new.rejected - old.rejected} more kept with a rejected reason")
    if new.duplicates > old.duplicates:
        notes.append(f"{new.duplicates - old.duplicates} more flagged as duplicates")
    if new.accounted < old.valued:  # every scored row is still scored, or kept with a reason
        gone = old.valued - new.accounted
        return Outcome("silent loss", f"{gone} scored rows gone without a rejected reason")
    if fault in BAD_VALUES and (kept := bad_values_kept(con, fault, parse_id)):
        return Outcome("bad data accepted", f"{kept} row(s) score {BAD_VALUES[fault]!r}")
    if fault == "missing_column" and (
        switched := score_column_switches(con, before.current_parse, parse_id)
    ):
        return Outcome("bad data accepted", f"{switched} rows scored from another column, unmarked")
    problems = []
    if fault in HOSTILE_NAMES:
        name = HOSTILE_NAMES[fault]
        stored = con.execute(
            "SELECT count(*) FROM source_scores WHERE parse_id = ?"
            " AND (model_key IN (?, ?) OR model_name IN (?, ?))",
            [parse_id, name, name.strip(), name, name.strip()],
        ).fetchone()[0]
        if not stored:
            problems.append("the hostile name is not stored verbatim")
        notes.append(f"name stored verbatim in {stored} row(s)")
        if after.tables != before.tables or after.payloads < before.payloads:
            problems.append("tables changed after storing a hostile name")
    return Outcome("degraded", ", ".join(notes), problems)


def run_cell(fault: str, source_id: str, server: MirrorServer, db: Path) -> Outcome:
    spec, source = FAULTS_BY_NAME[fault], SOURCES[source_id]
    cell = plan(spec, source_id)
    server.faults.clear()
    server.requests.clear()
    server.faults.update(cell.responders)
    sleeps: list[float] = []
    fetcher = Fetcher(
        "mirror",
        mirror=server.base_url,
        retries=RETRIES,
        backoff=BACKOFF,
        timeout=(5.0, SHORT_READ_TIMEOUT if fault in TIMEOUT_FAULTS else 60.0),
        sleep=sleeps.append,
    )
    try:
        with connect(db) as con:
            before = read_state(con, source_id)
            try:
                ingest_source(con, fetcher, source)
            except FetchError as exc:
                return fetch_rejected(con, exc, fault, source_id, cell, before, server, sleeps)
            except Exception as exc:  # noqa: BLE001 - classified, not hidden
                return Outcome("crash", f"fetch: {type(exc).__name__}: {exc}"[:300])
            new = read_state(con, source_id).payload_shas - before.payload_shas
            if spec.kind == "transport" or cell.served is None:
                return Outcome("bad data accepted", f"fetch succeeded, {len(new)} new payloads")
            problems = []
            served = hashlib.sha256(cell.served).hexdigest()
            if new != {served}:
                problems.append(f"archived {len(new)} new payloads, expected the faulted bytes")
            try:
                summary = parse_source(con, source)
            except ParseError as exc:
                outcome = parse_rejected(con, exc, source_id, cell, before)
            except Exception as exc:  # noqa: BLE001
                outcome = Outcome("crash", f"parse: {type(exc).__name__}: {exc}"[:300])
                if read_state(con, source_id).current_parse != before.current_parse:
                    outcome.problems.append("a crashed parse replaced the last good one")
            else:
                outcome = parsed(con, fault, source_id, summary.parse_id, before)
            outcome.problems[:0] = problems
            return outcome
    finally:
        server.faults.clear()


@pytest.mark.parametrize(("fault", "source_id"), CELLS)
def test_fault_cell(fault, source_id, fault_mirror, seeded_warehouse, warehouse_copy) -> None:
    db = warehouse_copy(seeded_warehouse(source_id))
    outcome = run_cell(fault, source_id, fault_mirror, db)
    good = outcome.label in GOOD and not outcome.problems
    known = KNOWN_ISSUES.get((fault, source_id))
    RESULTS[(fault, source_id)] = SHORT[outcome.label] + (" xfail" if known and not good else "")
    if outcome.label != "rejected" or known:
        DETAILS[(fault, source_id)] = outcome.detail + (f" [known issue: {known}]" if known else "")
    if known:
        if good:
            pytest.fail(f"known issue fixed ({known}): remove it from KNOWN_ISSUES; {outcome}")
        pytest.xfail(f"{known}: {outcome.label}: {outcome.detail}")
    assert not outcome.problems, f"{outcome.label}: {outcome.detail}; broken: {outcome.problems}"
    assert outcome.label in GOOD, f"{outcome.label}: {outcome.detail}"
    if FAULTS_BY_NAME[fault].kind == "transport":
        assert outcome.label == "rejected", outcome
