"""Comparing a rebuilt snapshot with a shipped one.

The data files (cells, models, benchmarks, aliases, conflicts) must match byte for byte. The
fitted numbers (fit.json, residuals.parquet, the manifest's quality figures) are the same
computation on the same input, but OpenBLAS picks its kernels by CPU (DYNAMIC_ARCH: Haswell, Zen,
SkylakeX, ...), and a kernel with another FMA order changes the last bits of a float: on one
machine a rebuild is byte for byte the same, across machines it agrees to ~1e-12. So where bytes
differ, those files are compared value by value at a relative tolerance of 1e-9 (a real change
to data, identity tables or the fit moves them by far more)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl

FITTED = ("fit.json", "residuals.parquet")
RTOL = 1e-9


def _close(a: Any, b: Any, where: str) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), f"{where}: keys differ"
        for key in a:
            _close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), f"{where}: lengths differ ({len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, int | float) and isinstance(b, int | float), f"{where}: {a!r} {b!r}"
        assert math.isclose(a, b, rel_tol=RTOL, abs_tol=RTOL), f"{where}: {a!r} vs {b!r}"
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def _same_frame(a: pl.DataFrame, b: pl.DataFrame, name: str) -> None:
    assert a.schema == b.schema, f"{name}: schema differs"
    assert a.height == b.height, f"{name}: {a.height} rows vs {b.height}"
    for column in a.columns:
        left, right = a[column], b[column]
        if left.dtype.is_float():
            diff = ((left - right).abs() <= RTOL * (1.0 + right.abs())) | (
                left.is_null() & right.is_null()
            )
            assert diff.all(), f"{name}: column {column} differs beyond {RTOL:g}"
        else:
            assert left.equals(right), f"{name}: column {column} differs"


def assert_same_content(rebuilt: dict, shipped: dict, rebuilt_dir: Path, shipped_dir: Path):
    """`rebuilt` and `shipped` are the two manifests; raises naming the file that differs."""
    assert sorted(rebuilt["files"]) == sorted(shipped["files"])
    for name, digest in shipped["files"].items():
        if rebuilt["files"][name] == digest:
            continue
        assert name in FITTED, (
            f"{name} differs from the shipped snapshot: rebuild it (`make bundle`) after "
            "changing sources, identity tables or the fit"
        )
        if name.endswith(".json"):
            _close(
                json.loads((rebuilt_dir / name).read_text()),
                json.loads((shipped_dir / name).read_text()),
                name,
            )
        else:
            _same_frame(
                pl.read_parquet(rebuilt_dir / name), pl.read_parquet(shipped_dir / name), name
            )
    _close(rebuilt.get("quality"), shipped.get("quality"), "manifest quality")
