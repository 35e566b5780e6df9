"""Old import path of `predictor.fit.own_matrix`, kept for one release: import from there."""

import warnings

from predictor.fit.own_matrix import *  # noqa: F403  (its public names, as before)

warnings.warn(
    "predictor.own_matrix moved to predictor.fit.own_matrix; the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
