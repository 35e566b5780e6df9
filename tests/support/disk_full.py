"""A real full disk for tests: a small tmpfs mounted on a folder, filled to the last byte.

Mounting needs root (CAP_SYS_ADMIN), which CI has (`.ci/run` installs packages with apt-get);
`can_mount()` says whether this machine allows it, so a test can fall back to an injected
error and say so.

`python -m tests.support.disk_full FOLDER real|inject ARGS...` runs `benchpress ARGS` (its own
process, as a user runs it) with the disk full from `published_snapshot`'s crash point on, the
stage boundary right after the publish: `real` fills the filesystem holding FOLDER; `inject`
makes Dagster's SQL storage raise SQLite's own "database or disk is full" error instead.
"""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

CHUNK = b"\0" * 65536


def _mount(folder: Path, size: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )


def can_mount(scratch: Path) -> bool:
    """Can this process mount a tmpfs (root, or CAP_SYS_ADMIN in a container)?"""
    probe = scratch / "mount-probe"
    probe.mkdir(parents=True, exist_ok=True)
    if _mount(probe, "64k").returncode != 0:
        return False
    subprocess.run(["umount", str(probe)], check=False)
    return True


@contextlib.contextmanager
def tiny_filesystem(folder: Path, size: str = "64m") -> Iterator[Path]:
    """`folder` as its own tmpfs of `size` for the block (unmounted afterwards, whatever
    happened; its contents go with it)."""
    folder.mkdir(parents=True, exist_ok=True)
    done = _mount(folder, size)
    if done.returncode != 0:
        raise RuntimeError(f"cannot mount a tmpfs on {folder}: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> Path:
    """Write zeros into `folder/filler` until the filesystem says ENOSPC; returns the file
    (delete it to free the space again)."""
    filler = folder / "filler"
    with open(filler, "ab", buffering=0) as out:
        while True:
            try:
                out.write(CHUNK)
            except OSError:
                break
    for size in (4096, 512, 1):  # the last partial blocks, so not a byte is left
        with contextlib.suppress(OSError), open(filler, "ab", buffering=0) as out:
            while out.write(b"\0" * size):
                pass
    return filler


def _storage_full(*_args: object, **_kwargs: object) -> None:
    import sqlalchemy.exc

    error = sqlite3.OperationalError("database or disk is full")
    raise sqlalchemy.exc.OperationalError("INSERT INTO event_logs ...", {}, error)


def main(argv: list[str]) -> int:
    folder, how, *args = argv
    import sqlalchemy.engine.base

    import pipelines.assets.fit as fit_assets
    from predictor.cli import main as benchpress

    crash_point = fit_assets.crash_point

    def full_after_publish(name: str) -> None:
        crash_point(name)
        if name != "published_snapshot":
            return
        if how == "real":
            fill(Path(folder))
        else:
            sqlalchemy.engine.base.Connection._execute_context = _storage_full  # type: ignore[method-assign]

    fit_assets.crash_point = full_after_publish
    return benchpress(args)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
