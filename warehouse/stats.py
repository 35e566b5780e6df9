"""Per-source and matrix figures for `benchpress warehouse stats` (read-only)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from predictor.util.paths import warehouse_path
from warehouse.db import open_waiting, warehouse_location
from warehouse.ducklake import WarehouseMissingError, open_reader, warehouse_backend
from warehouse.scores import current_parses
from warehouse.status import source_status


def warehouse_stats(path: Path | None = None, long_tail: Iterable[str] = ()) -> dict[str, Any]:
    """The figures of the warehouse at `path` (default: the configured one); the matrix's
    totals are also given without each source of `long_tail`, as `without_<source>` (the
    sources that are a long tail of fine-tunes: `pipelines.sources.LONG_TAIL`)."""
    lake = path is None and warehouse_backend() == "ducklake"  # the shared warehouse
    target = path or warehouse_path()
    where = warehouse_location() if lake else str(target)
    if not lake and not target.exists():
        return {"warehouse": where, "sources": {}, "matrix": None}
    try:
        con = open_reader() if lake else open_waiting(target, read_only=True)
    except WarehouseMissingError:
        return {"warehouse": where, "sources": {}, "matrix": None}
    try:
        sources: dict[str, dict[str, Any]] = {}
        for source, payloads, size in con.execute(
            "SELECT source, count(*), sum(size_bytes) FROM raw_payloads GROUP BY 1 ORDER BY 1"
        ).fetchall():
            sources[source] = {"payloads": payloads, "payload_bytes": int(size)}
        current = current_parses(con)["parse_id"].to_list()
        for source, rows, models, benchmarks in con.execute(
            "SELECT p.source, count(*), count(DISTINCT model_key), count(DISTINCT benchmark_key)"
            " FROM source_scores s JOIN parses p USING (parse_id)"
            " WHERE list_contains(?, p.parse_id) GROUP BY 1 ORDER BY 1",
            [current],
        ).fetchall():
            sources.setdefault(source, {}).update(
                {"rows": rows, "models": models, "benchmarks": benchmarks}
            )
        for (
            source,
            total,
            resolved,
            rejected,
            excluded,
            unresolved,
            models,
            benchmarks,
        ) in con.execute(
            "SELECT source, count(*), count(*) FILTER (WHERE resolution = 'resolved'),"
            " count(*) FILTER (WHERE resolution = 'rejected'),"
            " count(*) FILTER (WHERE resolution = 'excluded'),"
            " count(*) FILTER (WHERE resolution IN ('unresolved_model', 'unresolved_benchmark')),"
            " count(DISTINCT model_key) FILTER (WHERE resolution = 'unresolved_model'),"
            " count(DISTINCT benchmark_key) FILTER (WHERE resolution = 'unresolved_benchmark')"
            " FROM normalized_scores GROUP BY 1 ORDER BY 1"
        ).fetchall():
            placeable = total - rejected - excluded
            sources.setdefault(source, {}).update(
                {
                    "resolved_rows": resolved,
                    "rejected_rows": rejected,
                    "excluded_rows": excluded,  # humans, agent systems, ensembles
                    "unresolved_rows": unresolved,
                    "resolution_rate": round(resolved / total, 4) if total else None,
                    "unresolved_share": round(unresolved / placeable, 4) if placeable else 0.0,
                    "unresolved_model_names": models,
                    "unresolved_benchmark_names": benchmarks,
                }
            )
        for source, facts in source_status(con).items():
            entry = sources.setdefault(source, {})
            entry.update(
                {
                    "status": facts["status"],
                    "data_fetched_at": facts["data_fetched_at"],
                    "age_days": facts["age_days"],
                    "last_attempt": facts["last_attempt"],
                }
            )
            if facts["error"]:  # why a stale source keeps its last good data, and since when
                entry.update({"error": facts["error"], "error_at": facts["error_at"]})
        models, benchmarks, cells = con.execute(
            "SELECT count(DISTINCT model_id), count(DISTINCT benchmark_id), count(*)"
            " FROM matrix_cells"
        ).fetchone()
        conflicts = con.execute("SELECT count(*) FROM matrix_conflicts").fetchone()[0]
        without = {}
        for source in long_tail:  # the same counts without a long tail of fine-tunes
            rest = con.execute(
                "SELECT count(DISTINCT model_id), count(DISTINCT benchmark_id), count(*)"
                " FROM matrix_cells WHERE source <> ?",
                [source],
            ).fetchone()
            without[f"without_{source}"] = {
                "models": rest[0],
                "benchmarks": rest[1],
                "cells": rest[2],
            }
    finally:
        con.close()
    return {
        "warehouse": where,
        "sources": sources,
        "matrix": {
            "models": models,
            "benchmarks": benchmarks,
            "cells": cells,
            "conflicts": conflicts,
            **without,
        },
    }
