"""Completion methods by name: adding a method is its module plus one line here.

The name is what `complete_matrix(method=...)`, `BenchPress.fit(method=...)`, `benchpress
evaluate` and a snapshot's fit state use; `DEFAULT_METHOD` is what the pipeline publishes.
"""

from __future__ import annotations

from typing import Any

from predictor.methods.als import LowRankCompleter
from predictor.methods.base import Completer
from predictor.methods.bayesian import BayesianCompleter

METHODS: dict[str, type[Completer]] = {
    "bayes": BayesianCompleter,  # the default: robust Bayesian low-rank with side information
    "als": LowRankCompleter,  # the BenchPress reference recipe, logit bias ALS
}
DEFAULT_METHOD = "bayes"


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
