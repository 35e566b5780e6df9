"""Inspect AI eval logs (`.eval` zip or `.json`), read with Inspect's own log reader.

`inspect_ai` is an optional extra (`pip install 'benchpress-llm[inspect]'`): its reader knows
every log version Inspect has written and migrates old ones, which a copy of the schema here
would not. Only the header is read (results, not samples): much faster on large logs.

One row per (scorer, metric) of `results.scores`: the metric key is `<scorer>/<metric>`
(`choice/accuracy`, `match/accuracy`), or `<scorer>/<reducer>/<metric>` for a reducer other
than the default `mean` (a task reducing epochs several ways, e.g. `verify/pass_at_1/mean`).
A `stderr` metric is not a row: it is the stderr of its sibling metrics. `n` is the scorer's
scored samples (older logs: the completed samples), the time Inspect's `eval.created`, the
version the log's `packages.inspect_ai` (else the installed Inspect's). An eval run with a
`limit` (`eval.config.limit`) that left out samples of its dataset marks its rows `limited`
(a smoke test's scores: `predictor.results.limited`); one run on chosen samples
(`eval.config.sample_id`, e.g. `benchpress run --items N`, whose `benchpress_subset` record in
`eval.metadata` says how they were drawn) scored a subset of its dataset: its rows carry the
dataset's size (`items_total`) and the subset, usable, with the log's standard error or else
the binomial one for an accuracy.

A log that did not finish (`status` other than `success`) or holds no results is refused,
naming the status and what to do.

A `.eval` log is a zip whose members Inspect expands whole, and a few KB of zstd or deflate
expand to gigabytes. The members Inspect reads for the header (`HEADER_MEMBERS`, and the
journal's config updates when there is no `header.json`) are expanded here first, in chunks,
counting the real bytes (the sizes the zip's directory declares may lie) against
`MAX_MEMBER_BYTES` per member and `MAX_READ_BYTES` in all; Inspect then reads a copy that
holds only those members, so it never expands a byte that was not counted."""

from __future__ import annotations

import json
import math
import os
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from predictor.results.errors import ResultsError
from predictor.results.formats import ResultFormat
from predictor.results.frame import RawResult
from predictor.results.limited import limit_text
from predictor.results.result_file import MAX_FILE_BYTES, ResultFile
from predictor.util.item_subsets import (
    SUBSET_KEY,
    SubsetRecord,
    SubsetRecordError,
    fraction_stderr,
)
from predictor.util.scratch import sweep_orphans

TOOL = "inspect_ai"
EXTRA_HINT = "pip install 'benchpress-llm[inspect]'"
ZIP_MAGIC = b"PK\x03\x04"
STDERR_METRICS = ("stderr", "bootstrap_stderr")
DEFAULT_REDUCER = "mean"
# metrics on 0-1; `mean` is 0-1 when the scores are (CORRECT/INCORRECT), so it counts as a
# fraction only when its value lies in 0-1; anything else (std, var, counts) is a `value`
FRACTION_METRICS = frozenset({"accuracy", "f1", "exact", "precision", "recall", "f_score"})
FRACTION_SUFFIXES = ("_acc", "_accuracy")
FRACTION_PREFIXES = ("pass_at_", "pass@")
SHOT_ARGS = ("fewshot", "num_fewshot", "n_shot", "shots")

# the zip members Inspect reads with `header_only=True` (inspect_ai.log._recorders.eval):
# the header, else the journal's start and config updates; and the epoch reductions
HEADER_MEMBERS = ("header.json", "reductions.json", "_journal/start.json")
HEADER_MEMBER_PREFIXES = ("_journal/config_updates/",)
# what those members may expand to: a header is KBs to a few MB (its results and plan; the
# samples are other members, never read here)
# the private copy's folder in the temp space, named with the process id, so that a reader killed
# mid-way (kill -9) leaves a folder the next reader removes
SCRATCH_PREFIX = "benchpress-inspect-"
# a JSON log is handed to Inspect whole (its samples too); a .eval zip only with its header
MAX_JSON_LOG_BYTES = 64 * 2**20
MAX_MEMBER_BYTES = 64 * 2**20
MAX_READ_BYTES = 256 * 2**20
EXPANSION_HINT = "an Inspect log's header is small: this is not a log as Inspect wrote it"
STORED, DEFLATED, ZSTD = 0, 8, 93  # the zip compression methods Inspect writes and reads
CHUNK_BYTES = 2**20
ENCRYPTED_FLAG = 0x1


def looks_like(doc: object) -> bool:
    """An Inspect log in JSON: an `eval` spec naming the task and model."""
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        return False
    spec = doc["eval"]
    return "task" in spec and "model" in spec and ("status" in doc or "results" in doc)


def is_inspect_json(head: bytes) -> bool:
    """Whether the opening of a JSON file is an Inspect log's: an object whose first members,
    before any `samples`, include an `eval` object naming the task and the model (Inspect
    writes `version`, `status`, then `eval`)."""
    try:
        text = head.decode("utf-8-sig", errors="ignore")
    except ValueError:
        return False
    decoder = json.JSONDecoder()
    at = len(text) - len(text.lstrip())
    if not text.startswith("{", at):
        return False
    at += 1
    while True:
        at = len(text) - len(text[at:].lstrip())
        try:
            key, at = decoder.raw_decode(text, at)
            at = len(text) - len(text[at:].lstrip())
            if not isinstance(key, str) or not text.startswith(":", at):
                return False
            at = len(text) - len(text[at + 1 :].lstrip())
            value, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):  # cut off by the head, or not JSON
            return False
        if key == "eval":
            return isinstance(value, dict) and "task" in value and "model" in value
        if key == "samples":
            return False
        at = len(text) - len(text[at:].lstrip())
        if not text.startswith(",", at):
            return False
        at += 1


def metric_unit(metric: str, value: float) -> str:
    if (
        metric in FRACTION_METRICS
        or metric.endswith(FRACTION_SUFFIXES)
        or metric.startswith(FRACTION_PREFIXES)
    ):
        return "fraction"
    if metric == "mean" and math.isfinite(value) and 0.0 <= value <= 1.0:
        return "fraction"
    return "value"


def read(file: ResultFile, doc: object | None = None) -> list[RawResult]:
    """The rows of one log (`doc`, the parsed JSON of a `.json` log, is not needed: the log
    is read by Inspect from the same bytes)."""
    log = _read_header(file)
    status = getattr(log, "status", None)
    if status != "success":
        error = getattr(log, "error", None)
        message = getattr(error, "message", None) if error is not None else None
        detail = f": {_short(message)}" if message else ""
        raise ResultsError(
            file.path,
            f"the run did not complete: its status is {status!r}, not 'success'{detail}",
            "status",
            hint="only a finished run has scores; re-run it, or resume it with "
            "`inspect eval-retry` on this log",
        )
    results = getattr(log, "results", None)
    if results is None or not results.scores:
        raise ResultsError(
            file.path,
            "the log holds no results",
            "results.scores",
            hint="was the task run with a scorer? (`inspect score` adds scores to a log)",
        )
    return _rows(file, log)


def _inspect_log_module():
    try:
        import inspect_ai.log as inspect_log  # noqa: PLC0415  # deferred: the optional `inspect` extra
    except ImportError:
        raise ResultsError(
            "inspect",
            "reading Inspect logs needs the `inspect` extra (the inspect_ai package)",
            hint=f"install it with: {EXTRA_HINT}",
        ) from None
    return inspect_log


def _read_header(file: ResultFile):
    """The log header, read by Inspect from a private copy of the bytes (its reader takes a
    path; the user's file is never read a second time). A `.eval` zip is copied with only
    the header's members, once their expanded size is known to be within the caps."""
    is_zip = file.data.startswith(ZIP_MAGIC)
    members = _header_members(file) if is_zip else {}
    if is_zip:
        _check_expansion(file, members)
    elif len(file.data) > MAX_JSON_LOG_BYTES:
        raise ResultsError(
            file.path,
            f"{len(file.data):,} bytes, over the {MAX_JSON_LOG_BYTES // 2**20} MiB limit for an "
            "Inspect JSON log (a .eval log may be larger: only its header is read)",
            hint="convert it with: inspect log convert LOG --to eval --output-dir DIR",
        )
    try:
        inspect_log = _inspect_log_module()
    except ResultsError as exc:
        raise ResultsError(file.path, exc.problem, hint=exc.hint) from None
    sweep_orphans(Path(tempfile.gettempdir()), SCRATCH_PREFIX, stale_unowned=True)
    with tempfile.TemporaryDirectory(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-") as folder:
        copy = Path(folder) / f"log{'.eval' if is_zip else '.json'}"
        if is_zip:
            _copy_members(file, members, copy)
        else:
            copy.write_bytes(file.data)
        try:
            return inspect_log.read_eval_log(str(copy), header_only=True)
        except Exception as exc:  # Inspect raises many kinds; each means "cannot be read"
            invalid = _schema_violation(exc)
            if invalid is not None:
                field, problem = invalid
                raise ResultsError(
                    file.path,
                    f"not a valid Inspect log: {problem}",
                    field,
                    hint="was the log edited after Inspect wrote it? re-export it from the run",
                ) from None
            raise ResultsError(
                file.path,
                f"Inspect cannot read this log: {_reason(exc)}",
                hint="is it a complete log as Inspect wrote it? a log cut short or edited "
                "afterwards (e.g. its `version` removed) cannot be read",
            ) from None


# ----------------------------------------------------------------------------- .eval zips
def _unreadable(file: ResultFile, problem: str) -> ResultsError:
    return ResultsError(
        file.path,
        f"Inspect cannot read this log: {problem}",
        hint="is it a complete log as Inspect wrote it? a log cut short or edited "
        "afterwards cannot be read",
    )


def _wanted(name: bytes) -> bool:
    text = name.decode("latin-1")  # the wanted names are ASCII: no other bytes spell them
    return text in HEADER_MEMBERS or text.startswith(HEADER_MEMBER_PREFIXES)


def _end_record(file: ResultFile) -> tuple[int, int]:
    """(offset, size) of the central directory, found as Inspect finds it: an end record
    ending the file, else the last one within the comment's reach; ZIP64 where it says so."""
    data = file.data
    end = len(data) - 22
    if end < 0 or data[end : end + 4] != b"PK\x05\x06" or data[-2:] != b"\x00\x00":
        end = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 0xFFFF))
    if end < 0 or end + 22 > len(data):
        raise _unreadable(file, "the zip's end record is missing (cut short?)")
    entries, size, offset = struct.unpack_from("<HII", data, end + 10)
    if entries == 0xFFFF or 0xFFFFFFFF in (size, offset):
        locator = end - 20
        if locator < 0 or data[locator : locator + 4] != b"PK\x06\x07":
            raise _unreadable(file, "the zip's ZIP64 end record is missing")
        (record,) = struct.unpack_from("<Q", data, locator + 8)
        if record + 56 > len(data) or data[record : record + 4] != b"PK\x06\x06":
            raise _unreadable(file, "the zip's ZIP64 end record is damaged")
        size, offset = struct.unpack_from("<QQ", data, record + 40)
    if offset + size > len(data):
        raise _unreadable(file, "the zip's directory lies past the end of the file (cut short?)")
    return offset, size


def _header_members(file: ResultFile) -> dict[str, tuple[int, int, int]]:
    """name -> (compression method, compressed size, local header offset) of the members
    Inspect reads for the header, from the zip's central directory (a name listed twice is
    its last entry, as Inspect takes it). Only those entries are kept: a directory of
    millions of sample entries costs no memory."""
    data = file.data
    offset, size = _end_record(file)
    members: dict[str, tuple[int, int, int]] = {}
    pos, stop = offset, offset + size
    while pos + 46 <= stop and data[pos : pos + 4] == b"PK\x01\x02":
        flags, method = struct.unpack_from("<HH", data, pos + 8)
        packed, unpacked, name_len, extra_len, comment_len = struct.unpack_from(
            "<IIHHH", data, pos + 20
        )
        (local,) = struct.unpack_from("<I", data, pos + 42)
        name = data[pos + 46 : pos + 46 + name_len]
        if _wanted(name):
            if flags & ENCRYPTED_FLAG:
                raise _unreadable(file, f"{name.decode('latin-1')} is encrypted")
            if 0xFFFFFFFF in (unpacked, packed, local):
                extra = data[pos + 46 + name_len : pos + 46 + name_len + extra_len]
                packed, local = _zip64_sizes(extra, unpacked, packed, local)
            members[name.decode("latin-1")] = (method, packed, local)
        pos += 46 + name_len + extra_len + comment_len
    return members


def _zip64_sizes(extra: bytes, unpacked: int, packed: int, local: int) -> tuple[int, int]:
    """(compressed size, local header offset) with the ZIP64 extra field's values, read in
    the order the format gives them (uncompressed size, compressed size, offset), each only
    where the directory entry holds 0xFFFFFFFF."""
    i = 0
    while i + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, i)
        if tag == 0x0001:
            fields = list(
                struct.unpack_from(f"<{min(length, len(extra) - i - 4) // 8}Q", extra, i + 4)
            )
            if unpacked == 0xFFFFFFFF and fields:
                fields.pop(0)
            if packed == 0xFFFFFFFF and fields:
                packed = fields.pop(0)
            if local == 0xFFFFFFFF and fields:
                local = fields.pop(0)
            break
        i += 4 + length
    return packed, local


def _compressed(file: ResultFile, name: str, member: tuple[int, int, int]) -> memoryview:
    """A member's compressed bytes, where Inspect takes them: after the local header at the
    directory's offset, as many as the directory says."""
    _, packed, local = member
    data = file.data
    if local + 30 > len(data) or data[local : local + 4] != ZIP_MAGIC:
        raise _unreadable(file, f"the local header of {name} is missing")
    name_len, extra_len = struct.unpack_from("<HH", data, local + 26)
    start = local + 30 + name_len + extra_len
    if start + packed > len(data):
        raise _unreadable(file, f"{name} runs past the end of the file (cut short?)")
    return memoryview(data)[start : start + packed]


def _expand(file: ResultFile, name: str, member: tuple[int, int, int]) -> Iterator[bytes]:
    """A member's expanded bytes, a chunk of at most CHUNK_BYTES at a time."""
    method = member[0]
    raw = _compressed(file, name, member)
    try:
        if method == STORED:
            for start in range(0, len(raw), CHUNK_BYTES):
                yield bytes(raw[start : start + CHUNK_BYTES])
        elif method == DEFLATED:
            inflater = zlib.decompressobj(-15)
            for start in range(0, len(raw), CHUNK_BYTES):
                pending = raw[start : start + CHUNK_BYTES]
                while pending:
                    yield inflater.decompress(pending, CHUNK_BYTES)
                    pending = inflater.unconsumed_tail
            yield inflater.flush()
        elif method == ZSTD:
            yield from _zstd_chunks(file, raw)
        else:
            raise _unreadable(
                file,
                f"{name} is compressed with zip method {method}; Inspect writes stored, "
                "deflate or zstd members",
            )
    except zlib.error as exc:
        raise _unreadable(file, f"{name} is not valid deflate data ({exc})") from None


def _zstd_chunks(file: ResultFile, raw: memoryview) -> Iterator[bytes]:
    try:
        import zstandard  # noqa: PLC0415  # deferred: installed with the `inspect` extra
    except ImportError:
        raise ResultsError(
            file.path,
            "reading zstd-compressed Inspect logs needs the `inspect` extra (zstandard)",
            hint=f"install it with: {EXTRA_HINT}",
        ) from None
    decompressor = zstandard.ZstdDecompressor(max_window_size=MAX_MEMBER_BYTES)
    try:
        with decompressor.stream_reader(raw, read_across_frames=True) as reader:
            while chunk := reader.read(CHUNK_BYTES):
                yield chunk
    except zstandard.ZstdError as exc:
        raise _unreadable(file, f"a member is not valid zstd data ({exc})") from None


def _check_expansion(file: ResultFile, members: dict[str, tuple[int, int, int]]) -> None:
    """Expand every member Inspect will read, counting (and dropping) the bytes: past a cap
    the file is refused before anything is kept."""
    total = 0
    for name, member in members.items():
        size = 0
        for chunk in _expand(file, name, member):
            size += len(chunk)
            total += len(chunk)
            if size > MAX_MEMBER_BYTES:
                raise ResultsError(
                    file.path,
                    f"the member expands past {MAX_MEMBER_BYTES // 2**20} MiB when decompressed",
                    name,
                    hint=EXPANSION_HINT,
                )
            if total > MAX_READ_BYTES:
                raise ResultsError(
                    file.path,
                    f"the members Inspect reads expand past {MAX_READ_BYTES // 2**20} MiB in "
                    "all when decompressed",
                    name,
                    hint=EXPANSION_HINT,
                )


def _copy_members(file: ResultFile, members: dict[str, tuple[int, int, int]], copy: Path) -> None:
    """The zip Inspect reads: the checked members, stored uncompressed."""
    with zipfile.ZipFile(copy, "w", zipfile.ZIP_STORED) as archive:
        for name, member in members.items():
            with archive.open(name, "w") as target:
                for chunk in _expand(file, name, member):
                    target.write(chunk)


# Inspect's log sections, by the name of the model class that validates them
SECTIONS = {
    "EvalResults": "results",
    "EvalSpec": "eval",
    "EvalStats": "stats",
    "EvalPlan": "plan",
    "EvalError": "error",
}


def _schema_violation(exc: BaseException) -> tuple[str, str] | None:
    """(field, problem) of a pydantic validation error in the chain (a value of the wrong
    type, a missing field), else None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        errors = getattr(exc, "errors", None)
        title = getattr(exc, "title", None)
        if callable(errors) and isinstance(title, str):
            try:
                found = list(errors())
            except Exception:  # not pydantic's errors() after all
                found = []
            if found:
                locations = [tuple(str(p) for p in e.get("loc", ())) for e in found]
                common = os.path.commonprefix(locations)  # element-wise, on tuples too
                field = ".".join([SECTIONS.get(title, title), *common])
                message = found[0].get("msg", "invalid value")
                return field, f"{message} (got {_short(repr(found[0].get('input')), 80)})"
        exc = exc.__cause__ or exc.__context__
    return None


def _reason(exc: BaseException) -> str:
    """The innermost message (Inspect wraps the cause in 'Unable to read log file')."""
    messages = []
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        text = str(exc).strip()
        if text:
            messages.append(text)
        exc = exc.__cause__ or exc.__context__
    inner = [m for m in messages if not m.startswith("Unable to read log file")]
    return _short((inner or messages or ["unknown error"])[-1])


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _installed_version() -> str | None:
    try:
        return version("inspect_ai")
    except PackageNotFoundError:
        return None


def _rows(file: ResultFile, log) -> list[RawResult]:
    spec = log.eval
    packages = getattr(spec, "packages", None) or {}
    tool_version = packages.get("inspect_ai")
    version_from = "log"
    if not tool_version:
        tool_version, version_from = _installed_version(), "installed inspect_ai"
    task_args = getattr(spec, "task_args", None) or {}
    shots = [task_args.get(k) for k in SHOT_ARGS if k in task_args]
    n_shot = next((s for s in shots if isinstance(s, int) and not isinstance(s, bool)), None)
    config = getattr(spec, "config", None)
    limit = limit_text(getattr(config, "limit", None))
    limited = _limited(getattr(config, "limit", None), getattr(spec, "dataset", None))
    items_total, subset = _subset(file, spec) if not limited else (None, None)
    results = log.results
    rows: dict[str, RawResult] = {}
    for index, score in enumerate(results.scores):
        stderr = _stderr(score.metrics)
        n = (
            score.scored_samples
            if score.scored_samples is not None
            else (results.completed_samples)
        )
        reducer = score.reducer if score.reducer not in (None, DEFAULT_REDUCER) else None
        prefix = f"{score.name}/{reducer}" if reducer else score.name
        for key, metric in score.metrics.items():
            if key in STDERR_METRICS or metric.name in STDERR_METRICS:
                continue
            name = f"{prefix}/{key}"
            value = float(metric.value) if metric.value is not None else None
            unit = metric_unit(key, value) if value is not None else "value"
            row = RawResult(
                model=spec.model,
                task=spec.task,
                metric=name,
                value=value,
                unit=unit,
                tool=TOOL,
                format=FORMAT.id,
                tool_version=tool_version,
                stderr=fraction_stderr(value, n, unit) if stderr is None and subset else stderr,
                n=n,
                n_shot=n_shot,
                evaluated_at=spec.created,
                limit=limit,
                limited=limited,
                items_total=items_total,
                subset=subset,
                extra={
                    "scorer": score.scorer,
                    "reducer": score.reducer,
                    "eval_id": getattr(spec, "eval_id", None),
                    "run_id": getattr(spec, "run_id", None),
                    "task_version": getattr(spec, "task_version", None),
                    "epochs": getattr(config, "epochs", None),
                    "tool_version_from": version_from,
                },
            )
            if name in rows and not _same(rows[name].value, value):
                raise ResultsError(
                    file.path,
                    f"metric {name!r} is reported twice with different values: "
                    f"{rows[name].value!r} and {value!r}",
                    f"results.scores[{index}].metrics.{key}",
                    hint="was the log edited? re-export it from Inspect",
                )
            rows[name] = row
    return list(rows.values())


def _limited(limit: object, dataset: object) -> bool:
    """Whether the eval's `limit` (a count, or a `(start, stop)` range of the dataset's
    samples) left out samples: not when the dataset is known to fit within it."""
    if limit is None:
        return False
    samples = getattr(dataset, "samples", None)
    if not isinstance(samples, int) or isinstance(samples, bool):
        return True
    if isinstance(limit, int) and not isinstance(limit, bool):
        return limit < samples
    if isinstance(limit, list | tuple) and len(limit) == 2:
        start, stop = limit
        whole = isinstance(start, int) and isinstance(stop, int) and start <= 0 and stop >= samples
        return not whole
    return True


def _subset(file: ResultFile, spec) -> tuple[int | None, str | None]:
    """(the dataset's size, which subset) of an eval run on chosen samples
    (`config.sample_id`) that left some of its dataset out; (None, None) otherwise."""
    config = getattr(spec, "config", None)
    chosen = getattr(config, "sample_id", None)
    dataset = getattr(spec, "dataset", None)
    total = getattr(dataset, "samples", None)
    if chosen is None or not isinstance(total, int) or isinstance(total, bool):
        return None, None
    ids = getattr(dataset, "sample_ids", None)
    scored = len(ids) if isinstance(ids, list) else len(chosen) if isinstance(chosen, list) else 1
    if scored >= total:
        return None, None
    recorded = (getattr(spec, "metadata", None) or {}).get(SUBSET_KEY)
    if recorded is None:
        return total, "not recorded (samples chosen outside benchpress)"
    try:
        record = SubsetRecord.from_json(recorded, f"eval.metadata.{SUBSET_KEY}")
    except SubsetRecordError as exc:
        raise ResultsError(
            file.path,
            f"a broken subset record: {exc}",
            exc.field,
            hint="benchpress run --items writes it; was the log edited? re-run the task",
        ) from None
    if record.scored != scored:
        raise ResultsError(
            file.path,
            f"the subset record names {record.scored} samples, the eval ran {scored}",
            f"eval.metadata.{SUBSET_KEY}.scored",
            hint="was the log edited? re-run the task",
        )
    return total, record.provenance()


def _stderr(metrics) -> float | None:
    for key, metric in metrics.items():
        if key in STDERR_METRICS or metric.name in STDERR_METRICS:
            value = metric.value
            if isinstance(value, int | float) and math.isfinite(value):
                return float(value)
    return None


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))


# bytes: a log is read for its header only (never its samples), so it keeps the cap of any
# file; a JSON log is further held to MAX_JSON_LOG_BYTES (`_read_header`)
FORMAT = ResultFormat(
    id="inspect",
    label="Inspect",
    noun="an Inspect log",
    known_as="an Inspect log (.eval or .json)",
    max_bytes=MAX_FILE_BYTES,
    read=read,
    looks_like=looks_like,
    opening=is_inspect_json,  # a JSON log too large to parse whole: only its header is read
    own_suffixes=(".eval",),
    magic=ZIP_MAGIC,  # a .eval log is a zip, whatever its name
    suffixes=(".eval", ".json"),
    task_map="inspect",
    preload=("inspect_ai.log",),  # deferred in `_inspect_log_module`: the `inspect` extra
)
