"""`ResultFormat`: everything the rest of the package needs to know about one results-file
format, said once, at the end of the format's own module (`FORMAT = ResultFormat(...)`).

`predictor.results.registry` lists the formats; detection, the byte caps, the readers, the task
maps, the one-model-per-file rule, the web page's accept list and labels and the upload
workers' preload are all computed from these descriptors, so no other module lists format
ids."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from predictor.results.errors import ResultsError
from predictor.results.frame import RawResult
from predictor.results.result_file import MAX_FILE_BYTES, ResultFile

# (the file, its parsed JSON document or None when the format was told without parsing it)
Reader = Callable[[ResultFile, object | None], list[RawResult]]
_ID = re.compile(r"[a-z][a-z0-9_]*")


def mib(size: int) -> str:
    """A byte count as messages give it: `32 MiB`, `0.5 MiB`."""
    return f"{size / 2**20:g} MiB"


@dataclass(frozen=True)
class RunFolder:
    """How a format whose run is a folder of files, not one file (HELM), is read: a folder's
    files are gathered and read together."""

    member: Callable[[Path], bool]  # a file of such a folder (told by its name and neighbours)
    files: tuple[str, ...]  # the names read; the folder's other files are left alone
    named_alone: tuple[str, ...]  # read from the folder even when only another file was named
    read: Callable[[dict[str, ResultFile]], list[RawResult]]  # base name -> file
    primary: Callable[[dict[str, ResultFile]], ResultFile]  # whose path and sha256 rows carry


@dataclass(frozen=True)
class ResultFormat:
    """One results-file format.

    Text: `label` is the tool as people call it (the page shows it with a file's scores),
    `noun` a file of the format in messages (`over the 8 MiB limit for a model,benchmark,score
    table`), `known_as` how the hint for a file of no known format lists it.

    Reading: `read` reads one file, `run_folder` a folder of files (exactly one of the two; a
    one-file format can be uploaded on the web page). A file is told by its name or opening
    first (`own_suffixes`, `magic`: then it is not parsed as JSON), then a JSON file too large
    to parse whole by its opening (`opening`: the reader reads only a header), then the parsed
    JSON by `looks_like`, in registry order. `max_bytes` caps each file read; `one_run`: a file
    holds one model's run (several models in one are refused); `task_map`: the table in
    `predictor/results/maps/<task_map>.csv` mapping its tasks onto benchmark ids (None: its
    rows name benchmarks themselves).

    `suffixes` are the names its files come under (a folder is searched for them; the page's
    file picker offers them); `preload` the modules its reader imports on first use (deferred),
    which the web page's parsing processes import before they take a file."""

    id: str  # the results frame's `format`
    label: str
    noun: str
    known_as: str
    max_bytes: int
    read: Reader | None = None
    run_folder: RunFolder | None = None
    looks_like: Callable[[object], bool] | None = None
    opening: Callable[[bytes], bool] | None = None
    own_suffixes: tuple[str, ...] = ()
    magic: bytes = b""
    suffixes: tuple[str, ...] = (".json",)
    one_run: bool = True
    task_map: str | None = None
    preload: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        problems = []
        if not _ID.fullmatch(self.id):
            problems.append("id must be lowercase letters, digits and _, starting with a letter")
        problems += [
            f"{name} is empty"
            for name in ("label", "noun", "known_as")
            if not getattr(self, name).strip()
        ]
        if not 0 < self.max_bytes <= MAX_FILE_BYTES:
            problems.append(f"max_bytes must be from 1 to {MAX_FILE_BYTES} (MAX_FILE_BYTES)")
        if (self.read is None) == (self.run_folder is None):
            problems.append("give exactly one reader: read (one file) or run_folder")
        told = self.looks_like or self.opening or self.own_suffixes or self.magic
        if self.read is not None and not told:
            problems.append("a one-file format needs looks_like, opening, own_suffixes or magic")
        if not self.suffixes or any(not re.fullmatch(r"\.[a-z0-9]+", s) for s in self.suffixes):
            problems.append("suffixes must be lowercase file suffixes such as '.json'")
        if not set(self.own_suffixes) <= set(self.suffixes):
            problems.append("own_suffixes must be among suffixes")
        if problems:
            raise ValueError(f"results format {self.id!r}: {'; '.join(problems)}")

    def claims(self, name: str, head: bytes) -> bool:
        """Whether a file is this format's from its name and opening alone."""
        by_name = bool(self.own_suffixes) and name.lower().endswith(self.own_suffixes)
        return by_name or bool(self.magic) and head.startswith(self.magic)

    def too_large(self, path: str, size: int) -> ResultsError:
        return ResultsError(
            path, f"{size:,} bytes, over the {mib(self.max_bytes)} limit for {self.noun}"
        )

    def check_size(self, file: ResultFile) -> None:
        """Refuse a file over the format's byte cap (`max_bytes`)."""
        if len(file.data) > self.max_bytes:
            raise self.too_large(file.path, len(file.data))
