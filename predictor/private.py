"""A team's own models and checkpoint runs, kept beside the public matrix, never published.
(A team's own fitted matrices, `BenchPress.fit(frame).save()`, are kept apart the same way:
the private line of `predictor.snapshots.private_line`.)

The store itself (DuckDB under BENCHPRESS_HOME) belongs to the warehouse package; the
predictor only reads it, through the `benchpress.private_models` entry-point group, so the
predictor still installs and runs alone (no provider installed = no private models).

A provider is a callable `(home: Path) -> list[dict]`, each dict with `name`, `run` (None for
a model outside a run), `step` (None outside a run), `scores` ({benchmark_id: score}) and
`added_at` (ISO time), and optionally `stderr` ({benchmark_id: its standard error, where the
file gave one or its item count sets one}) and `provenance` ({benchmark_id: where that score
came from: `format`, `tool`, `tool_version`, `task`, `metric`, `evaluated_at`, `file`,
`file_sha256`})."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from predictor.util.paths import benchpress_home

# where a stored score came from, as a provider hands it on with each score
PROVENANCE_FIELDS = (
    "format",
    "tool",
    "tool_version",
    "task",
    "metric",
    "evaluated_at",
    "file",
    "file_sha256",
)

GROUP = "benchpress.private_models"


@dataclass(frozen=True)
class PrivateModel:
    name: str
    scores: Mapping[str, float] = field(repr=False)
    run: str | None = None
    step: int | None = None
    added_at: str | None = None
    # benchmark_id -> the score's standard error, where known (its measurement noise)
    stderr: Mapping[str, float] = field(default_factory=dict, repr=False)
    # benchmark_id -> where its score came from (tool, version, task, file, ...); may be empty
    provenance: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, repr=False)


def private_models(home: Path | None = None) -> list[PrivateModel]:
    """Every private model of the home, ordered by run, step and name (empty without a store
    or without the warehouse package)."""
    home = home or benchpress_home()
    found: list[PrivateModel] = []
    for entry in entry_points(group=GROUP):
        try:
            provider = entry.load()
        except ImportError:  # the warehouse extras are not installed
            continue
        for item in provider(home):
            found.append(
                PrivateModel(
                    name=str(item["name"]),
                    scores={str(k): float(v) for k, v in dict(item["scores"]).items()},
                    run=item.get("run"),
                    step=item.get("step"),
                    added_at=item.get("added_at"),
                    stderr={str(k): float(v) for k, v in dict(item.get("stderr") or {}).items()},
                    provenance={
                        str(k): dict(v) for k, v in dict(item.get("provenance") or {}).items()
                    },
                )
            )
    return sorted(found, key=lambda m: (m.run or "", m.step if m.step is not None else -1, m.name))


def private_runs(home: Path | None = None) -> dict[str, list[PrivateModel]]:
    """run -> its checkpoints in step order."""
    runs: dict[str, list[PrivateModel]] = {}
    for model in private_models(home):
        if model.run is not None:
            runs.setdefault(model.run, []).append(model)
    return runs
