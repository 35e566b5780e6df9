"""Old import path of `predictor.names.resolve`, kept for one release: import from there."""

import warnings

from predictor.names.resolve import *  # noqa: F403  (its public names, as before)

warnings.warn(
    "predictor.resolve moved to predictor.names.resolve; the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
