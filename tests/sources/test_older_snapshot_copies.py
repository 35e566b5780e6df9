"""The older recorded payloads the source tests read (tests/fixtures/older_snapshots) are
verbatim copies of the recorded leaderboards beside the checkout: each file's sha256 is the
one `shared/leaderboards/SHA256SUMS` lists for it. Needs `../shared` (skipped naming the path
without it; CI sets BENCHPRESS_REQUIRE_SHARED=1, so there it fails instead)."""

from __future__ import annotations

import hashlib

from tests.support.shared_data import OLDER_SNAPSHOTS, require_shared, shared_leaderboards


def test_older_snapshot_copies_match_the_recorded_leaderboards() -> None:
    sums = require_shared(shared_leaderboards() / "SHA256SUMS")
    listed = {}
    for line in sums.read_text("utf-8").splitlines():
        digest, _, name = line.partition("  ")
        listed[name.removeprefix("./")] = digest
    copies = sorted(p for p in OLDER_SNAPSHOTS.rglob("*") if p.is_file() and p.name != "README.md")
    assert len(copies) == 328
    for path in copies:
        name = path.relative_to(OLDER_SNAPSHOTS).as_posix()
        assert name in listed, f"{name} is not in {sums}"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == listed[name], name
