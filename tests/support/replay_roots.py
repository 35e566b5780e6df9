"""Replay roots built from the older recorded payloads, for re-ingestion and drift tests.

`older_replay_root(target)` copies the bundled replay root and swaps in, for every source
with an older recorded snapshot (tests/fixtures/older_snapshots), those older files at the
same URLs, dated by their snapshot date, so ingesting it and then the bundled root replays
the leaderboards' real history in order.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath
from pipelines.sources import SOURCES, llm_stats

OLDER = Path(__file__).resolve().parent.parent / "fixtures" / "older_snapshots"
_DATE = re.compile(r"snapshot_(\d{4}-\d{2}-\d{2})")


def _entry(path: Path, when: str) -> dict[str, str]:
    return {"recorded_at": when, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def _swap_llm_stats(snapshot: Path, target: Path, when: str) -> dict[str, dict[str, str]]:
    """The listing and the whole per-model tree of the older llm-stats commit."""
    raw = urlsplit(llm_stats.RAW_BASE)
    data_root = target / raw.netloc / raw.path.lstrip("/") / "data"
    shutil.rmtree(data_root / "organizations", ignore_errors=True)
    shutil.copytree(snapshot / "data" / "organizations", data_root / "organizations")
    listing_rel = replay_relpath(llm_stats.LISTING_URL)
    shutil.copyfile(next(snapshot.glob("tree_listing_*.txt")), target / listing_rel)
    index = {listing_rel: _entry(target / listing_rel, when)}
    for path in sorted((data_root / "organizations").rglob("*")):
        if path.is_file():
            index[str(path.relative_to(target))] = _entry(path, when)
    return index


def older_replay_root(target: Path) -> Path:
    shutil.copytree(DEFAULT_REPLAY_ROOT, target)
    for source_dir in sorted(OLDER.iterdir()):
        if not source_dir.is_dir():
            continue
        snapshot = next(source_dir.glob("snapshot_*"))
        when = datetime.fromisoformat(_DATE.search(snapshot.name).group(1)).replace(tzinfo=UTC)
        stamp = when.isoformat()
        index_path = target / "_sources" / f"{source_dir.name}.recorded.json"
        if source_dir.name == "llm_stats":
            index_path.write_text(json.dumps(_swap_llm_stats(snapshot, target, stamp), indent=1))
            continue
        index = json.loads(index_path.read_text())
        for url in SOURCES[source_dir.name].urls:
            rel = replay_relpath(url)
            older = snapshot / Path(urlsplit(url).path).name
            if older.is_file():
                shutil.copyfile(older, target / rel)
                index[rel] = _entry(target / rel, stamp)
        index_path.write_text(json.dumps(index, indent=1))
    return target
