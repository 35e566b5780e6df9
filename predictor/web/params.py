"""Validate request parameters before they reach the Python API.

Query strings arrive as text; a POST body may carry JSON values (a scores object, a number).
Every endpoint names the parameters it accepts, so a typo (`levle=0.8`) is an error rather than
a silently ignored option, and sizes are bounded so one request cannot ask for unbounded work.
Numbers are plain ASCII decimals (`80`, `-1.5`, `2e3`, and `nan`/`inf` for the Python API to
reject in its own words): not `80_0` or full-width digits, which Python's `float` would accept.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

from predictor.methods.common import check_level
from predictor.snapshots.reader import SnapshotError
from predictor.snapshots.stores import check_version
from predictor.web.errors import bad_request

Params = Mapping[str, object]

MAX_PARAMS = 20
MAX_VALUE_CHARS = 8192
MAX_PROBES = 200
MAX_NAMES = 50
DEFAULT_LEVEL = 0.9
NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?|inf|infinity|nan)")
MAX_K = 20  # probes picked per request: the greedy search costs one pass per probe


def collect(pairs: Iterable[tuple[str, object]]) -> dict[str, object]:
    """Pairs (query string, then body) into a dict; a parameter given twice is an error."""
    params: dict[str, object] = {}
    for name, value in pairs:
        if name in params:
            raise bad_request(f"parameter {name!r} is given more than once")
        if isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
            raise bad_request(f"parameter {name!r} is longer than {MAX_VALUE_CHARS} characters")
        params[name] = value
        if len(params) > MAX_PARAMS:
            raise bad_request(f"more than {MAX_PARAMS} parameters")
    return params


def check_allowed(params: Params, allowed: Iterable[str], endpoint: str) -> None:
    known = sorted(allowed)
    for name in params:
        if name not in known:
            expected = ", ".join(known) or "none"
            raise bad_request(f"unknown parameter {name!r} for {endpoint}; expected: {expected}")


def text(params: Params, name: str, default: str | None = None) -> str | None:
    value = params.get(name, default)
    if value is None:
        return None
    if not isinstance(value, str):
        raise bad_request(f"parameter {name!r} must be a string, got {type(value).__name__}")
    return value


def optional_name(params: Params, name: str, limit: int = 200) -> str | None:
    """An optional short text (a model name, a family, a date): None when absent or blank."""
    value = text(params, name)
    if value is None or not value.strip():
        return None
    if len(value) > limit:
        raise bad_request(f"parameter {name!r} is longer than {limit} characters")
    return value.strip()


SIDE = ("model", "family", "release_date", "base")  # what a new model is folded in with


def side(params: Params) -> dict[str, str | None]:
    """The side information of a new model (`BenchPress.predict(model=, family=,
    release_date=, base=)`): each an optional short text, None when absent or blank; the
    Python API checks the date and resolves the base in its own words."""
    return {name: optional_name(params, name) for name in SIDE}


def required_text(params: Params, name: str) -> str:
    value = text(params, name)
    if value is None or not value.strip():
        raise bad_request(f"parameter {name!r} is required")
    return value.strip()


def version(params: Params) -> str:
    """`latest` (the default) or a calendar version string; checked before any path use."""
    value = (text(params, "version") or "latest").strip() or "latest"
    if value == "latest":
        return value
    try:
        return check_version(value)
    except SnapshotError as exc:
        raise bad_request(str(exc)) from None


def parse_number(text: str) -> float | None:
    """`80`, ` 1.5e2 ` -> a float; None unless plain ASCII decimal or exponent notation."""
    stripped = text.strip()
    if NUMBER.fullmatch(stripped.lower()) is None:
        return None
    return float(stripped)


def level(params: Params) -> float:
    """The interval level, within `predictor.methods.common.check_level`'s bounds."""
    number = _number(params, "level")
    if number is None:
        return DEFAULT_LEVEL
    try:
        return check_level(number)  # same bounds and wording as BenchPress.predict
    except ValueError as exc:
        raise bad_request(str(exc)) from None


def _number(params: Params, name: str) -> float | None:
    """A JSON number or numeric text; None when absent or empty."""
    value = params.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise bad_request(f"{name} must be a number, got {value!r}")
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:  # a JSON integer beyond the float range
            return math.inf if value > 0 else -math.inf
    if isinstance(value, str):
        number = parse_number(value)
        if number is None:
            raise bad_request(f"{name} must be a number, got {value!r}")
        return number
    raise bad_request(f"{name} must be a number, got {type(value).__name__}")


def count(params: Params, name: str, default: int, most: int) -> int:
    """A whole number of things (`k=5`); below 1 uses the Python API's wording."""
    number = _number(params, name)
    if number is None:
        return default
    if not math.isfinite(number) or number != int(number):
        raise bad_request(f"{name} must be a whole number, got {params[name]!r}")
    if number < 1:
        raise bad_request(f"{name} must be >= 1, got {number:g}")
    if number > most:
        raise bad_request(f"{name} must be at most {most}, got {number:g}")
    return int(number)


def budget(params: Params) -> float | None:
    """A total cost (None = no limit): finite and positive."""
    number = _number(params, "budget")
    if number is None:
        return None
    if not math.isfinite(number) or number <= 0:
        raise bad_request(f"budget must be a positive number, got {params['budget']!r}")
    return number


# a score's standard error after it: `74±1.5` (in a URL `+` is a space: write `%2B-` or ±)
PLUS_MINUS = ("+/-", "+-", "\u00b1")


def _score_text(value: str) -> object:
    """`80` -> 80.0; `74+-1.5` / `74±1.5` -> [74.0, 1.5] (a score and its standard error);
    text that is not a number stays text, for `BenchPress.predict` to refuse in its words."""
    for sign in PLUS_MINUS:
        score, sep, error = value.partition(sign)
        if sep:
            parts = [score.strip(), error.strip()]
            return [number if (number := parse_number(t)) is not None else t for t in parts]
    number = parse_number(value)
    return value if number is None else number


def scores(params: Params) -> dict[str, object]:
    """Probe scores from `gpqa_diamond=80,hle=20` or a JSON object; a score may carry its
    standard error (`mmlu_pro=74±1.5`, or `[74, 1.5]` in JSON).

    Numeric text becomes a float; anything else is passed through unchanged so that
    `BenchPress.predict` rejects it with the message a Python caller would see."""
    raw = params.get("scores")
    if raw is None or raw == "" or raw == {}:
        raise bad_request("scores is empty: give at least one benchmark=score pair")
    if isinstance(raw, Mapping):
        if len(raw) > MAX_PROBES:
            raise bad_request(f"scores: more than {MAX_PROBES} probes")
        # text values read as in `name=value` pairs: the page's score boxes send `74±1.5`
        return {
            str(name): _score_text(value.strip()) if isinstance(value, str) else value
            for name, value in raw.items()
        }
    if not isinstance(raw, str):
        raise bad_request("scores must be 'name=value,name=value' or an object of name: value")
    result: dict[str, object] = {}
    for part in filter(None, (p.strip() for p in raw.split(","))):
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise bad_request(f"scores: expected name=value, got {part!r}")
        if name in result:
            raise bad_request(f"scores: {name!r} is given twice")
        result[name] = _score_text(value)
        if len(result) > MAX_PROBES:
            raise bad_request(f"scores: more than {MAX_PROBES} probes")
    if not result:
        raise bad_request("scores is empty: give at least one benchmark=score pair")
    return result


def names(params: Params, name: str, required: bool = False, limit: int = MAX_NAMES) -> list[str]:
    """A comma-separated list (or a JSON list) of model or benchmark names, deduplicated."""
    raw = params.get(name)
    if isinstance(raw, list):
        items = raw
    elif isinstance(raw, str):
        items = raw.split(",")
    elif raw is None:
        items = []
    else:
        raise bad_request(f"parameter {name!r} must be a comma-separated list")
    if not all(isinstance(item, str) for item in items):
        raise bad_request(f"parameter {name!r} must list names (strings)")
    found: list[str] = []
    for item in (i.strip() for i in items):
        if item and item not in found:
            found.append(item)
    if required and not found:
        raise bad_request(f"parameter {name!r} is required (comma-separated names)")
    if len(found) > limit:
        raise bad_request(f"parameter {name!r} lists more than {limit} names")
    return found
