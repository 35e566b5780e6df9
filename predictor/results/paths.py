"""Files, folders and glob patterns -> the result files to read, each read once, size-capped."""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePath

from predictor.results import registry
from predictor.results.errors import ResultsError
from predictor.results.formats import ResultFormat, mib
from predictor.results.inspect_log import is_inspect_json  # noqa: F401  # the old import path
from predictor.results.result_file import HEAD_BYTES, MAX_FILE_BYTES, ResultFile

MAX_FILES = 100_000
_GLOB_CHARS = set("*?[")
# old names, as the built-in formats' descriptors give them (`predictor.results.registry`)
MAX_BYTES = {fmt.id: fmt.max_bytes for fmt in registry.FORMATS}
FORMAT_NAMES = {fmt.id: fmt.noun for fmt in registry.FORMATS}
MAX_JSON_BYTES = registry.max_json_bytes()
RESULT_SUFFIXES = registry.search_suffixes()


def _hidden(relative: Path) -> bool:
    """Inside a hidden folder (`.staging/`, where `benchpress run` keeps unfinished work)."""
    return any(part.startswith(".") for part in relative.parts[:-1])


def _walk(folder: Path) -> list[Path]:
    """The result files under `folder` (outside its hidden folders), sorted. Directory symlinks
    are not followed (two folders linking to each other would never end; a folder linking to
    itself would list each file 40 times); a symlink to a file is listed (and read once:
    `expand_paths` drops a second name of the same file)."""
    found = []
    suffixes = registry.search_suffixes()
    for parent, folders, files in os.walk(folder, followlinks=False):
        folders[:] = [name for name in folders if not name.startswith(".")]
        found.extend(
            path
            for path in (Path(parent, name) for name in files)
            if path.suffix.lower() in suffixes and path.is_file()
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
    the formats' files (`*.json`, `*.eval` and `*.csv`; outside its hidden folders), a glob pattern
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
                names = [f"*{suffix}" for suffix in registry.search_suffixes()]
                listed = " or ".join([", ".join(names[:-1]), names[-1]] if names[1:] else names)
                raise ResultsError(
                    text,
                    f"the folder holds no {listed} file",
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


def check_opening(path: str, size: int, head: bytes) -> ResultFormat | None:
    """The caps a file's name, size and opening decide before it is read whole, and the format
    they tell, if any: a file a format claims by its name or opening is held to that format's
    cap; any other file is JSON, parsed whole only up to `registry.max_json_bytes()` unless
    its opening is one a format reads only the header of (an Inspect log)."""
    fmt = registry.claimed(PurePath(path).name, head)
    if fmt is None and size > registry.max_json_bytes():
        fmt = registry.told_by_opening(head)
        if fmt is None:
            larger = " or ".join(f.noun for f in registry.formats() if f.opening)
            raise ResultsError(
                path,
                f"{size:,} bytes, over the {mib(registry.max_json_bytes())} limit for a JSON "
                f"results file" + (f" (only {larger} may be larger)" if larger else ""),
            )
    if fmt is not None and size > fmt.max_bytes:
        raise fmt.too_large(path, size)
    return fmt


def read_file(path: Path) -> ResultFile:
    """The file's bytes, refusing what is not a regular file or is over the size cap before
    reading it whole: `MAX_FILE_BYTES`, then `check_opening` (a CSV over the tidy cap, a JSON
    file over `MAX_JSON_BYTES` unless it opens as an Inspect log)."""
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
        check_opening(str(path), size, head)
        handle.seek(0)  # read whole in one piece: joining two would hold the bytes twice
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:  # grew while we looked
        raise ResultsError(str(path), f"over the {MAX_FILE_BYTES // 2**20} MiB limit")
    return ResultFile(str(path), data)
