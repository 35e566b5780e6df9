"""Seconds `resolve()` takes to place every recorded leaderboard row (all eleven sources).

python benchmarks/resolve_speed.py            # parses the recorded payloads, then times resolve
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from pipelines.identity.registry import load_registry  # noqa: E402
from pipelines.identity.resolve import resolve  # noqa: E402
from tests.identity.conftest import recorded_scores  # noqa: E402


def main() -> int:
    scores, registry = recorded_scores(), load_registry()
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        out = resolve(scores, registry)
        timings.append(time.perf_counter() - start)
    resolved = out.filter(out["resolution"] == "resolved").height
    print(
        f"resolve: {scores.height:,} source rows ({resolved:,} resolved) in "
        f"{min(timings):.2f} s (best of 3; {', '.join(f'{t:.2f}' for t in timings)})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
