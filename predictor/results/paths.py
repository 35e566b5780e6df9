"""Files, folders and glob patterns -> the result files to read, each read once, size-capped."""

from __future__ import annotations

import fnmatch
import glob
import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from predictor.results.errors import ResultsError

MAX_FILE_BYTES = 256 * 2**20  # any file: an Inspect log with samples can be large
# bytes per file by format (`benchmarks/reader_limits.py` times the largest file each allows).
# lm-eval: KBs to a few MB, ~10-20 MB for a run of many tasks with its `configs`; an Every
# Eval Ever record holds tens of results; a HELM stats.json thousands of stats; a tidy table
# of a whole public leaderboard is ~30,000 rows (~2 MB). An Inspect log is read for its
# header only (never its samples), so it keeps the file cap.
MAX_BYTES = {
    "lm_eval": 32 * 2**20,
    "eee": 8 * 2**20,
    "helm": 16 * 2**20,
    "tidy": 8 * 2**20,
    "inspect": MAX_FILE_BYTES,
}
FORMAT_NAMES = {
    "lm_eval": "an lm-eval results file",
    "eee": "an Every Eval Ever record",
    "helm": "a HELM run file",
    "tidy": "a model,benchmark,score table",
    "inspect": "an Inspect log",
}
# a JSON file is parsed whole to tell its format, except an Inspect log, told by its opening
MAX_JSON_BYTES = max(size for fmt, size in MAX_BYTES.items() if fmt != "inspect")
HEAD_BYTES = 2**20  # where an Inspect JSON log's `version`, `status` and `eval` are found
ZIP_MAGIC = b"PK\x03\x04"
MAX_FILES = 100_000
# what a folder is searched for (a folder may also hold logs, configs and samples)
RESULT_SUFFIXES = (".json", ".eval", ".csv")
_GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class ResultFile:
    """A file's bytes, read once: the same bytes are hashed and parsed."""

    path: str  # as the user named it (or as found under the folder they named)
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def _hidden(relative: Path) -> bool:
    """Inside a hidden folder (`.staging/`, where `benchpress run` keeps unfinished work)."""
    return any(part.startswith(".") for part in relative.parts[:-1])


def _walk(folder: Path) -> list[Path]:
    """The result files under `folder` (outside its hidden folders), sorted. Directory symlinks
    are not followed (two folders linking to each other would never end; a folder linking to
    itself would list each file 40 times); a symlink to a file is listed (and read once:
    `expand_paths` drops a second name of the same file)."""
    found = []
    for parent, folders, files in os.walk(folder, followlinks=False):
        folders[:] = [name for name in folders if not name.startswith(".")]
        found.extend(
            path
            for path in (Path(parent, name) for name in files)
            if path.suffix.lower() in RESULT_SUFFIXES and path.is_file()
        )
    return sorted(found)


def _glob(pattern: str) -> Iterator[str]:
    """`glob.glob(pattern, recursive=True)`, but `**` does not descend into directory symlinks
    (`glob` follows them: a link loop runs until the path is too long, listing the same files
    thousands of times). Names starting with `.` match only a pattern part starting with `.`,
    as with `glob`."""
    path = Path(pattern)
    parts = path.parts[1:] if path.anchor else path.parts
    yield from _select(path.anchor, parts)


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder or os.curdir) as entries:
            return sorted(entries, key=lambda e: e.name)
    except OSError:  # gone, not a folder, not readable: matches nothing, as with `glob`
        return []


def _subfolders(folder: str) -> Iterator[str]:
    """`folder` and every folder under it (not through symlinks, not hidden); a stack, not
    recursion, so a very deep tree is no RecursionError."""
    stack = [folder]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(
            os.path.join(current, entry.name)
            for entry in reversed(_entries(current))
            if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False)
        )


def _select(folder: str, parts: tuple[str, ...]) -> Iterator[str]:
    if not parts:
        yield folder
        return
    part, rest = parts[0], parts[1:]
    if part == "**":
        for sub in _subfolders(folder):
            if rest:
                yield from _select(sub, rest)
            else:  # a trailing `**`: the folders and the files in them
                yield sub
                yield from (
                    os.path.join(sub, e.name)
                    for e in _entries(sub)
                    if not e.name.startswith(".") and not e.is_dir(follow_symlinks=False)
                )
    elif not glob.has_magic(part):
        child = os.path.join(folder, part)
        if rest and os.path.isdir(child) or not rest and os.path.lexists(child):
            yield from _select(child, rest)
    else:
        for entry in _entries(folder):
            if entry.name.startswith(".") and not part.startswith("."):
                continue
            if fnmatch.fnmatch(entry.name, part) and (not rest or entry.is_dir()):
                yield from _select(os.path.join(folder, entry.name), rest)


def expand_paths(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    """Every result file named by `paths`: a file as is, a folder searched recursively for
    `*.json`, `*.eval` and `*.csv` (outside its hidden folders), a glob pattern
    (`ckpts/step-*/results*.json`, `**` allowed). Folder walks and `**` do not follow
    directory symlinks.

    The order is the order given, each folder's and pattern's files sorted; a file named twice
    (under any name: a symlink, `sub/../x.json`) is read once, under the name given first. A
    name that matches nothing is an error (a typo must not predict from fewer files than
    meant)."""
    if isinstance(paths, str | Path):
        paths = [paths]
    found: dict[str, Path] = {}  # real path -> the name first given
    for given in paths:
        text = str(given)
        if not text.strip():
            raise ResultsError(text, "empty path", hint="name a results file, folder or glob")
        path = Path(text).expanduser()
        if path.is_dir():
            matches = [p for p in _walk(path) if not _hidden(p.relative_to(path))]
            if not matches:
                raise ResultsError(
                    text,
                    "the folder holds no *.json, *.eval or *.csv file",
                    hint="name the results files themselves",
                )
        elif path.is_file():
            matches = [path]
        elif _GLOB_CHARS & set(text):
            matches = sorted({Path(p) for p in _glob(str(path))})
            matches = [p for p in matches if p.is_file()]
            if not matches:
                raise ResultsError(text, "the pattern matches no file")
        elif path.exists():
            raise ResultsError(text, "not a regular file or folder")
        else:
            raise ResultsError(text, "no such file or folder")
        for match in matches:
            found.setdefault(os.path.realpath(match), match)
        if len(found) > MAX_FILES:
            raise ResultsError(text, f"more than {MAX_FILES:,} files", hint="name fewer files")
    return list(found.values())


def _mib(size: int) -> str:
    return f"{size / 2**20:g} MiB"


def _too_large(path: str, size: int, fmt: str) -> ResultsError:
    return ResultsError(
        path, f"{size:,} bytes, over the {_mib(MAX_BYTES[fmt])} limit for {FORMAT_NAMES[fmt]}"
    )


def check_size(file: ResultFile, fmt: str) -> None:
    """Refuse a file over its format's byte cap (`MAX_BYTES`)."""
    if len(file.data) > MAX_BYTES[fmt]:
        raise _too_large(file.path, len(file.data), fmt)


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


def check_json_size(file: ResultFile) -> None:
    """A JSON file over `MAX_JSON_BYTES` is read only as an Inspect log (its header, never
    parsed whole); anything else that large is refused."""
    _check_opening(file.path, len(file.data), file.data[:HEAD_BYTES])


def _check_opening(path: str, size: int, head: bytes) -> None:
    """The caps a file's name, size and opening decide, before it is read whole."""
    if head.startswith(ZIP_MAGIC) or path.lower().endswith(".eval"):
        return  # an Inspect .eval log: MAX_FILE_BYTES
    if path.lower().endswith(".csv"):
        if size > MAX_BYTES["tidy"]:
            raise _too_large(path, size, "tidy")
        return
    if size > MAX_JSON_BYTES and not is_inspect_json(head):
        raise ResultsError(
            path,
            f"{size:,} bytes, over the {_mib(MAX_JSON_BYTES)} limit for a JSON results file "
            "(only an Inspect log may be larger)",
        )


def read_file(path: Path) -> ResultFile:
    """The file's bytes, refusing what is not a regular file or is over the size cap before
    reading it whole: `MAX_FILE_BYTES`, a CSV over the tidy cap, a JSON file over
    `MAX_JSON_BYTES` unless it opens as an Inspect log."""
    if path.is_symlink() and not path.resolve().is_file():
        raise ResultsError(str(path), "a link to something that is not a regular file")
    if not path.is_file():
        raise ResultsError(str(path), "not a regular file")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ResultsError(
            str(path),
            f"{size:,} bytes, over the {MAX_FILE_BYTES // 2**20} MiB limit for one results file",
        )
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
        _check_opening(str(path), size, head)
        handle.seek(0)  # read whole in one piece: joining two would hold the bytes twice
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:  # grew while we looked
        raise ResultsError(str(path), f"over the {MAX_FILE_BYTES // 2**20} MiB limit")
    return ResultFile(str(path), data)
