"""Where tests find recorded leaderboard files, and what happens when they are missing.

- `older_snapshot(source)`: the older recorded copy of a source (`snapshot_<date>/` folders),
  kept verbatim in the repository (tests/fixtures/older_snapshots), so a fresh clone runs every
  test that reads one; nothing skips.
- `require_shared(path)`: a file of the recorded leaderboards beside the checkout
  (`../shared/leaderboards`, or BENCHPRESS_LEADERBOARDS_DIR). Missing, the test is skipped
  with the path in the reason, or fails when BENCHPRESS_REQUIRE_SHARED=1 (CI sets it), so a
  missing folder can never turn a check into a silent skip there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
OLDER_SNAPSHOTS = REPO_ROOT / "tests" / "fixtures" / "older_snapshots"
REQUIRE_ENV = "BENCHPRESS_REQUIRE_SHARED"


def shared_leaderboards() -> Path:
    """BENCHPRESS_LEADERBOARDS_DIR, else `shared/leaderboards` next to the checkout."""
    override = os.environ.get("BENCHPRESS_LEADERBOARDS_DIR", "").strip()
    return Path(override) if override else REPO_ROOT.parent / "shared" / "leaderboards"


def older_snapshot(source: str) -> Path:
    """The folder holding `source`'s older recorded copies (in the repository)."""
    folder = OLDER_SNAPSHOTS / source
    assert folder.is_dir(), f"{folder} is missing from the repository"
    return folder


def require_shared(path: Path) -> Path:
    """`path` if it exists; else skip naming it, or fail with BENCHPRESS_REQUIRE_SHARED=1."""
    if path.exists():
        return path
    message = f"recorded leaderboards not found at {path}"
    if os.environ.get(REQUIRE_ENV, "").strip() == "1":
        pytest.fail(f"{message} ({REQUIRE_ENV}=1: they are required here)", pytrace=False)
    pytest.skip(f"{message} (set {REQUIRE_ENV}=1 to fail instead)")
