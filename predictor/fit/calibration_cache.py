"""Fold-in calibrations kept by what they were computed from, when asked for
(`BENCHPRESS_CALIBRATION_CACHE`, a folder).

Calibrating a fit costs twelve more fits (held-out groups and release cuts: see
`predictor.fit.calibration`), three quarters of a refresh's fit. Whatever refits one matrix
several times with the same method, side information and code (a test suite refreshing the
same recorded payloads in many homes, repeated evaluations) can compute it once. The key
covers everything the result depends on: the matrix's bytes, its scales, the method and its
parameters, the side information, the calibration's settings, the predictor package's source
and the NumPy version; arguments it cannot name exactly (an object without a plain value) are
never cached. Entries are JSON with exact floats, written atomically, read back checked and
capped; an unreadable one is computed again and replaced.

An entry is trusted as far as the folder is: a folder another user could write to (group- or
other-writable, or owned by someone else than you or root) is not used at all, with a
`CalibrationCacheWarning` (a planted entry doubled every interval of a fit, silently). An entry
is used only when it names the key it was looked up by, is at most `MAX_ENTRY_BYTES`, and its
tables have the strata and levels of this code with every factor finite and in
`FACTOR_RANGE`, the factor 1 where a stratum had too few residuals; anything else is computed
again and replaced. A fit that used an entry says so: `FoldInCalibration.cache_key` (and
`BenchPress.fit`'s `manifest["calibration"]`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import stat
import tempfile
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from predictor.methods.fold_in_calibration import (
    KNOWN_STRATA,
    LEVELS,
    MIN_RESIDUALS,
    FoldInCalibration,
)
from predictor.util.source_digest import source_digest

CACHE_ENV = "BENCHPRESS_CALIBRATION_CACHE"
MAX_ENTRY_BYTES = 64 << 10  # an entry is a few kB: anything larger is not one of ours
ENTRY_FORMAT = 2  # entries name their key (format 1, without it, is computed again)

logger = logging.getLogger(__name__)


class CalibrationCacheWarning(UserWarning):
    """The calibration cache folder is not used: others could write to it."""


class Unnamed(TypeError):
    """An argument without a plain value to key on (the calibration is then computed)."""


def cache_folder(environ: Mapping[str, str] | None = None) -> Path | None:
    """The folder of `BENCHPRESS_CALIBRATION_CACHE`, None when unset (no caching)."""
    value = (os.environ if environ is None else environ).get(CACHE_ENV, "").strip()
    return Path(value) if value else None


def folder_problem(folder: Path) -> str | None:
    """Why `folder` cannot be trusted with calibrations, None when it can: a directory (or
    none yet: it is created private) that only its owner, you or root, can write to."""
    try:
        info = folder.stat()
    except OSError:
        return None  # missing (created private on the first write) or unreachable (unused)
    if not stat.S_ISDIR(info.st_mode):
        return None  # a file there: nothing is read, and writing fails (uncached)
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022:
        who = " and ".join(w for w, bit in (("group", 0o020), ("others", 0o002)) if mode & bit)
        return f"it is writable by {who} (mode {mode:o}; make it private: chmod go-w {folder})"
    if hasattr(os, "getuid") and info.st_uid not in (os.getuid(), 0):
        return f"it belongs to another user (uid {info.st_uid})"
    return None


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
    if (problem := folder_problem(folder)) is not None:
        warnings.warn(
            f"{CACHE_ENV} folder {folder} is not used: {problem}; the calibration is computed",
            CalibrationCacheWarning,
            stacklevel=3,
        )
        return compute()
    try:
        key = calibration_key(**inputs)
    except Unnamed:
        return compute()
    path = folder / f"{key}.json"
    stored = _read(path, key)
    if stored is not None:
        logger.info("fold-in calibration read from the cache: %s", path)
        return dataclasses.replace(stored, cache_key=key)
    result = compute()
    _write(path, key, result)
    return result


def _read(path: Path, key: str) -> FoldInCalibration | None:
    """The calibration stored at `path` for `key`, None unless it passes every check (see
    the module doc)."""
    try:
        with path.open("rb") as handle:
            if _writable_by_others(handle):  # the folder is private, but the entry is not
                return None
            raw = handle.read(MAX_ENTRY_BYTES + 1)
        if len(raw) > MAX_ENTRY_BYTES:
            return None
        document = json.loads(raw)
        if document.get("format") != ENTRY_FORMAT or document.get("key") != key:
            return None  # another input's entry, or one from before entries named theirs
        return _checked(FoldInCalibration.from_dict(document["calibration"]))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # missing, partial or not ours: computed again and replaced


def _writable_by_others(handle: Any) -> bool:
    info = os.fstat(handle.fileno())
    foreign = hasattr(os, "getuid") and info.st_uid not in (os.getuid(), 0)
    return bool(stat.S_IMODE(info.st_mode) & 0o022) or foreign


def _checked(calibration: FoldInCalibration) -> FoldInCalibration:
    """`calibration` when it has this code's strata and levels, and factor 1 wherever a
    stratum had fewer than `MIN_RESIDUALS` residuals (as computed); else a ValueError.
    (`from_dict` has checked the tables' shape and that every factor is in its range.)"""
    if calibration.strata != KNOWN_STRATA or calibration.levels != LEVELS:
        raise ValueError("fold-in calibration: strata or levels of another version")
    tables = [(calibration.factors, calibration.residuals)]
    if calibration.release_factors is not None:
        tables.append((calibration.release_factors, calibration.release_residuals or ()))
    for factors, counts in tables:
        if len(counts) != len(factors) or any(n < 0 for n in counts):
            raise ValueError("fold-in calibration: residual counts do not match the strata")
        thin = [row for row, n in zip(factors, counts, strict=True) if n < MIN_RESIDUALS]
        if any(f != 1.0 for row in thin for f in row):
            raise ValueError("fold-in calibration: a factor without the residuals behind it")
    return calibration


def _write(path: Path, key: str, result: FoldInCalibration) -> None:
    """Atomically (a temporary file renamed into place), in a folder created private; a
    folder that cannot be written leaves the result uncached rather than failing the fit."""
    stored = {k: v for k, v in dataclasses.asdict(result).items() if k != "cache_key"}
    document = json.dumps(
        {"format": ENTRY_FORMAT, "key": key, "calibration": stored}, sort_keys=True
    )
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
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
