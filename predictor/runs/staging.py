"""Where a probe run's files go: `<out>/<task>/`, each moved there only once its task is
complete, from `<out>/.staging/` where the tool writes while it runs (a hidden folder the
results readers skip). A run stopped at any point so leaves only finished tasks in view."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

STAGING = ".staging"


def task_folder(out: Path, task: str) -> Path:
    """`<out>/<task>`, the task's name made safe for a folder (`file.py@name` included)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in task).lstrip(".")
    return out / (safe or "task")


def staging_folder(out: Path, task: str) -> Path:
    """An empty folder of this process for the task's files while it runs."""
    folder = out / STAGING / f"{task_folder(out, task).name}-{os.getpid()}"
    shutil.rmtree(folder, ignore_errors=True)
    return folder


def publish(staging: Path, pattern: str, out: Path, task: str) -> Path:
    """Move the newest file matching `pattern` the tool wrote in `staging` into the task's
    folder (one rename: complete or absent) and drop the staging folder."""
    written = sorted(staging.rglob(pattern))
    if not written:
        raise RuntimeError(f"the tool wrote no {pattern} file for {task}")
    folder = task_folder(out, task)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / written[-1].name
    os.replace(written[-1], target)
    shutil.rmtree(staging, ignore_errors=True)
    return target
