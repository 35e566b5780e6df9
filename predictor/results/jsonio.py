"""JSON of a results file, parsed with errors that name the file and the place."""

from __future__ import annotations

import gc
import json
import re
import sys
import threading

from predictor.results.errors import ResultsError

# `{` and `[` in one JSON file (an upper bound of its objects and lists: brackets inside
# strings count too). An empty list costs ~80 bytes parsed, so a file of nothing but `[],`
# would take 25 times its size in memory; a real results file holds far fewer (an lm-eval
# run of thousands of tasks, with its configs, holds ~100,000)
MAX_CONTAINERS = 2_000_000

# per thread, the objects of the most recently parsed document that name a key twice, with the
# bytes they were parsed from: a reader asks for them (`repeated_objects`) instead of parsing
# again
_parsed = threading.local()


def load_json(data: bytes, path: str) -> object:
    """The parsed document; a truncated or malformed file names its line and column."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ResultsError(path, f"not UTF-8 text (byte {exc.start})") from None
    containers = data.count(b"{") + data.count(b"[")
    if containers > MAX_CONTAINERS:
        raise ResultsError(
            path,
            f"{containers:,} JSON objects and lists (`{{` and `[`), over the "
            f"{MAX_CONTAINERS:,} a results file may hold",
        )
    _parsed.last = None
    repeats: list[list[tuple[str, object]]] = []

    def pairs(items: list[tuple[str, object]]) -> dict:
        found = dict(items)
        if len(found) != len(items):
            repeats.append(items)
        return found

    collecting = gc.isenabled()
    gc.disable()  # parsed JSON holds no cycles: collecting while it grows only takes time
    try:
        doc = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        # a string that never closes ran into the end of the text: cut short too
        cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        problem = "truncated JSON" if cut else "malformed JSON"
        raise ResultsError(
            path,
            f"{problem}: {exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}",
            hint="was the file cut short while being written or copied?",
        ) from None
    except ValueError as exc:  # an integer literal past Python's digit limit
        if "digits" not in str(exc):
            raise
        raise _too_many_digits(text, path) from None
    except RecursionError:
        raise ResultsError(path, "JSON nested too deeply to be a results file") from None
    finally:
        if collecting:
            gc.enable()
    _parsed.last = (data, repeats)
    return doc


def repeated_objects(data: bytes, path: str) -> list[list[tuple[str, object]]]:
    """The objects of the JSON document `data` that name a key twice, each as its (key,
    value) pairs in file order (the parser keeps only the last value). Taken from the parse
    `load_json` just made of the same bytes, else parsed now."""
    last = getattr(_parsed, "last", None)
    if last is None or last[0] is not data:
        load_json(data, path)
        last = _parsed.last
    _parsed.last = None
    return last[1]


def _too_many_digits(text: str, path: str) -> ResultsError:
    """Python refuses to convert an integer literal of more digits than its limit (4300 by
    default), without saying where: the literal is found and named by line and column."""
    limit = sys.get_int_max_str_digits()
    found = re.search(rf"\d{{{limit + 1},}}", text)
    if found is None:
        return ResultsError(path, f"an integer of more than the {limit} digits a number may have")
    line = text.count("\n", 0, found.start()) + 1
    column = found.start() - text.rfind("\n", 0, found.start())
    return ResultsError(
        path,
        f"an integer of {len(found.group())} digits at line {line} column {column}: more than "
        f"the {limit} digits a number may have",
    )


def refuse_repeated_keys(data: bytes, path: str) -> None:
    """Refuse a JSON document that names one key twice in an object: the parser keeps only the
    last value, so a file merged or edited by hand would silently lose the first."""

    for items in repeated_objects(data, path):
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                raise ResultsError(
                    path,
                    f"the key {key!r} is given twice in one object",
                    key,
                    hint="was the file merged or edited by hand? keep one value",
                )
            seen.add(key)
