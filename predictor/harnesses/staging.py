"""Where a probe run's files go: `<out>/<task>/`, each moved there only once its task is
complete, from `<out>/.staging/` where the tool writes while it runs (a hidden folder the
results readers skip). A run stopped at any point so leaves only finished tasks in view; a
task that fails has its staging folder removed (`discard`): what a failed run wrote (an error
a server sent back, quoted in a tool's log) stays nowhere on disk.

A run with an item limit (a smoke test) has a folder of its own, `<out>/limited-<N>/`
(`run_folder`): a later full run into the same `--out` never mixes with it, each resumes on
its own, and `--from <out>` uses the full run's scores (the readers mark the smoke test's
rows `limited`, `predictor.results.limited`). A run over a seeded subset of the items
(`--items N`) has one too, `<out>/items-<N>/` (`items-<N>-seed-<S>/` for another seed): it
resumes on its own, and a run over more items is a new folder whose score `--from <out>`
uses over the smaller run's."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from predictor.util.item_subsets import ItemSubset

STAGING = ".staging"
LIMITED_PREFIX = "limited-"


def run_folder(out: Path, limit: int | None, subset: ItemSubset | None = None) -> Path:
    """`out` for a full run, `<out>/limited-<N>` for a run of the first N items per task,
    `<out>/items-<N>` for a seeded subset of N (`ItemSubset.folder`)."""
    if subset is not None:
        return out / subset.folder
    return out if limit is None else out / f"{LIMITED_PREFIX}{int(limit)}"


def task_folder(out: Path, task: str) -> Path:
    """`<out>/<task>`, the task's name made safe for a folder (`file.py@name` included)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in task).lstrip(".")
    return out / (safe or "task")


def staging_folder(out: Path, task: str, pid: int | None = None) -> Path:
    """An empty folder of this process (or of process `pid`: a task's process that ended,
    `predictor.runs.isolation`) for the task's files while it runs."""
    folder = out / STAGING / f"{task_folder(out, task).name}-{pid or os.getpid()}"
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


@contextmanager
def discard(staging: Path) -> Iterator[None]:
    """Remove `staging` (what the tool wrote for a task) when the task fails."""
    try:
        yield
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
