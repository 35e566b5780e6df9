"""Realistic edits of one source's recorded payload, and `Target`: where its content faults go.

A source's test (`tests/sources/test_<id>.py`) declares its `FAULT_TARGET` with these edits, and
the fault suite (`tests/faults/faults.py`) collects the targets; both import this module, so a new
source adds its mutations in its own test file and the fault suite lists no source. Each edit is
made in the payload's own format (a CSV header renamed, a JSON key renamed, a YAML scalar changed,
a ZIP member rewritten) and touches one record for the single-record faults.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import re
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath
from pipelines.sources.base import Source

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
BAD_VALUES = {  # fault -> the score put into one record (format-specific spelling below)
    "nan_value": float("nan"),
    "inf_value": float("inf"),
    "negative_value": -5.0,
    "out_of_range_value": 1e9,
}


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


# ------------------------------------------------------------------------------------ targets
Edit = Callable[[str, bytes], bytes]


@dataclass(frozen=True)
class Target:
    """Where a source's content faults go: one payload URL and the edit of its bytes.

    For a source that discovers its files from a listing, `url` is one of the discovered files
    (the listing itself gets the listing faults); the "listed file 404" fault removes it.
    """

    url: str
    edit: Edit
    what: str  # what the single-record faults touch, for people reading the table


def recorded_bytes(url: str) -> bytes:
    """The bytes recorded for `url` under `pipelines/replay/`."""
    return (DEFAULT_REPLAY_ROOT / replay_relpath(url)).read_bytes()


def discovered_url(source: Source, suffix: str) -> str:
    """The first file a listing source discovers in its recorded listing, ending in `suffix`."""
    assert source.discover is not None, f"{source.id} discovers no files"
    urls = source.discover({url: recorded_bytes(url) for url in source.urls})
    return next(u for u in urls if u.endswith(suffix))
