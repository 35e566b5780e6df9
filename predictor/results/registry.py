"""The results-file formats, one line each (a format's module ends with its `FORMAT`, a
`predictor.results.formats.ResultFormat`). Adding a format: its module, and one line here.

The order is the order of detection. Everything else that depends on the formats is computed
here from their descriptors: the caps of a JSON file told by its opening, the folder suffixes,
the hint for a file of no known format, the page's accept list and labels and the upload
workers' preload. `registered` adds formats for the length of a block (a test's toy format);
the functions below always answer for the formats registered now."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

from predictor.results import eee, helm, inspect_log, lm_eval, tidy
from predictor.results.formats import ResultFormat


def registry(formats: Iterable[ResultFormat]) -> tuple[ResultFormat, ...]:
    """The formats in the order given, checked: an id, or a suffix that tells a format by name
    (`own_suffixes`), claimed twice is an error (detection must never depend on the order
    alone)."""
    found: dict[str, ResultFormat] = {}
    owners: dict[str, str] = {}
    for fmt in formats:
        if fmt.id in found:
            raise ValueError(f"results format {fmt.id!r} is registered twice")
        for suffix in fmt.own_suffixes:
            if suffix in owners:
                raise ValueError(
                    f"results formats {owners[suffix]!r} and {fmt.id!r} both claim {suffix} files"
                )
            owners[suffix] = fmt.id
        found[fmt.id] = fmt
    return tuple(found.values())


FORMATS: tuple[ResultFormat, ...] = registry(
    module.FORMAT
    for module in (
        lm_eval,
        inspect_log,
        eee,
        helm,
        tidy,
    )
)
_active: tuple[ResultFormat, ...] = FORMATS


def formats() -> tuple[ResultFormat, ...]:
    """The formats registered now, in the order of detection."""
    return _active


def get(format_id: str) -> ResultFormat:
    """The registered format `format_id`."""
    for fmt in _active:
        if fmt.id == format_id:
            return fmt
    known = ", ".join(f.id for f in _active)
    raise KeyError(f"no results format {format_id!r} is registered (known: {known})")


@contextlib.contextmanager
def registered(*extra: ResultFormat) -> Iterator[tuple[ResultFormat, ...]]:
    """`extra` formats registered for the block (after the others; one with the id of a format
    already registered takes its place), for detection, caps, reading and the web page alike.
    Process-wide: the web page's parsing processes keep the formats of their modules."""
    global _active
    before = _active
    replacing = {fmt.id: fmt for fmt in extra if any(f.id == fmt.id for f in before)}
    _active = registry(
        [*(replacing.get(f.id, f) for f in before), *(f for f in extra if f.id not in replacing)]
    )
    try:
        yield _active
    finally:
        _active = before


# ------------------------------------------------------------------------ derived views
def one_file_formats() -> tuple[ResultFormat, ...]:
    """The formats read from one file (detected, and accepted by a web page upload)."""
    return tuple(f for f in _active if f.read is not None)


def claimed(name: str, head: bytes) -> ResultFormat | None:
    """The format a file is told to be by its name and opening alone, if any."""
    return next((f for f in one_file_formats() if f.claims(name, head)), None)


def max_json_bytes() -> int:
    """The largest JSON file parsed whole: the largest cap of the formats told by their parsed
    JSON or read as run folders (a format told by its opening may be larger: its reader reads
    only a header)."""
    return max(
        (
            f.max_bytes
            for f in _active
            if f.opening is None and (f.looks_like is not None or f.run_folder is not None)
        ),
        default=0,
    )


def told_by_opening(head: bytes) -> ResultFormat | None:
    """The format whose reader reads only the opening of a JSON file too large to parse
    whole (an Inspect log's header), if `head` opens such a file."""
    return next((f for f in one_file_formats() if f.opening and f.opening(head)), None)


def search_suffixes() -> tuple[str, ...]:
    """The suffixes a folder is searched for."""
    return tuple(dict.fromkeys(s for f in _active for s in f.suffixes))


def upload_suffixes() -> tuple[str, ...]:
    """The suffixes the web page accepts."""
    return tuple(dict.fromkeys(s for f in one_file_formats() for s in f.suffixes))


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])}, or {items[-1]}"


def known_formats() -> str:
    """The hint for a file of no known format: every format, as files of it are known."""
    return _listed([f.known_as for f in _active])


def upload_formats() -> str:
    """What the web page reads, as files of it are known."""
    return _listed([f.known_as for f in one_file_formats()])


def labels() -> dict[str, str]:
    """format id -> the tool as people call it (the page shows it with a file's scores)."""
    return {f.id: f.label for f in _active}


def task_map(format_id: str) -> str | None:
    """The task map of a format (`maps/<name>.csv`); None for a format that has none or is
    not registered now."""
    return next((f.task_map for f in _active if f.id == format_id), None)


def preload_modules() -> tuple[str, ...]:
    """What the web page's parsing processes import before they take a file."""
    return tuple(dict.fromkeys(m for f in _active for m in f.preload))
