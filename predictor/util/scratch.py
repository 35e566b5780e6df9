"""Scratch folders named after the process that made them, and removing those whose process
has ended: a process killed with -9 cannot clean up after itself, so the next one does."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

STALE_SECONDS = 3600.0  # a scratch folder without a process id this old is left over


def process_alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, killed and not yet waited for, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def owner_pid(name: str, prefix: str) -> int | None:
    """The process id in `<prefix><pid>` or `<prefix><pid>-<anything>`, else None."""
    if not name.startswith(prefix):
        return None
    text = name[len(prefix) :].split("-", 1)[0]
    return int(text) if text.isdigit() else None


def sweep_orphans(root: Path, prefix: str, stale_unowned: bool = False) -> list[Path]:
    """Remove the folders in `root` named `<prefix><pid>...` whose process no longer runs
    (with `stale_unowned`, also those named `<prefix>...` without a process id that are older
    than `STALE_SECONDS`, left by earlier versions); the folders removed."""
    removed: list[Path] = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(prefix) or entry.is_symlink() or not entry.is_dir():
            continue
        pid = owner_pid(entry.name, prefix)
        if pid is None:
            if not stale_unowned or not _older_than(entry, STALE_SECONDS):
                continue
        elif process_alive(pid):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def _older_than(path: Path, seconds: float) -> bool:
    try:
        return time.time() - path.stat().st_mtime > seconds
    except OSError:
        return False
