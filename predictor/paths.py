"""Old import path of `predictor.util.paths`, kept for one release: import from there."""

import warnings

from predictor.util.paths import *  # noqa: F403  (its public names, as before)

warnings.warn(
    "predictor.paths moved to predictor.util.paths; the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
