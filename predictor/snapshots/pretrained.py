"""Named snapshots bundled with the package, for `BenchPress.from_pretrained(name)`.

A name is a pinned, immutable snapshot directory under `predictor/data/pretrained/`, with
its own fit. The registry pins each one's content hash (the hash over its data files, as in
every manifest) and its manifest digest (over the manifest itself: counts, quality figures,
description), so a name always loads the same matrix, fit and figures: a directory whose files
or manifest do not match the pins is refused (`SnapshotError`), never loaded under the name.

| name                      | what it is                                                      |
|---------------------------|-----------------------------------------------------------------|
| `microsoft/benchpress-v1` | the BenchPress paper's score matrix alone (84 models x 133      |
|                           | benchmarks, 2,604 cells; arXiv:2606.24020), fitted on its own   |

How each is built (reproducibly, from the recorded payloads in the repo):
`python -m pipelines.bundle_pretrained`. Names match ignoring case (`Microsoft/BenchPress-v1`).
Other `from_pretrained` arguments (a calendar version, "latest", a snapshot directory) are
not names and keep working as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from predictor.snapshots.reader import SnapshotError, verify_snapshot

# `owner/name`, as model hubs spell it: a string of this shape that is neither a registered
# name nor an existing directory is a mistyped name, not a version or a path.
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class Pretrained:
    name: str
    directory: str  # under pretrained_root()
    content_hash: str  # the manifest's content hash: pinned, checked on every load
    digest: str  # the manifest's own digest (`predictor.snapshots.reader.manifest_digest`): pinned
    description: str


PRETRAINED: dict[str, Pretrained] = {
    entry.name: entry
    for entry in (
        Pretrained(
            name="microsoft/benchpress-v1",
            directory="microsoft-benchpress-v1",
            content_hash="de73b5b45851e08023ce77ca9b5ea531473ad3cde8e18727704a2bdcf466ef2c",
            digest="sha256:9e51f489a9f81a11b187b63e4915db2e2a2d4d3671ed4d9025e7ceb5ca2c707c",
            description="The BenchPress paper score matrix (84 models x 133 benchmarks, "
            "arXiv:2606.24020) on its own, fitted with the default BayesianCompleter.",
        ),
    )
}


def pretrained_root() -> Path:
    """Where the named snapshots ship inside the package."""
    return Path(__file__).parent.parent / "data" / "pretrained"


def pretrained_names() -> list[str]:
    return sorted(PRETRAINED)


def _entry(name: str) -> Pretrained | None:
    wanted = name.strip().casefold()
    return next((e for e in PRETRAINED.values() if e.name.casefold() == wanted), None)


def resolve_pretrained(name: str) -> Path | None:
    """The verified directory of a registered name; None for anything that is not one (a
    version, "latest", a path), so the caller handles those as before.

    A name of hub shape (`owner/name`) that is not registered and is no existing directory
    raises `SnapshotError` listing the registered names: it cannot be a version either."""
    if not isinstance(name, str):
        return None
    entry = _entry(name)
    if entry is None:
        if _HUB_NAME.fullmatch(name.strip()) and not Path(name).exists():
            raise SnapshotError(
                f"unknown pretrained snapshot {name!r}; bundled: {', '.join(pretrained_names())} "
                '(or give a version such as 2026.12.07.3, "latest" or a snapshot directory)'
            )
        return None
    directory = pretrained_root() / entry.directory
    if not directory.is_dir():
        raise SnapshotError(
            f"pretrained snapshot {entry.name} is not installed (no {directory.name} in the "
            "package data); rebuild it with `python -m pipelines.bundle_pretrained`"
        )
    check = verify_snapshot(directory).check
    manifest = check.manifest
    if manifest.get("content_hash") != entry.content_hash:
        found = str(manifest.get("content_hash"))[:12]
        raise SnapshotError(
            f"pretrained snapshot {entry.name}: content {found}... is not the pinned "
            f"{entry.content_hash[:12]}... (rebuilt with other code or data?)"
        )
    if manifest.get("version") != entry.name:
        raise SnapshotError(
            f"pretrained snapshot {entry.name}: its manifest names {manifest.get('version')!r}"
        )
    if check.digest != entry.digest:
        raise SnapshotError(
            f"pretrained snapshot {entry.name}: manifest digest {check.digest} is not the "
            f"pinned {entry.digest} (its manifest was edited, or rebuilt: update the pin)"
        )
    return directory
