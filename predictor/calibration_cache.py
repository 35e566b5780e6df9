"""Fold-in calibrations kept by what they were computed from, when asked for
(`BENCHPRESS_CALIBRATION_CACHE`, a folder).

Calibrating a fit costs twelve more fits (held-out groups and release cuts: see
`predictor.calibration`), three quarters of a refresh's fit. Whatever refits one matrix
several times with the same method, side information and code (a test suite refreshing the
same recorded payloads in many homes, repeated evaluations) can compute it once. The key
covers everything the result depends on: the matrix's bytes, its scales, the method and its
parameters, the side information, the calibration's settings, the predictor package's source
and the NumPy version; arguments it cannot name exactly (an object without a plain value) are
never cached. Entries are JSON with exact floats, written atomically, read back checked and
capped; an unreadable one is computed again and replaced.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from predictor.methods.fold_in_calibration import FoldInCalibration
from predictor.source_digest import source_digest

CACHE_ENV = "BENCHPRESS_CALIBRATION_CACHE"
MAX_ENTRY_BYTES = 1 << 20  # an entry is a few kB: anything larger is not one of ours


class Unnamed(TypeError):
    """An argument without a plain value to key on (the calibration is then computed)."""


def cache_folder(environ: Mapping[str, str] | None = None) -> Path | None:
    """The folder of `BENCHPRESS_CALIBRATION_CACHE`, None when unset (no caching)."""
    value = (os.environ if environ is None else environ).get(CACHE_ENV, "").strip()
    return Path(value) if value else None


def calibration_key(**inputs: Any) -> str:
    """sha256 of `inputs` (arrays by dtype, shape and bytes; containers in order, mappings by
    key), the predictor package's source and the NumPy version."""
    digest = hashlib.sha256()
    _feed(digest, {**inputs, "code": source_digest(("predictor",)), "numpy": np.__version__})
    return digest.hexdigest()


def _feed(digest: Any, value: Any) -> None:
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            _feed(digest, ("object-array", value.shape, value.tolist()))
            return
        array = np.ascontiguousarray(value)
        digest.update(f"array:{array.dtype.str}:{array.shape}:".encode())
        digest.update(array.tobytes())
    elif isinstance(value, Mapping):
        digest.update(b"map:")
        for key in sorted(value, key=str):
            _feed(digest, str(key))
            _feed(digest, value[key])
        digest.update(b";")
    elif isinstance(value, list | tuple):
        digest.update(f"seq:{len(value)}:".encode())
        for item in value:
            _feed(digest, item)
    elif value is None or isinstance(value, bool | int | float | str | np.generic):
        plain = value.item() if isinstance(value, np.generic) else value
        digest.update(f"{type(plain).__name__}:{plain!r};".encode())
    else:
        raise Unnamed(f"cannot key a calibration on a {type(value).__name__}")


def method_identity(completer: Any) -> tuple[str, dict[str, Any]]:
    """(class, parameters) of an unfitted completer: what its fits depend on."""
    kind = type(completer)
    return f"{kind.__module__}.{kind.__qualname__}", dict(completer.get_params())


def cached_calibration(
    inputs: Mapping[str, Any], compute: Callable[[], FoldInCalibration]
) -> FoldInCalibration:
    """`compute()`, or the entry stored for `inputs` (`calibration_key`) in the cache folder;
    without a folder, or with inputs that cannot be keyed, always `compute()`."""
    folder = cache_folder()
    if folder is None:
        return compute()
    try:
        key = calibration_key(**inputs)
    except Unnamed:
        return compute()
    path = folder / f"{key}.json"
    stored = _read(path)
    if stored is not None:
        return stored
    result = compute()
    _write(path, result)
    return result


def _read(path: Path) -> FoldInCalibration | None:
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_ENTRY_BYTES + 1)
        if len(raw) > MAX_ENTRY_BYTES:
            return None
        return FoldInCalibration.from_dict(json.loads(raw))
    except (OSError, ValueError, TypeError, KeyError):
        return None  # missing, partial or not ours: computed again and replaced


def _write(path: Path, result: FoldInCalibration) -> None:
    """Atomically (a temporary file renamed into place); a folder that cannot be written
    leaves the result uncached rather than failing the fit."""
    document = json.dumps(dataclasses.asdict(result), sort_keys=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".entry-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(document)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError:
        return
