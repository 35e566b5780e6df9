"""A tidy `model,benchmark,score` table (CSV, or JSON rows) for results from any other tool.

CSV: a header with `model`, `benchmark` and `score` (optional `stderr`, `n`), one row per
score, in the benchmark's own unit (percentages for percent benchmarks). JSON: a list of such
objects, or `{"scores": [...]}`. Benchmark names are resolved against the snapshot later, so
any name or alias the snapshot knows works."""

from __future__ import annotations

import csv
import io
import math

from predictor.results.errors import ResultsError
from predictor.results.formats import ResultFormat
from predictor.results.frame import MAX_COUNT, RawResult
from predictor.results.jsonio import refuse_repeated_keys
from predictor.results.result_file import ResultFile

REQUIRED = ("model", "benchmark", "score")
OPTIONAL = ("stderr", "n")
# rows of one table: a whole public leaderboard is ~30,000; each costs ~30 us to read
# (`benchmarks/reader_limits.py`)
MAX_ROWS = 50_000


def looks_like(doc: object) -> bool:
    rows = doc.get("scores") if isinstance(doc, dict) and set(doc) == {"scores"} else doc
    return (
        isinstance(rows, list)
        and bool(rows)
        and all(isinstance(r, dict) and set(REQUIRED) <= set(r) for r in rows)
    )


def read(file: ResultFile, doc: object | None = None) -> list[RawResult]:
    FORMAT.check_size(file)
    if doc is None:
        return _rows(file, _csv_rows(file), "row")
    rows = doc["scores"] if isinstance(doc, dict) else doc
    if len(rows) > MAX_ROWS:
        raise _too_many(file, "scores" if isinstance(doc, dict) else None)
    refuse_repeated_keys(file.data, file.path)
    return _rows(file, rows, "item")


def _too_many(file: ResultFile, field: str | None) -> ResultsError:
    return ResultsError(
        file.path,
        f"more than {MAX_ROWS:,} rows, the limit for a model,benchmark,score table",
        field,
        hint="split the table into several files",
    )


def _csv_rows(file: ResultFile) -> list[dict[str, str]]:
    try:
        text = file.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ResultsError(file.path, f"not UTF-8 text (byte {exc.start})") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h.strip().lower() for h in reader.fieldnames or []]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise ResultsError(
            file.path,
            f"the CSV header lacks {', '.join(missing)}",
            "line 1",
            hint="a tidy results CSV has the columns model,benchmark,score",
        )
    reader.fieldnames = header
    rows = []
    for row in reader:
        if None in row:  # more cells than the header names
            raise ResultsError(
                file.path, "more cells than header columns", f"line {reader.line_num}"
            )
        rows.append(row)
        if len(rows) > MAX_ROWS:
            raise _too_many(file, f"line {reader.line_num}")
    if not rows:
        raise ResultsError(file.path, "the CSV has a header but no rows")
    return rows


def _number(value: object, file: ResultFile, where: str, column: str) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ResultsError(file.path, f"{column} must be a number, got {value!r}", where)
    try:
        number = float(str(value).strip().rstrip("%")) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        raise ResultsError(file.path, f"{column} must be a number, got {value!r}", where) from None
    if not math.isfinite(number):
        raise ResultsError(file.path, f"{column} must be finite, got {value!r}", where)
    return number


def _rows(file: ResultFile, rows: list, kind: str) -> list[RawResult]:
    out = []
    for number, row in enumerate(rows, start=2 if kind == "row" else 0):
        where = f"line {number}" if kind == "row" else f"scores[{number}]"
        if not isinstance(row, dict):
            raise ResultsError(file.path, "each item must be an object", where)
        model, benchmark = (str(row.get(k) or "").strip() for k in ("model", "benchmark"))
        if not model or not benchmark:
            raise ResultsError(file.path, "model and benchmark must not be empty", where)
        score = _number(row.get("score"), file, where, "score")
        if score is None:
            raise ResultsError(file.path, "score is empty", where)
        n = _number(row.get("n"), file, where, "n")
        if n is not None and not (n.is_integer() and 0 <= n <= MAX_COUNT):
            raise ResultsError(
                file.path,
                f"n must be a whole number from 0 to {MAX_COUNT}, got {row.get('n')!r}",
                where,
            )
        out.append(
            RawResult(
                model=model,
                task=benchmark,
                metric="score",
                value=score,
                unit="value",
                tool="tidy",
                format=FORMAT.id,
                stderr=_number(row.get("stderr"), file, where, "stderr"),
                n=None if n is None else int(n),
                benchmark_id=benchmark,
            )
        )
    return out


# bytes: a table of a whole public leaderboard is ~30,000 rows (~2 MB); the largest allowed
# reads within the time `benchmarks/reader_limits.py` checks
FORMAT = ResultFormat(
    id="tidy",
    label="model,benchmark,score table",
    noun="a model,benchmark,score table",
    known_as="a model,benchmark,score CSV or JSON",
    max_bytes=8 * 2**20,
    read=read,
    looks_like=looks_like,
    own_suffixes=(".csv",),
    suffixes=(".csv", ".json"),
    one_run=False,  # the format for several models' scores
)
