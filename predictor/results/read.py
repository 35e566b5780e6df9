"""`read_results(paths)`: every results file named, read by its format's reader and mapped
onto our benchmark ids, as one tidy frame (`predictor.results.frame.RESULT_SCHEMA`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path

import polars as pl

from predictor.results import detect as detection
from predictor.results import registry
from predictor.results.errors import ResultsError
from predictor.results.formats import ResultFormat
from predictor.results.frame import RawResult, result_frame
from predictor.results.limited import mark_superseded
from predictor.results.mapping import Overrides, map_rows
from predictor.results.paths import MAX_FILE_BYTES, ResultFile, expand_paths, read_file
from predictor.util.read_limits import ReadLimitExceeded, bounded_read

# the old name: the built-in formats whose file holds one model's run
RUN_FORMATS = tuple(fmt.id for fmt in registry.FORMATS if fmt.one_run)


def read_one(file: ResultFile) -> list[RawResult]:
    """The raw rows of one file, whatever tool wrote it."""
    found, doc = detection.detect(file)
    fmt = registry.get(found)
    assert fmt.read is not None  # detection tells only the formats read from one file
    fmt.check_size(file)
    rows = fmt.read(file, doc)
    _one_model(rows, file.path, fmt)
    return rows


def _one_model(rows: list[RawResult], path: str, fmt: ResultFormat) -> None:
    models = sorted({r.model for r in rows})
    if fmt.one_run and len(models) > 1:
        several = " or ".join(f.known_as for f in registry.formats() if not f.one_run)
        raise ResultsError(
            path,
            f"the file mixes {len(models)} models ({', '.join(models[:4])})",
            hint="a run file holds one model's results; split it"
            + (f", or use {several} for several models" if several else ""),
        )


def _run_folders(
    paths: list[Path],
) -> tuple[list[Path], dict[tuple[str, Path], list[Path]]]:
    """Split off the files of run folders (HELM's): they are read per folder, not per file."""
    folders = [fmt for fmt in registry.formats() if fmt.run_folder is not None]
    others, runs = [], {}
    for path in paths:
        fmt = next((f for f in folders if f.run_folder and f.run_folder.member(path)), None)
        if fmt is None:
            others.append(path)
        else:
            runs.setdefault((fmt.id, path.parent), []).append(path)
    return others, runs


def _read_run(
    folder: Path, members: list[Path], fmt: ResultFormat, overrides: Overrides | None
) -> list[dict[str, object]]:
    """The mapped rows of one run folder; `members` are its files among those named."""
    run = fmt.run_folder
    assert run is not None
    read = {p.name: read_file(p) for p in members if p.name in run.files}
    for name in run.named_alone:  # named alone, without the folder
        if name not in read and (folder / name).is_file():
            read[name] = read_file(folder / name)
    for name in run.files:
        if name in read:
            fmt.check_size(read[name])
    raws = run.read(read)
    _one_model(raws, str(folder), fmt)
    return map_rows(raws, run.primary(read), overrides)


@contextlib.contextmanager
def _within_limits(what: str) -> Iterator[None]:
    """One file's (or HELM run folder's) reading, held to the process's read limits
    (`predictor.util.read_limits`: on in a `benchpress` command, off for a library caller)."""
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
    files, runs = _run_folders(expand_paths(paths))
    rows: list[dict[str, object]] = []
    for path in files:
        with _within_limits(str(path)):
            file = read_file(path)
            rows.extend(map_rows(read_one(file), file, overrides))
    for (format_id, folder), members in runs.items():
        with _within_limits(str(folder)):
            rows.extend(_read_run(folder, members, registry.get(format_id), overrides))
    return mark_superseded(result_frame(rows))
