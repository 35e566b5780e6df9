"""Build the snapshot that ships inside the package from the recorded payloads (replay).

`python -m pipelines.bundle` (or `make bundle`) runs the refresh job in a temporary
BENCHPRESS_HOME and replaces `predictor/data/snapshots/` with the published version (its data
files, manifest and digest file, verified again where they land), so `BenchPress.load()` works
right after install. A test rebuilds it and compares content hashes.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from pipelines.run import run_refresh
from predictor.snapshots.layout import DIGEST_FILE
from predictor.snapshots.reader import list_versions, verify_snapshot
from predictor.util.paths import bundled_snapshot_dir, snapshot_store_dir


def build_from_replay(home: Path) -> Path:
    """Run the whole job on the embedded default into `home`; the published snapshot's path."""
    outcome = run_refresh(mode="replay", home=home)
    if not outcome.success or outcome.version is None:
        problems = outcome.failed_checks + outcome.failed_steps
        raise RuntimeError("replay refresh did not publish: " + "; ".join(problems))
    return snapshot_store_dir(home) / outcome.version


def main() -> int:
    target_root = bundled_snapshot_dir()
    with tempfile.TemporaryDirectory(prefix="benchpress-bundle-") as tmp:
        built = build_from_replay(Path(tmp) / "home")
        check = verify_snapshot(built, built.name).check
        if not (built / DIGEST_FILE).is_file():
            raise RuntimeError(f"{built} has no {DIGEST_FILE} file: the writer did not sign it")
        for old in list_versions(target_root):
            shutil.rmtree(target_root / old)
        target_root.mkdir(parents=True, exist_ok=True)
        shutil.copytree(built, target_root / built.name)
        for path in (target_root / built.name).iterdir():
            path.chmod(0o644)
        verify_snapshot(target_root / built.name, digest=check.digest)
    content = check.manifest["content_hash"][:12]
    print(f"bundled snapshot {built.name}@{check.digest} (content {content})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
