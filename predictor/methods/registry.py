"""Completion methods by name: adding a method is its module plus one line here.

The name is what `complete_matrix(method=...)`, `BenchPress.fit(method=...)`, `benchpress
evaluate --methods` and a snapshot's fit state use; `DEFAULT_METHOD` is what the pipeline
publishes. Everything else a consumer needs is an attribute of the class (`label` for the
page and `evaluate`, `state_version` for the pipeline's reuse of a fit), checked here at
import so a method cannot be registered without them. `registered(cls)` adds one for a block
(tests, trying a method out).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from predictor.methods.als import LowRankCompleter
from predictor.methods.base import Completer
from predictor.methods.bayesian import BayesianCompleter

METHODS: dict[str, type[Completer]] = {
    "bayes": BayesianCompleter,  # the default: robust Bayesian low-rank with side information
    "als": LowRankCompleter,  # the BenchPress reference recipe, logit bias ALS
}
DEFAULT_METHOD = "bayes"


def check_method(name: str, cls: type[Completer]) -> None:
    """A registered class states its registry `name`, a `label` and an int `state_version`:
    without them the page, `evaluate` or the pipeline's reuse of a fit would miss it."""
    problems = []
    if getattr(cls, "method", None) != name:
        problems.append(f"its `method` is {getattr(cls, 'method', None)!r}, not {name!r}")
    label = getattr(cls, "label", None)
    if not isinstance(label, str) or not label.strip():
        problems.append("it needs a `label` (the name the page and `evaluate` show)")
    version = getattr(cls, "state_version", None)
    if isinstance(version, bool) or not isinstance(version, int):
        problems.append("it needs an int `state_version` (the layout its `to_state` writes)")
    if problems:
        raise TypeError(f"completion method {name!r} ({cls.__qualname__}): {'; '.join(problems)}")


for _name, _cls in METHODS.items():
    check_method(_name, _cls)


@contextmanager
def registered(cls: type[Completer]) -> Iterator[type[Completer]]:
    """`cls` registered under its `method` name for the block, then removed again: how a test
    adds a method without editing `METHODS`. A name already registered is refused."""
    name = getattr(cls, "method", None)
    if not isinstance(name, str) or name in METHODS:
        raise ValueError(f"method {name!r} is already registered or not a name")
    check_method(name, cls)
    METHODS[name] = cls
    try:
        yield cls
    finally:
        del METHODS[name]


def completer_class(method: str) -> type[Completer]:
    """The class registered under `method`; a clear error naming the known ones."""
    try:
        return METHODS[method]
    except (KeyError, TypeError):
        raise ValueError(f"method must be one of {tuple(METHODS)}, got {method!r}") from None


def make_completer(method: str = DEFAULT_METHOD, **params: Any) -> Completer:
    """An unfitted completer of `method` with hyperparameters `params`."""
    return completer_class(method)(**params)


def default_completer(**params: Any) -> Completer:
    """An unfitted completer of the default method."""
    return make_completer(DEFAULT_METHOD, **params)


def completer_from_state(state: dict[str, Any], values: Any) -> Completer:
    """The fitted completer a snapshot's fit state describes (state 1 predates the `method`
    key and is the recipe's)."""
    method = state.get("method", "als") if isinstance(state, dict) else None
    if method not in METHODS:
        raise ValueError(f"unsupported fit state version {state.get('state_version')!r}")
    return METHODS[method].from_state(state, values)
