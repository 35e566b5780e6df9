"""Old import path of `predictor.names.confusables`, kept for one release: import from there."""

import warnings

from predictor.names.confusables import *  # noqa: F403  (its public names, as before)

warnings.warn(
    "predictor.confusables moved to predictor.names.confusables; "
    "the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
