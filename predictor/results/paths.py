"""Files, folders and glob patterns -> the result files to read, each read once, size-capped."""

from __future__ import annotations

import glob
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from predictor.results.errors import ResultsError

MAX_FILE_BYTES = 256 * 1024 * 1024  # an Inspect .eval log with samples can be large
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


def expand_paths(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    """Every result file named by `paths`: a file as is, a folder searched recursively for
    `*.json`, `*.eval` and `*.csv` (outside its hidden folders), a glob pattern
    (`ckpts/step-*/results*.json`, `**` allowed).

    The order is the order given, each folder's and pattern's files sorted; a file named twice
    is read once. A name that matches nothing is an error (a typo must not predict from
    fewer files than meant)."""
    if isinstance(paths, str | Path):
        paths = [paths]
    found: dict[Path, None] = {}
    for given in paths:
        text = str(given)
        if not text.strip():
            raise ResultsError(text, "empty path", hint="name a results file, folder or glob")
        path = Path(text).expanduser()
        if path.is_dir():
            matches = sorted(
                p
                for p in path.rglob("*")
                if p.suffix.lower() in RESULT_SUFFIXES
                and p.is_file()
                and not _hidden(p.relative_to(path))
            )
            if not matches:
                raise ResultsError(
                    text,
                    "the folder holds no *.json, *.eval or *.csv file",
                    hint="name the results files themselves",
                )
        elif path.is_file():
            matches = [path]
        elif _GLOB_CHARS & set(text):
            matches = sorted(Path(p) for p in glob.glob(str(path), recursive=True))
            matches = [p for p in matches if p.is_file()]
            if not matches:
                raise ResultsError(text, "the pattern matches no file")
        elif path.exists():
            raise ResultsError(text, "not a regular file or folder")
        else:
            raise ResultsError(text, "no such file or folder")
        for match in matches:
            found.setdefault(match, None)
        if len(found) > MAX_FILES:
            raise ResultsError(text, f"more than {MAX_FILES:,} files", hint="name fewer files")
    return list(found)


def read_file(path: Path) -> ResultFile:
    """The file's bytes, refusing what is not a regular file or is over the size cap before
    reading it whole."""
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
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:  # grew while we looked
        raise ResultsError(str(path), f"over the {MAX_FILE_BYTES // 2**20} MiB limit")
    return ResultFile(str(path), data)
