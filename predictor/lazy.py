"""Package attributes imported on first use (PEP 562), for the packages whose names are the
public API: `from predictor import BenchPress` imports `predictor.api` then, so `benchpress
--help` and a submodule's importers load no numpy or Polars before they need them."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(`__getattr__`, `__dir__`) for `package`, whose `exports` map each public name to the
    module it comes from; a name once imported is kept in `namespace` (the package's
    globals), so later lookups do not come back here."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
