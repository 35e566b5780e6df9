"""Package attributes imported on first use (PEP 562), for the packages whose names are the
public API: `from predictor import BenchPress` imports `predictor.api` then, so `benchpress
--help` and a submodule's importers load no numpy or Polars before they need them."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
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


def moved_module_exports(
    package: str, module: str, namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """`__getattr__` for a package that took the place of module `module`'s old path: any
    name the package lacks comes from `module`, imported on first use (so importing one of the
    package's light submodules loads nothing heavy). A submodule's own name is left to the
    import system."""
    folder = Path(namespace["__file__"]).parent

    def __getattr__(name: str) -> Any:
        if name.startswith("__") or (folder / f"{name}.py").exists():
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
