"""`read_results(paths)`: every results file named, read by its format's reader and mapped
onto our benchmark ids, as one tidy frame (`predictor.results.frame.RESULT_SCHEMA`)."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterable, Iterator
from pathlib import Path

import polars as pl

from predictor.read_limits import ReadLimitExceeded, bounded_read
from predictor.results import detect as detection
from predictor.results import helm
from predictor.results.errors import ResultsError
from predictor.results.frame import RawResult, result_frame
from predictor.results.limited import mark_superseded
from predictor.results.mapping import Overrides, map_rows
from predictor.results.paths import MAX_FILE_BYTES, ResultFile, expand_paths, read_file

RUN_FORMATS = ("lm_eval", "inspect", "eee", "helm")  # one file = one model's run


READER_MODULES = {
    "lm_eval": "predictor.results.lm_eval",
    "inspect": "predictor.results.inspect_log",
    "eee": "predictor.results.eee",
    "tidy": "predictor.results.tidy",
}


def _reader(fmt: str):
    return importlib.import_module(READER_MODULES[fmt])


def read_one(file: ResultFile) -> list[RawResult]:
    """The raw rows of one file, whatever tool wrote it."""
    fmt, doc = detection.detect(file)
    rows = _reader(fmt).read(file, doc)
    _one_model(rows, file.path, fmt)
    return rows


def _one_model(rows: list[RawResult], path: str, fmt: str) -> None:
    models = sorted({r.model for r in rows})
    if fmt in RUN_FORMATS and len(models) > 1:
        raise ResultsError(
            path,
            f"the file mixes {len(models)} models ({', '.join(models[:4])})",
            hint="a run file holds one model's results; split it, or use a "
            "model,benchmark,score CSV for several models",
        )


def _helm_runs(paths: list[Path]) -> tuple[list[Path], dict[Path, list[Path]]]:
    """Split off the files of HELM run folders: they are read per folder, not per file."""
    others, runs = [], {}
    for path in paths:
        if detection.is_helm_file(str(path)):
            runs.setdefault(path.parent, []).append(path)
        else:
            others.append(path)
    return others, runs


@contextlib.contextmanager
def _within_limits(what: str) -> Iterator[None]:
    """One file's (or HELM run folder's) reading, held to the process's read limits
    (`predictor.read_limits`: on in a `benchpress` command, off for a library caller)."""
    try:
        with bounded_read(what):
            yield
    except ReadLimitExceeded as exc:
        raise ResultsError(what, str(exc)) from None


def read_result_bytes(name: str, data: bytes, overrides: Overrides | None = None) -> pl.DataFrame:
    """One uploaded file (the web page): its bytes and the name it was uploaded under. A HELM
    run is a folder and cannot come as one file."""
    if len(data) > MAX_FILE_BYTES:
        raise ResultsError(name, f"over the {MAX_FILE_BYTES // 2**20} MiB limit for one file")
    file = ResultFile(name, data)
    return result_frame(map_rows(read_one(file), file, overrides))


def read_results(
    paths: str | Path | Iterable[str | Path], overrides: Overrides | None = None
) -> pl.DataFrame:
    """Read results files (files, folders, globs) into one tidy frame with provenance.

    Every row of every file is kept: `status` says whether it is usable (`mapped`, with our
    `benchmark_id` and `score` in the benchmark's unit) or why not (`unmapped`,
    `other_metric`, `not_run`, `limited`: a smoke test's score where a full run of the same
    model scored the benchmark too). Rows of a run over part of the items are marked
    `limited` (`predictor.results.limited`). A file that cannot be read raises `ResultsError`
    naming it; nothing is returned then (all files or none)."""
    files, runs = _helm_runs(expand_paths(paths))
    rows: list[dict[str, object]] = []
    for path in files:
        with _within_limits(str(path)):
            file = read_file(path)
            rows.extend(map_rows(read_one(file), file, overrides))
    for folder, members in runs.items():
        with _within_limits(str(folder)):
            read = {p.name: read_file(p) for p in members if p.name in helm.READ_FILES}
            for name in ("run_spec.json", "stats.json"):  # named alone, without the folder
                if name not in read and (folder / name).is_file():
                    read[name] = read_file(folder / name)
            raws = helm.read_run(read)
            _one_model(raws, str(folder), "helm")
            rows.extend(map_rows(raws, helm.primary_file(read), overrides))
    return mark_superseded(result_frame(rows))
