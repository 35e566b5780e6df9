"""Assemble the tables of a snapshot from the matrix, the registry and a fit, then stage them;
decide whether a staged snapshot may be published (the publish gate)."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from pipelines.identity.registry import CANONICAL_SOURCE, Registry
from pipelines.stages.costs import run_cost_facts
from pipelines.stages.fit import FitParams, FitResult, method_label
from pipelines.stages.quality import DRIFT_CHECKS
from pipelines.stages.side_information import release_dates, stated_dates
from pipelines.transforms.matrix import select_for_fit
from predictor.fit.fitted_state import export_state
from predictor.names.families import model_families
from predictor.snapshots.layout import CELL_RENAMES, FORMAT_VERSION
from predictor.snapshots.reader import input_identity, method_settings
from predictor.snapshots.writer import write_tables
from predictor.trust.suspicious import residual_table
from warehouse.snapshots import CheckRecord, SnapshotTables, StagedRun, stage

# Blocking checks that judge the staged snapshot itself (their verdicts carry its content hash)
STAGED_CHECKS = ("rank2_structure", *DRIFT_CHECKS)
# Every blocking check of the refresh job: each must have passed (or, for a drift check, been
# accepted) in the run that staged a snapshot before `published_snapshot` publishes it.
GATE_CHECKS = (
    "sources_fetched",
    "identity_resolution",
    "matrix_sanity",
    "one_metric_per_column",
    *STAGED_CHECKS,
)
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")


class Fitted(Protocol):
    """Which models and benchmarks a fit covers (a `FitResult`, or a `Selection` before it)."""

    model_ids: list[str]
    benchmark_ids: list[str]


@dataclass(frozen=True)
class Selection:
    """The models and benchmarks a fit of the matrix will cover, known without fitting."""

    model_ids: list[str]
    benchmark_ids: list[str]


def _folded(text: str) -> str:
    return _NOT_ALNUM.sub("-", text.casefold()).strip("-")


def display_names(resolved: pl.DataFrame) -> pl.DataFrame:
    """model_id -> the name to show: the BenchPress matrix's own name where it has the model;
    else a source spelling that states the model's setting ("o3 (Medium)" for o3@medium), is
    closest to the id (in steps of 0.1), is readable (spaces, no organisation prefix), is the
    most used, is first alphabetically - in that order.

    Sources file rows under names that are not the model's (Epoch's "GPT-3.5" for
    text-davinci-002, "PaLM 2-L" on a PaLM 2-S row, agent systems "OpenHands + GPT 4o"), so
    neither the first source alphabetically nor the majority alone gives a reliable name."""
    used = (
        resolved.filter(pl.col("model_name").is_not_null())
        .group_by("model_id", "model_name")
        .agg(
            (pl.col("source") == CANONICAL_SOURCE).any().alias("canonical"),
            (pl.col("setting").fill_null("") == pl.col("model_id").str.extract(r"@(.+)$", 1))
            .fill_null(pl.col("setting").is_null())
            .any()
            .alias("states_setting"),
            pl.len().alias("rows"),
        )
        .sort("model_id", "model_name")
    )
    best: dict[str, tuple[tuple[object, ...], str]] = {}
    for model_id, name, canonical, states_setting, rows in used.iter_rows():
        closeness = SequenceMatcher(None, _folded(name), _folded(model_id)).ratio()
        readable = " " in name.strip() and "/" not in name  # "GPT-5 (Low)", not an API id
        system = " + " in name  # an agent system built on the model
        key = (canonical, not system, states_setting, round(closeness * 10), readable, rows)
        if model_id not in best or key > best[model_id][0]:  # ties keep the earlier name
            best[model_id] = (key, name)
    for model_id in resolved["model_id"].unique().to_list():  # no row names it: its id
        best.setdefault(model_id, ((), model_id))
    return pl.DataFrame(
        [(model_id, name) for model_id, (_, name) in sorted(best.items())],
        schema={"model_id": pl.String, "name": pl.String},
        orient="row",
    )


def model_table(
    normalized: pl.DataFrame,
    cells: pl.DataFrame,
    fit: Fitted,
    registry: Registry | None = None,
) -> pl.DataFrame:
    """One row per model in the matrix: a display name and how much evidence it has; with
    `registry`, also its family and release date (`release_date`, `date_source`,
    `date_sources`: the catalogue's date, else the date its sources state, else first seen;
    `pipelines.stages.side_information`), what the fit used (a first-seen date as unknown)
    and `benchpress evaluate --protocol future --source snapshot` reads."""
    names = display_names(normalized.filter(pl.col("resolution") == "resolved"))
    counts = cells.group_by("model_id").agg(
        pl.len().cast(pl.Int32).alias("n_cells"),
        pl.col("source").n_unique().cast(pl.Int32).alias("n_sources"),
    )
    fitted = pl.DataFrame({"model_id": fit.model_ids, "in_fit": [True] * len(fit.model_ids)})
    table = (
        counts.join(names, on="model_id", how="left")
        .join(fitted, on="model_id", how="left")
        .with_columns(pl.col("in_fit").fill_null(False))
        .select("model_id", "name", "n_cells", "n_sources", "in_fit")
        .sort("model_id")
    )
    if registry is None:
        return table
    ids = table["model_id"].to_list()
    dates = release_dates(ids, registry.catalogue, cells, stated_dates(normalized))
    return table.with_columns(family=pl.Series(model_families(ids), dtype=pl.String)).join(
        dates, on="model_id", how="left"
    )


def benchmark_table(
    registry: Registry, cells: pl.DataFrame, fit: Fitted, run_costs: pl.DataFrame
) -> pl.DataFrame:
    """One row per benchmark with cells: registry facts, counts, fit membership, run costs."""
    counts = cells.group_by("benchmark_id").agg(pl.len().cast(pl.Int32).alias("n_cells"))
    fitted = pl.DataFrame(
        {"benchmark_id": fit.benchmark_ids, "in_fit": [True] * len(fit.benchmark_ids)}
    )
    registry_table = registry.benchmarks
    if "floor" not in registry_table.columns:  # registries written before chance floors
        registry_table = registry_table.with_columns(floor=pl.lit(None, dtype=pl.Float64))
    return (
        registry_table.join(counts, on="benchmark_id", how="inner")
        .join(fitted, on="benchmark_id", how="left")
        .with_columns(
            pl.col("in_fit").fill_null(False),
            pl.col("floor").cast(pl.Float64, strict=False),  # empty = no chance floor
        )
        .join(run_costs, on="benchmark_id", how="left")
        .select(
            "benchmark_id",
            "name",
            "scale",
            "unit",
            "category",
            "direction",
            "lower",
            "upper",
            "floor",
            "n_cells",
            "in_fit",
            "run_cost_usd",
            "run_cost_reports",
        )
        .sort("benchmark_id")
    )


def alias_table(normalized: pl.DataFrame) -> pl.DataFrame:
    """Every name a source used for a resolved model or benchmark -> its canonical id."""
    resolved = normalized.filter(pl.col("resolution") == "resolved")
    parts = [
        resolved.select(
            pl.lit(kind).alias("kind"),
            "source",
            pl.col(name).alias("name"),
            pl.col(target).alias("id"),
        )
        for kind, name, target in (
            ("model", "model_key", "model_id"),
            ("model", "model_name", "model_id"),
            ("benchmark", "benchmark_key", "benchmark_id"),
            ("benchmark", "benchmark_name", "benchmark_id"),
        )
    ]
    aliases = pl.concat(parts).drop_nulls("name").unique()
    # A name must pick one identity. Display names often do not: Epoch calls four thinking
    # budgets "Claude Opus 4", llm-stats calls both 3.5 Sonnet snapshots "Claude 3.5 Sonnet".
    # Where the canonical source uses the name, its reading wins; otherwise a name that maps to
    # several ids is dropped (the resolver then lists the close matches instead of guessing).
    canonical_row = pl.col("source") == CANONICAL_SOURCE
    contested = pl.col("id").n_unique().over("kind", "name") > 1
    canonical_uses = canonical_row.any().over("kind", "name")
    keep = ~contested | (canonical_uses & canonical_row)
    return aliases.filter(keep).sort("kind", "name", "source", "id")


def data_tables(
    normalized: pl.DataFrame,
    cells: pl.DataFrame,
    conflicts: pl.DataFrame,
    registry: Registry,
    fit: Fitted,
) -> dict[str, pl.DataFrame]:
    """The snapshot's tables that follow from the data alone (not from the fit's numbers):
    what its input identity is computed from."""
    return {
        "cells": cells.rename(CELL_RENAMES).sort("model_id", "benchmark_id"),
        "models": model_table(normalized, cells, fit, registry),
        "benchmarks": benchmark_table(registry, cells, fit, run_cost_facts(normalized)),
        "aliases": alias_table(normalized),
        "conflicts": conflicts,
    }


def snapshot_tables(
    normalized: pl.DataFrame,
    cells: pl.DataFrame,
    conflicts: pl.DataFrame,
    registry: Registry,
    fit: FitResult,
) -> SnapshotTables:
    fit_doc: dict[str, Any] = {
        "model_ids": fit.model_ids,
        "benchmark_ids": fit.benchmark_ids,
        "state": export_state(fit.completer),
    }
    return SnapshotTables(
        **data_tables(normalized, cells, conflicts, registry, fit),
        fit=fit_doc,
        residuals=residual_table(
            fit.values, fit.model_ids, fit.benchmark_ids, fit.completer, cells
        ),
    )


def planned_identity(
    normalized: pl.DataFrame,
    cells: pl.DataFrame,
    conflicts: pl.DataFrame,
    registry: Registry,
    params: FitParams,
    scratch_root: Path,
) -> str | None:
    """The input identity (`predictor.snapshots.input_identity`) of the snapshot a fit of this
    matrix would stage, computed in about a second without fitting: its data files written to a
    scratch folder under `scratch_root` and hashed, the fit's parameters, the method and its
    hyperparameters. Equal to a published snapshot's identity, the fit would give that
    snapshot again (it is deterministic), so the refresh reuses it. None when it cannot be
    named in advance."""
    method = method_label()
    kept = select_for_fit(cells, params.min_per_model, params.min_per_benchmark)
    if method is None or kept.height == 0:  # an unknown method, or a fit that will fail
        return None
    selection = Selection(
        sorted(kept["model_id"].unique().to_list()),
        sorted(kept["benchmark_id"].unique().to_list()),
    )
    tables = data_tables(normalized, cells, conflicts, registry, selection)
    scratch_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".plan-", dir=scratch_root) as scratch:
        # no fit: an empty fit.json, which the identity leaves out like every fit product
        hashes = write_tables(SnapshotTables(**tables, fit={}), Path(scratch))
    manifest = {"files": hashes, "fit_params": vars(params), "format_version": FORMAT_VERSION}
    return input_identity(manifest, method, method_settings(params.completer().get_params()))


def same_inputs_drift(version: str) -> dict[str, Any]:
    """The drift record of a staging whose inputs are published `version`'s: the same inputs
    give the same fit, so nothing can have drifted from it and the drift checks pass as such."""
    return {"against": version, "same_inputs": True}


def stage_snapshot(
    tables: SnapshotTables, staging_root: Path, params: FitParams, figures: dict[str, Any]
) -> tuple[str, Path]:
    counts = {
        "models": tables.models.height,
        "benchmarks": tables.benchmarks.height,
        "cells": tables.cells.height,
        "conflicts": tables.conflicts.height,
        "sources": sorted(tables.cells["source"].unique().to_list()),
    }
    facts = {"counts": counts, "fit_params": vars(params), "quality": figures}
    return stage(tables, staging_root, facts)


def gate_problems(
    staged: StagedRun,
    records: dict[str, CheckRecord],
    required: tuple[str, ...] = GATE_CHECKS,
) -> list[str]:
    """Why `staged` may not be published, one line per blocking check; empty when it may.

    `records` are the verdicts of the run that staged it (and the runs it re-executes). A check
    that did not run, judged another staged snapshot, or failed without an accepted override
    stops the publish."""
    problems = []
    for name in required:
        record = records.get(name)
        if record is None:
            problems.append(f"{name}: not evaluated by run {staged.run_id}")
        elif name in STAGED_CHECKS and record.content_hash != staged.content_hash:
            judged = (record.content_hash or "nothing")[:12]
            problems.append(
                f"{name}: judged staged snapshot {judged}, not {staged.content_hash[:12]}"
            )
        elif not (record.passed or record.accepted):
            problems.append(f"{name} failed: {record.description or 'no description'}")
    return problems


def accepted_checks(records: dict[str, CheckRecord]) -> list[str]:
    """Checks that failed and were accepted by an explicit override (recorded in the manifest)."""
    return sorted(name for name, r in records.items() if r.accepted and not r.passed)
