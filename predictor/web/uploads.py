"""`POST /api/results`: a results file dropped on the page, read into probe scores.

The page sends the file's bytes to this (local) server, which reads them as `benchpress
predict --from` does (`read_result_bytes`, then `BenchPress.on_snapshot` and
`predictor.results.inputs.summarise`) and answers what the page needs to fill its probe form:
the scores that map onto fitted benchmarks of the snapshot (canonical ids) with their source,
the mapped benchmarks the fit lacks, the tasks that map onto nothing, the notes and the model
the file names. Nothing is kept: the bytes live as long as the request (an Inspect log passes
through a temporary copy for Inspect's own reader, deleted as soon as it is read). A file that
cannot be used is a 400 carrying the reader's message (file, field, what to do)."""

from __future__ import annotations

import threading
from pathlib import PurePosixPath
from typing import Any

from predictor.api import BenchPress
from predictor.results import ResultsError, models_in, read_result_bytes
from predictor.results.inputs import summarise
from predictor.web import figures
from predictor.web.errors import ApiError, bad_request

MAX_UPLOAD_BYTES = 32 * 1024 * 1024  # what the page sends; larger files: the command line
MAX_READS = 2  # files parsed at once (a big JSON log takes memory and a core while it is read)
READ_WAIT_SECONDS = 30.0
MAX_NAME_CHARS = 255
ACCEPTED = (".json", ".eval", ".csv")
FORMATS = (
    "lm-evaluation-harness results_*.json, Inspect logs (.eval or .json), Every Eval Ever "
    "records, model,benchmark,score tables (.csv or .json)"
)


def file_name(raw: str) -> str:
    """The name a file was uploaded under, without any folder (`C:\\x\\r.json` -> `r.json`):
    it picks the reader by its suffix and names the file in messages, never a path here."""
    name = PurePosixPath(raw.replace("\\", "/")).name.strip()
    if name in ("", ".", ".."):
        raise bad_request("parameter 'name' is required: the uploaded file's name")
    if len(name) > MAX_NAME_CHARS:
        raise bad_request(f"parameter 'name' is longer than {MAX_NAME_CHARS} characters")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in name):
        raise bad_request("parameter 'name' holds control characters")
    return name


def describe() -> dict[str, Any]:
    """`GET /api/results`: what the page may send (its size check runs before uploading)."""
    return {"max_bytes": MAX_UPLOAD_BYTES, "accept": list(ACCEPTED), "formats": FORMATS}


def _number(value: Any) -> Any:
    return figures.number(value) if isinstance(value, float) else value


def read_upload(bench: BenchPress, name: str, data: bytes, model: str | None) -> dict[str, Any]:
    """The answer to one upload, for one model of the file (`model`, else the first one; all
    of them are listed in `models` for the page to offer)."""
    if not data:
        raise bad_request(f"{name}: the file is empty")
    if not _reads.acquire(timeout=READ_WAIT_SECONDS):
        raise ApiError(
            503,
            "the server is busy reading other files; try again in a few seconds",
            {"Retry-After": "5"},
        )
    try:
        return _answer(bench, name, data, model)
    finally:
        _reads.release()


def _answer(bench: BenchPress, name: str, data: bytes, model: str | None) -> dict[str, Any]:
    try:
        frame = bench.on_snapshot(read_result_bytes(name, data))
        models = models_in(frame)
        if not models:
            raise ResultsError(name, "the file holds no results")
        inputs = summarise(frame, models[0] if model is None else model)
    except ResultsError as exc:
        raise bad_request(str(exc)) from None
    found = inputs.as_dict()
    first = frame.row(0, named=True)
    return {
        "version": bench.version,
        "file": name,
        "sha256": first["file_sha256"],
        "format": first["format"],
        "tool": first["tool"],
        "tool_version": first["tool_version"],
        "model": inputs.model,
        "models": models,
        "probes": [
            {
                "benchmark": row["benchmark_id"],
                **{k: _number(v) for k, v in row.items() if k in USED},
            }
            for row in inputs.used
        ],
        **{key: found[key] for key in LISTS},
    }


_reads = threading.BoundedSemaphore(MAX_READS)
USED = ("score", "stderr", "task", "metric", "n_shot", "note")  # of each score used
LISTS = ("unmapped", "unmapped_subtasks", "other_metric", "not_run", "not_fitted", "notes")
