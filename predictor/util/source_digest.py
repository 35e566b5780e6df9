"""A digest of the installed packages' source files: another version, or an edited checkout,
computes other results, so whatever is keyed on code includes it."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

# the repository root that holds the packages (pipelines, warehouse, predictor)
SOURCE_ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def source_digest(packages: tuple[str, ...]) -> str:
    """sha256 over the files of `packages` under `SOURCE_ROOT` (relative path and bytes, in
    path order; caches and symlinks left out)."""
    digest = hashlib.sha256()
    for package in packages:
        for path in sorted((SOURCE_ROOT / package).rglob("*")):
            if "__pycache__" in path.parts or not path.is_file() or path.is_symlink():
                continue
            digest.update(str(path.relative_to(SOURCE_ROOT)).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
