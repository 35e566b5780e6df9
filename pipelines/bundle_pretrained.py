"""Build the named snapshots that ship with the package (`predictor.snapshots.pretrained`).

`python -m pipelines.bundle_pretrained` rebuilds `microsoft/benchpress-v1`: the BenchPress
paper's score matrix (84 models x 133 benchmarks) on its own, from the recorded payload of the
`benchpress_matrix` source alone, through the code the refresh job uses (the source's parser,
identity resolution with the reviewed registry, the matrix build, the fit of
`pipelines.stages.fit` with the default `FitParams`, the snapshot tables and
`predictor.snapshots.writer.write_tables`). No warehouse and no Dagster: one payload in, one
snapshot directory out.

Deterministic: the payload's time is its recorded time (`_sources/*.recorded.json`), the fit
is seeded and the manifest holds no clock time, so a rebuild gives the same bytes and the
same content hash. `predictor.snapshots.pretrained` pins that hash; a test rebuilds and compares.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.fetch.transports import DEFAULT_REPLAY_ROOT, replay_relpath
from pipelines.identity.registry import load_registry
from pipelines.identity.resolve import resolve
from pipelines.sources import benchpress_matrix
from pipelines.stages.fit import FitParams, fit_matrix
from pipelines.stages.side_information import stated_dates
from pipelines.stages.snapshot import snapshot_tables
from pipelines.transforms.matrix import build_matrix
from predictor.snapshots.layout import MANIFEST, draft_manifest
from predictor.snapshots.pretrained import PRETRAINED, pretrained_root
from predictor.snapshots.reader import content_hash, verify
from predictor.snapshots.writer import write_tables

BENCHPRESS_V1 = "microsoft/benchpress-v1"


def recorded_payload(replay_root: Path = DEFAULT_REPLAY_ROOT) -> tuple[bytes, dict[str, str]]:
    """The recorded `benchpress_matrix` payload and its replay entry (recorded_at, sha256);
    a file that no longer matches its recorded sha256 is refused."""
    relpath = replay_relpath(benchpress_matrix.URL)
    index = json.loads((replay_root / "_sources" / "benchpress_matrix.recorded.json").read_text())
    entry = index[relpath]
    data = (replay_root / relpath).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry["sha256"]:
        raise RuntimeError(
            f"{relpath}: sha256 {digest[:12]}... differs from the recorded "
            f"{entry['sha256'][:12]}... (edited by accident? re-record it)"
        )
    return data, {"relpath": relpath, **entry}


def _source_scores(data: bytes, entry: dict[str, str]) -> pl.DataFrame:
    """The parser's rows with the columns ingestion adds (one parse, the payload's hash and
    its recorded time as `fetched_at`)."""
    frame = benchpress_matrix.SOURCE.parse({benchpress_matrix.URL: data})
    return frame.with_columns(
        pl.lit(1, pl.Int64).alias("parse_id"),
        pl.lit(entry["sha256"]).alias("payload_sha256"),
        pl.lit(datetime.fromisoformat(entry["recorded_at"])).alias("fetched_at"),
    )


def build_benchpress_v1(out_dir: Path, replay_root: Path = DEFAULT_REPLAY_ROOT) -> dict[str, Any]:
    """Write the `microsoft/benchpress-v1` snapshot into `out_dir` (created, must not exist);
    returns its manifest."""
    data, entry = recorded_payload(replay_root)
    registry = load_registry()
    normalized = resolve(_source_scores(data, entry), registry)
    unresolved = normalized.filter(pl.col("resolution") != "resolved")
    if unresolved.height:  # the paper's ids are the canonical id space: every row resolves
        raise RuntimeError(f"{unresolved.height} rows of the paper matrix did not resolve")
    cells, conflicts = build_matrix(normalized, benchmarks=registry.benchmarks)
    scale_of = dict(registry.benchmarks.select("benchmark_id", "scale").iter_rows())
    params = FitParams()
    fit = fit_matrix(cells, scale_of, params, registry, stated_dates(normalized))
    tables = snapshot_tables(normalized, cells, conflicts, registry, fit)
    out_dir.mkdir(parents=True)
    hashes = write_tables(tables, out_dir)
    facts = {
        "version": BENCHPRESS_V1,
        "parent": None,
        "description": PRETRAINED[BENCHPRESS_V1].description,
        "built_by": "pipelines.bundle_pretrained.build_benchpress_v1",
        "payload": {
            "source": benchpress_matrix.SOURCE.id,
            "url": benchpress_matrix.URL,
            "replay_path": entry["relpath"],
            "sha256": entry["sha256"],
            "recorded_at": entry["recorded_at"],
        },
        "counts": {
            "models": tables.models.height,
            "benchmarks": tables.benchmarks.height,
            "cells": tables.cells.height,
            "conflicts": tables.conflicts.height,
            "sources": [benchpress_matrix.SOURCE.id],
        },
        "fit_params": vars(params),
        "quality": fit.figures,
    }
    manifest = draft_manifest(hashes, content_hash(hashes), facts)  # no clock time
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    (out_dir / MANIFEST).write_text(text, "utf-8")
    return verify(out_dir)


def main() -> int:
    entry = PRETRAINED[BENCHPRESS_V1]
    target = pretrained_root() / entry.directory
    with tempfile.TemporaryDirectory(prefix="benchpress-pretrained-") as tmp:
        built = Path(tmp) / entry.directory
        manifest = build_benchpress_v1(built)
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(built, target)
        for path in target.iterdir():
            path.chmod(0o644)
    digest = manifest["content_hash"]
    print(f"bundled {BENCHPRESS_V1} in {target.name} (content {digest})")
    if digest != entry.content_hash:
        print(
            f"the pin in predictor/snapshots/pretrained.py is {entry.content_hash}: "
            f"update it to {digest} if this change is intended",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
