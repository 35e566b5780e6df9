"""Old import path of `predictor.fit.completion`, kept for one release: import from there."""

import warnings

from predictor.fit.completion import *  # noqa: F403  (its public names, as before)

warnings.warn(
    "predictor.completion moved to predictor.fit.completion; the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
