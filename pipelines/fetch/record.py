"""Write a source's replay index: which recorded files it has, when recorded, and their sha256.

Usage: python -m pipelines.fetch.record SOURCE_ID RECORDED_AT RELPATH [RELPATH ...]
(RELPATH in the replay root's `<host>/<path>` layout; RECORDED_AT an ISO date or datetime).
Replay uses the recorded time as `fetched_at`, so rebuilding from the same payloads is
byte-for-byte deterministic, and the sha256 catches a recorded file edited by accident.
"""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import UTC, datetime

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT


def recorded_entry(relpath: str, recorded_at: str) -> dict[str, str]:
    when = datetime.fromisoformat(recorded_at)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    data = (DEFAULT_REPLAY_ROOT / relpath).read_bytes()
    return {"recorded_at": when.isoformat(), "sha256": hashlib.sha256(data).hexdigest()}


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    source_id, recorded_at, *relpaths = argv
    out = DEFAULT_REPLAY_ROOT / "_sources" / f"{source_id}.recorded.json"
    existing = json.loads(out.read_text("utf-8")) if out.exists() else {}
    existing.update({rel: recorded_entry(rel, recorded_at) for rel in relpaths})
    out.write_text(json.dumps(existing, indent=2, sort_keys=True) + "\n", "utf-8")
    print(f"wrote {out.name}: {len(existing)} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
