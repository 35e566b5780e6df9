"""Old import path of `predictor.names.families`, kept for one release: import from there."""

import warnings

from predictor.names.families import *  # noqa: F403  (its public names, as before)

warnings.warn(
    "predictor.families moved to predictor.names.families; the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
