"""`ResultFile`: a results file's bytes, read once, and the caps every file shares whatever its
format. It sits below the format modules, so they and the registry of formats can use it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

MAX_FILE_BYTES = 256 * 2**20  # any file: an Inspect log with samples can be large
HEAD_BYTES = 2**20  # the opening a format may be told by before a file is read whole


@dataclass(frozen=True)
class ResultFile:
    """A file's bytes, read once: the same bytes are hashed and parsed."""

    path: str  # as the user named it (or as found under the folder they named)
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()
