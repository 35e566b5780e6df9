"""Old import path of `predictor.names.model_names`, kept for one release: import from there."""

import warnings

from predictor.names.model_names import *  # noqa: F403  (its public names, as before)

warnings.warn(
    "predictor.model_names moved to predictor.names.model_names; "
    "the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
