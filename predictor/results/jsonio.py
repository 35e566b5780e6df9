"""JSON of a results file, parsed with errors that name the file and the place."""

from __future__ import annotations

import json
import re
import sys

from predictor.results.errors import ResultsError


def load_json(data: bytes, path: str) -> object:
    """The parsed document; a truncated or malformed file names its line and column."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ResultsError(path, f"not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text)
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

    def pairs(items: list[tuple[str, object]]) -> dict:
        seen: dict[str, object] = {}
        for key, value in items:
            if key in seen:
                raise ResultsError(
                    path,
                    f"the key {key!r} is given twice in one object",
                    key,
                    hint="was the file merged or edited by hand? keep one value",
                )
            seen[key] = value
        return seen

    try:
        json.loads(data.decode("utf-8-sig"), object_pairs_hook=pairs)
    except ResultsError:
        raise
    except (ValueError, RecursionError):  # parsed once already: it cannot fail differently
        return
