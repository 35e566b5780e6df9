"""Any registered completion method in both protocols of `benchpress evaluate`, by its registry
name (`--methods bayes,als,...`), fitted as the product fits it: with the parts of the matrix's
side information its class uses, so a new method is compared without touching the command.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from predictor.evaluation.future import FitForFuture
from predictor.evaluation.protocols import SideAware
from predictor.fit.completion import Completion, complete_matrix
from predictor.fit.fitting import fit_calibrated
from predictor.methods.base import SIDE_KEYWORDS
from predictor.methods.registry import completer_class, make_completer
from predictor.side_information import DEFAULT_USE, SideInformation, unknown_features


def complete_with_what_it_uses(
    values: np.ndarray, scales: Sequence[str], *, method: str, **kwargs: Any
) -> Completion:
    """`complete_matrix` with a registered `method`, given only the side information its class
    uses (`side_information`); the valid range bounds every method's answers."""
    uses = completer_class(method).side_information | {"lower", "upper"}
    kept = {k: v for k, v in kwargs.items() if k not in SIDE_KEYWORDS or k in uses}
    return complete_matrix(values, scales, method=method, **kept)


def registered_paper(method: str, side: SideInformation, level: float, seed: int) -> SideAware:
    """The paper protocol's fit of a registered method (held-out folds and probes)."""
    params = {"level": level, "random_state": seed}
    return SideAware(side, DEFAULT_USE, params, partial(complete_with_what_it_uses, method=method))


def registered_future(method: str, seed: int = 0) -> FitForFuture:
    """The future protocol's fit of a registered method, as `BenchPress.fit` serves it: new-model
    intervals calibrated when it has a predictive distribution (`fit_calibrated`), each new
    model folded in from its probes with its date inferred, answers inside the valid range."""

    def fit(values, scales, side, level):
        completer, _ = fit_calibrated(
            values, scales, partial(make_completer, method, random_state=seed), side, seed
        )
        bottom = None if side.lower is None else np.nan_to_num(side.lower, nan=-np.inf)
        top = None if side.upper is None else np.nan_to_num(side.upper, nan=np.inf)

        def predict(row, model_side):
            answer = completer.fold_in_summary(row, level, features=unknown_features(completer))
            mean, low, high = answer[:3]
            if bottom is not None and top is not None:
                mean, low, high = (np.clip(a, bottom, top) for a in (mean, low, high))
            return mean, low, high

        return predict

    return fit
