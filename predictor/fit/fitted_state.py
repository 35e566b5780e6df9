"""Serialise a fitted completer to plain JSON-able data and back (no pickle).

Published snapshots carry this state so a consumer can fold a new model in against the fitted
benchmark parameters, and get intervals, without refitting. Floats are rounded to 10
significant digits so tiny BLAS-order differences between machines do not change a snapshot's
hash. Each method writes and reads its own layout (`Completer.to_state` / `from_state`):
state 1 is the recipe ALS (`predictor.methods.als`), states 2 and 3 the default method
(`predictor.methods.bayesian_state`); the `method` key picks the class.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from predictor.methods.base import Completer
from predictor.methods.registry import completer_from_state


def export_state(model: Completer) -> dict[str, Any]:
    """The fitted completer's state for a snapshot."""
    return model.to_state()


def restore_state(state: dict[str, Any], values: np.ndarray) -> Completer:
    """A completer equivalent to the exported one; `values` are the fitted observed cells."""
    return completer_from_state(state, values)
