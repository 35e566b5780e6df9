"""The fault catalogue of the fault suite, and realistic per-source mutations of recorded payloads.

A fault is what the network or a leaderboard can do to us. Transport faults are answered by the
loopback mirror in place of a source's first URL (5xx with and without Retry-After, timeouts,
resets, truncated or empty bodies, HTML error pages, oversize bodies). Content faults serve the
source's own recorded payload with one realistic edit, made in the payload's own format (a CSV
header renamed, a JSON key renamed, a YAML scalar changed, a ZIP member rewritten): renamed or
missing columns, NaN/inf/negative/out-of-range scores, a duplicated record, a model name replaced
by a hostile string, bytes that are not UTF-8. ZIP faults (path traversal, decompression bombs)
apply to the one ZIP source; listing faults to the one source that discovers its files from a
listing. Other combinations are "n.a." cells of the table.

`RESULTS` collects each cell's outcome during the session; `tests/faults/conftest.py` prints it as
a table at the end of the run.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import re
import socket
import struct
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath
from pipelines.sources import SOURCES, llm_stats
from tests.support.mirror_server import Fault as Responder
from tests.support.mirror_server import serve_status, serve_truncated

# ------------------------------------------------------------------------------ hostile strings
HOSTILE_NAMES: dict[str, str] = {
    "hostile_sql": "'); DROP TABLE raw_payloads; --",
    "hostile_html": "<script>alert(1)</script>",
    "hostile_long": "gpt-" + "x" * 4996,  # 5,000 characters
    "hostile_control": "evil\x00name\x07\x1b[31mred\x1b[0m\x08\x7f\u0085end",
    "hostile_rtl": "gpt-4o\u202eevil.exe\u202c",
}
NON_UTF8 = "Mod\xe8le-\xff".encode("latin-1")  # a name in Latin-1: not valid UTF-8
SENTINEL = "NONUTF8SENTINEL0123456789"  # replaced by NON_UTF8 after serialising
HTML_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
    b"<body><h1>Bad Gateway</h1><p>The upstream server is unavailable.</p></body></html>\n"
)
BAD_VALUES = {  # fault -> the score put into one record (format-specific spelling below)
    "nan_value": float("nan"),
    "inf_value": float("inf"),
    "negative_value": -5.0,
    "out_of_range_value": 1e9,
}


# ------------------------------------------------------------------------------------- faults
@dataclass(frozen=True)
class FaultSpec:
    name: str
    kind: str  # transport | content | zip | listing
    label: str  # the row heading of the printed table


FAULTS: list[FaultSpec] = [
    FaultSpec("http_500", "transport", "HTTP 500"),
    FaultSpec("http_503_retry_after", "transport", "HTTP 503 + Retry-After"),
    FaultSpec("timeout", "transport", "timeout (no response)"),
    FaultSpec("stalled_body", "transport", "timeout (body stalls)"),
    FaultSpec("connection_reset", "transport", "connection reset"),
    FaultSpec("truncated_body", "transport", "truncated body"),
    FaultSpec("html_200", "transport", "HTML error page, 200"),
    FaultSpec("empty_body", "transport", "empty body, 200"),
    FaultSpec("oversize_declared", "transport", "oversize (Content-Length)"),
    FaultSpec("oversize_streamed", "transport", "oversize (streamed)"),
    FaultSpec("html_200_mislabelled", "content", "HTML page as text/plain"),
    FaultSpec("renamed_column", "content", "renamed key column"),
    FaultSpec("missing_column", "content", "missing score column"),
    FaultSpec("non_utf8", "content", "non-UTF-8 bytes"),
    FaultSpec("nan_value", "content", "NaN score"),
    FaultSpec("inf_value", "content", "inf score"),
    FaultSpec("negative_value", "content", "negative score"),
    FaultSpec("out_of_range_value", "content", "score 1e9"),
    FaultSpec("duplicate_rows", "content", "duplicate record"),
    FaultSpec("hostile_sql", "content", "name: SQL fragment"),
    FaultSpec("hostile_html", "content", "name: HTML/JS"),
    FaultSpec("hostile_long", "content", "name: 5,000 chars"),
    FaultSpec("hostile_control", "content", "name: control chars"),
    FaultSpec("hostile_rtl", "content", "name: U+202E"),
    FaultSpec("zip_traversal", "zip", "zip: ../../evil.csv"),
    FaultSpec("zip_bomb", "zip", "zip: deflate bomb"),
    FaultSpec("zip_bomb_lying_size", "zip", "zip: bomb, lying size"),
    FaultSpec("bad_listing", "listing", "listing: not a listing"),
    FaultSpec("listed_file_404", "listing", "listing: file 404"),
]
FAULTS_BY_NAME = {fault.name: fault for fault in FAULTS}
ZIP_SOURCES = {"epoch_ai"}
LISTING_SOURCES = {s.id for s in SOURCES.values() if s.discover is not None}


def applicable(fault: FaultSpec, source_id: str) -> bool:
    if fault.kind == "zip":
        return source_id in ZIP_SOURCES
    if fault.kind == "listing":
        return source_id in LISTING_SOURCES
    return True


# (fault, source) -> outcome label and a short explanation, filled in by the tests and printed
# by conftest at the end of the session
RESULTS: dict[tuple[str, str], str] = {}
DETAILS: dict[tuple[str, str], str] = {}


# ------------------------------------------------------------------------- transport responders
class Stalls:
    """Server-side waits that a test run can release at teardown (no thread outlives it long)."""

    release = threading.Event()
    seconds = 5.0


def _quiet_write(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    try:
        handler.wfile.write(data)
        handler.wfile.flush()
    except OSError:  # the client gave up: that is the point of the fault
        handler.close_connection = True


def serve_no_response(handler: BaseHTTPRequestHandler, _data: bytes) -> None:
    Stalls.release.wait(Stalls.seconds)
    handler.close_connection = True


def serve_stalled_body(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    _quiet_write(handler, data[: min(len(data) // 4, 4096)])
    Stalls.release.wait(Stalls.seconds)
    handler.close_connection = True


def serve_reset(handler: BaseHTTPRequestHandler, _data: bytes) -> None:
    """Abort the TCP connection (RST) without answering."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()
    handler.close_connection = True


def serve_oversize(declared: bool, size: int) -> Responder:
    """A body one chunk past the cap: with an honest Content-Length, or streamed until close."""

    def fault(handler: BaseHTTPRequestHandler, _data: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/octet-stream")
        if declared:
            handler.send_header("Content-Length", str(size))
        handler.end_headers()
        chunk = b"0" * 65536
        sent = 0
        try:
            while sent < size:
                handler.wfile.write(chunk)
                sent += len(chunk)
        except OSError:
            pass
        handler.close_connection = True

    return fault


def serve_bytes(body: bytes, content_type: str = "application/octet-stream") -> Responder:
    return serve_status(200, body, {"Content-Type": content_type})


def transport_responder(fault: str, max_bytes: int) -> Responder:
    if fault == "http_500":
        return serve_status(500, b"Internal Server Error")
    if fault == "http_503_retry_after":
        return serve_status(503, b"Service Unavailable", {"Retry-After": "7"})
    if fault == "timeout":
        return serve_no_response
    if fault == "stalled_body":
        return serve_stalled_body
    if fault == "connection_reset":
        return serve_reset
    if fault == "truncated_body":
        return serve_truncated
    if fault == "html_200":
        return serve_status(200, HTML_PAGE, {"Content-Type": "text/html; charset=utf-8"})
    if fault == "empty_body":
        return serve_status(200, b"")
    if fault == "oversize_declared":
        return serve_oversize(True, max_bytes + 65536)
    if fault == "oversize_streamed":
        return serve_oversize(False, max_bytes + 65536)
    raise KeyError(fault)


# --------------------------------------------------------------------------- format helpers
def _finish(text: str) -> bytes:
    return text.encode("utf-8").replace(SENTINEL.encode(), NON_UTF8)


def _hostile(fault: str) -> str:
    return SENTINEL if fault == "non_utf8" else HOSTILE_NAMES[fault]


def _is_name_fault(fault: str) -> bool:
    return fault == "non_utf8" or fault in HOSTILE_NAMES


@dataclass(frozen=True)
class CsvEdit:
    """Edits of a CSV table: key/name/score columns by header name (one target data row)."""

    key: str
    score: str
    rename_to: str
    name: str | None = None

    def __call__(self, fault: str, data: bytes) -> bytes:
        text = data.decode("utf-8")
        newline = "\r\n" if "\r\n" in text[:65536] else "\n"
        rows = list(csv.reader(io.StringIO(text, newline="")))
        header = rows[0]
        key, score = header.index(self.key), header.index(self.score)
        # the first data row with a score: the record every single-row fault edits
        r = next(i for i in range(1, len(rows)) if len(rows[i]) == len(header) and rows[i][score])
        if fault == "renamed_column":
            header[key] = self.rename_to
        elif fault == "missing_column":
            rows = [[v for i, v in enumerate(row) if i != score] for row in rows]
        elif fault in BAD_VALUES:
            rows[r][score] = {"nan_value": "nan", "inf_value": "inf"}.get(
                fault, repr(BAD_VALUES[fault])
            )
        elif fault == "duplicate_rows":
            rows.insert(r + 1, list(rows[r]))
        elif _is_name_fault(fault):
            rows[r][key] = _hostile(fault)
            if self.name:
                rows[r][header.index(self.name)] = _hostile(fault)
        else:
            raise KeyError(fault)
        out = io.StringIO()
        csv.writer(out, lineterminator=newline).writerows(rows)
        return _finish(out.getvalue())


def _json_number(fault: str) -> float:
    return BAD_VALUES[fault]


def _dump(doc: Any) -> bytes:
    # allow_nan: NaN/Infinity are written as the bare literals some exporters emit
    return _finish(json.dumps(doc, ensure_ascii=False, allow_nan=True, indent=1))


@dataclass(frozen=True)
class JsonRecordsEdit:
    """Edits of a JSON list of records (found by `records(doc)`), keyed by field names."""

    records: Callable[[Any], list]
    key: str
    score: str
    rename_to: str
    name: str | None = None

    def __call__(self, fault: str, data: bytes) -> bytes:
        doc = json.loads(data)
        records = self.records(doc)
        r = next(i for i, rec in enumerate(records) if rec.get(self.score) is not None)
        if fault == "renamed_column":
            for record in records:
                if self.key in record:
                    record[self.rename_to] = record.pop(self.key)
        elif fault == "missing_column":
            for record in records:
                record.pop(self.score, None)
        elif fault in BAD_VALUES:
            records[r][self.score] = _json_number(fault)
        elif fault == "duplicate_rows":
            records.insert(r + 1, copy.deepcopy(records[r]))
        elif _is_name_fault(fault):
            records[r][self.key] = _hostile(fault)
            if self.name:
                records[r][self.name] = _hostile(fault)
        else:
            raise KeyError(fault)
        return _dump(doc)


def benchpress_matrix_edit(fault: str, data: bytes) -> bytes:
    """data.json: parallel `models`, `observed` (rows of scores) and `sources` lists."""
    doc = json.loads(data)
    models, observed = doc["models"], doc["observed"]
    i = 0
    j = next(j for j, v in enumerate(observed[i]) if v is not None)
    if fault == "renamed_column":  # the per-model key field renamed by the exporter
        for model in models:
            model["model_id"] = model.pop("id")
    elif fault == "missing_column":
        del doc["observed"]
    elif fault in BAD_VALUES:
        observed[i][j] = _json_number(fault)
    elif fault == "duplicate_rows":
        models.insert(i + 1, copy.deepcopy(models[i]))
        observed.insert(i + 1, list(observed[i]))
        if doc.get("sources"):
            doc["sources"].insert(i + 1, copy.deepcopy(doc["sources"][i]))
    elif _is_name_fault(fault):
        models[i]["id"] = models[i]["name"] = _hostile(fault)
    else:
        raise KeyError(fault)
    return _dump(doc)


def evalplus_edit(fault: str, data: bytes) -> bytes:
    """results.json: {display name: {"pass@1": {benchmark: score}, ...}}."""
    doc = json.loads(data)
    first = next(iter(doc))
    if fault == "renamed_column":
        for entry in doc.values():
            entry["pass_at_1"] = entry.pop("pass@1")
    elif fault == "missing_column":
        for entry in doc.values():
            entry["pass@1"].pop("humaneval", None)
    elif fault in BAD_VALUES:
        doc[first]["pass@1"]["humaneval"] = _json_number(fault)
    elif fault == "duplicate_rows":  # the same key twice in the object, as a buggy exporter does
        pairs = [(first, doc[first]), *doc.items()]
        body = ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in pairs)
        return _finish("{\n" + body + "\n}\n")
    elif _is_name_fault(fault):
        doc = {(_hostile(fault) if k == first else k): v for k, v in doc.items()}
    else:
        raise KeyError(fault)
    return _dump(doc)


def livecodebench_edit(fault: str, data: bytes) -> bytes:
    doc = json.loads(data)
    if _is_name_fault(fault):  # a model renamed consistently: its entry and its records
        old = doc["models"][0]["model_repr"]
        doc["models"][0]["model_repr"] = _hostile(fault)
        for record in doc["performances"]:
            if record["model"] == old:
                record["model"] = _hostile(fault)
        return _dump(doc)
    return JsonRecordsEdit(lambda d: d["performances"], "model", "pass@1", "model_name")(
        fault, data
    )


_ITEM = re.compile(r"^- ")


def aider_edit(fault: str, data: bytes) -> bytes:
    """polyglot_leaderboard.yml, edited as text (the file is hand-maintained YAML)."""
    lines = data.decode("utf-8").split("\n")
    starts = [n for n, line in enumerate(lines) if _ITEM.match(line)]
    first, end = starts[0], starts[1]
    block = range(first, end)

    def set_field(name: str, value: str) -> None:
        for n in block:
            if re.match(rf"^(- |  ){re.escape(name)}:", lines[n]):
                prefix = lines[n][:2]
                lines[n] = f"{prefix}{name}: {value}"
                return
        raise KeyError(name)

    if fault == "renamed_column":
        lines = [re.sub(r"^(- |  )dirname:", r"\1directory:", line) for line in lines]
    elif fault == "missing_column":
        lines = [line for line in lines if not line.startswith("  pass_rate_2:")]
    elif fault in BAD_VALUES:
        literal = {"nan_value": ".nan", "inf_value": ".inf", "negative_value": "-5.0"}
        set_field("pass_rate_2", literal.get(fault, "1.0e+9"))
    elif fault == "duplicate_rows":
        lines[end:end] = lines[first:end]
    elif _is_name_fault(fault):
        quoted = json.dumps(_hostile(fault))  # a JSON string is a YAML double-quoted scalar
        set_field("dirname", quoted)
        set_field("model", quoted)
    else:
        raise KeyError(fault)
    return _finish("\n".join(lines))


# --------------------------------------------------------------------------------- ZIP helpers
EPOCH_MEMBER = "gpqa_diamond.csv"
BOMB_BYTES = 24 * 1024 * 1024  # zeros: deflates about 1000:1, far over the parser's 200:1


def rezip(data: bytes, replace: dict[str, bytes], extra: list[tuple[str, bytes]]) -> bytes:
    """The same archive with some members replaced and others appended (deflated)."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            target.writestr(info, replace.get(info.filename, source.read(info)))
        for name, content in extra:
            info = zipfile.ZipInfo(name, (2026, 1, 17, 0, 0, 0))
            target.writestr(info, content, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


def _lie_about_size(data: bytes, member: str, declared: int) -> bytes:
    """Patch a member's uncompressed size in its local and central headers (a lying bomb)."""
    blob = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = archive.getinfo(member)
        local = info.header_offset
    struct.pack_into("<I", blob, local + 22, declared)  # local file header: uncompressed size
    name = member.encode()
    central = blob.rfind(b"PK\x01\x02", 0)
    while central != -1:
        name_len = struct.unpack_from("<H", blob, central + 28)[0]
        if bytes(blob[central + 46 : central + 46 + name_len]) == name:
            struct.pack_into("<I", blob, central + 24, declared)
            break
        central = blob.rfind(b"PK\x01\x02", 0, central)
    return bytes(blob)


_bomb_cache: dict[str, bytes] = {}


def epoch_edit(fault: str, data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        member = archive.read(EPOCH_MEMBER)
    if fault == "zip_traversal":
        evil = b"Model version,mean_score\nevil-model,0.5\n"
        return rezip(data, {}, [("../../evil.csv", evil)])
    if fault in ("zip_bomb", "zip_bomb_lying_size"):
        if fault not in _bomb_cache:
            bombed = rezip(data, {}, [("bomb.csv", b"0" * BOMB_BYTES)])
            if fault == "zip_bomb_lying_size":  # says 1 KB, inflates to 24 MB
                bombed = _lie_about_size(bombed, "bomb.csv", 1024)
            _bomb_cache[fault] = bombed
        return _bomb_cache[fault]
    edited = CsvEdit("Model version", "mean_score", "Model")(fault, member)
    return rezip(data, {EPOCH_MEMBER: edited}, [])


# ------------------------------------------------------------------------- per-source targets
def _first_benchmarks_url() -> str:
    listing = (DEFAULT_REPLAY_ROOT / replay_relpath(llm_stats.LISTING_URL)).read_bytes()
    urls = llm_stats.discover({llm_stats.LISTING_URL: listing})
    return next(u for u in urls if u.endswith("/benchmarks.json"))


LLM_STATS_FILE = _first_benchmarks_url()
Edit = Callable[[str, bytes], bytes]


@dataclass(frozen=True)
class Target:
    """Where a source's content faults go: one payload URL and the edit of its bytes."""

    url: str
    edit: Edit
    what: str  # what the single-record faults touch, for people reading the table


TARGETS: dict[str, Target] = {
    "benchpress_matrix": Target(
        SOURCES["benchpress_matrix"].urls[0], benchpress_matrix_edit, "models[0] / observed[0]"
    ),
    "livebench": Target(
        SOURCES["livebench"].urls[0], CsvEdit("model", "AMPS_Hard", "Model"), "table row 1"
    ),
    "epoch_ai": Target(SOURCES["epoch_ai"].urls[0], epoch_edit, f"member {EPOCH_MEMBER}"),
    "aider": Target(SOURCES["aider"].urls[0], aider_edit, "polyglot run 0"),
    "swebench": Target(
        SOURCES["swebench"].urls[0],
        JsonRecordsEdit(
            lambda d: d["leaderboards"][0]["results"], "folder", "resolved", "folder_name", "name"
        ),
        "leaderboards[0].results[0]",
    ),
    "llm_stats": Target(
        LLM_STATS_FILE,
        JsonRecordsEdit(lambda d: d, "model_id", "score", "model"),
        "one model's benchmarks.json",
    ),
    "arc_prize": Target(
        SOURCES["arc_prize"].urls[0],
        JsonRecordsEdit(lambda d: d, "modelId", "score", "model_id"),
        "evaluations[0]",
    ),
    "lmarena": Target(
        SOURCES["lmarena"].urls[0], CsvEdit("model", "arena_score", "Model"), "text arena row 1"
    ),
    "evalplus": Target(SOURCES["evalplus"].urls[0], evalplus_edit, "first entry"),
    "open_llm_leaderboard": Target(
        SOURCES["open_llm_leaderboard"].urls[0],
        CsvEdit("id", "evaluations_ifeval_value", "model_id", name="model_name"),
        "row 1",
    ),
    "livecodebench": Target(SOURCES["livecodebench"].urls[0], livecodebench_edit, "models[0]"),
}
assert set(TARGETS) == set(SOURCES), "every source needs its content mutations"


def mirror_path(url: str) -> str:
    """The path the loopback mirror sees for a source URL (`/<host>/<path>`)."""
    parts = urlsplit(url)
    return f"/{parts.netloc}{parts.path}"


def recorded_bytes(url: str) -> bytes:
    return (DEFAULT_REPLAY_ROOT / replay_relpath(url)).read_bytes()


@dataclass(frozen=True)
class Plan:
    """What the mirror serves for one cell: responders by path, and the faulted URL."""

    url: str
    responders: dict[str, Responder]
    served: bytes | None  # the faulted bytes when the fault is content served with status 200


def plan(fault: FaultSpec, source_id: str) -> Plan:
    source = SOURCES[source_id]
    if fault.kind == "transport":
        url = source.urls[0]
        return Plan(
            url, {mirror_path(url): transport_responder(fault.name, source.max_bytes)}, None
        )
    if fault.kind == "listing":
        if fault.name == "bad_listing":
            url = source.urls[0]
            body = b"this is not a git tree listing\n<p>rate limited</p>\n"
            return Plan(url, {mirror_path(url): serve_bytes(body, "text/plain")}, body)
        url = LLM_STATS_FILE  # a file the listing names has gone
        return Plan(url, {mirror_path(url): serve_status(404, b"Not Found")}, None)
    target = TARGETS[source_id]
    if fault.name == "html_200_mislabelled":
        body = HTML_PAGE
    else:
        body = target.edit(fault.name, recorded_bytes(target.url))
    return Plan(target.url, {mirror_path(target.url): serve_bytes(body, "text/plain")}, body)
