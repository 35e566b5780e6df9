"""JSON of a results file, parsed with errors that name the file and the place."""

from __future__ import annotations

import json

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
    except RecursionError:
        raise ResultsError(path, "JSON nested too deeply to be a results file") from None
