"""The tools that run probe benchmarks (`benchpress run`), one module each with the tool's
class and its descriptor (`lm_eval`, `inspect`): see `predictor.harnesses.base` for what a
descriptor says, `predictor.harnesses.tool` for what the class does and
`predictor.harnesses.registry` for the list. `endpoint`, `staging` and `redact` are what the
tools share: the model they are handed, where their files go, the key kept out of output."""

from predictor.harnesses.base import Harness
from predictor.harnesses.registry import (
    DEFAULT_HARNESS,
    HARNESSES,
    either,
    find_harness,
    get_harness,
    harnesses,
    registered,
    task_column_names,
    task_columns,
)

__all__ = [
    "DEFAULT_HARNESS",
    "HARNESSES",
    "Harness",
    "either",
    "find_harness",
    "get_harness",
    "harnesses",
    "registered",
    "task_column_names",
    "task_columns",
]
