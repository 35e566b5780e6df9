"""Per-source and matrix figures for `benchpress warehouse stats` (read-only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from predictor.paths import warehouse_path
from warehouse.db import open_waiting, warehouse_location
from warehouse.ducklake import WarehouseMissingError, open_reader, warehouse_backend
from warehouse.scores import current_parses
from warehouse.status import source_status


def warehouse_stats(path: Path | None = None) -> dict[str, Any]:
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
        # the same counts without the Open LLM Leaderboard's long tail of fine-tunes
        frontier = con.execute(
            "SELECT count(DISTINCT model_id), count(DISTINCT benchmark_id), count(*)"
            " FROM matrix_cells WHERE source <> 'open_llm_leaderboard'"
        ).fetchone()
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
            "without_open_llm_leaderboard": {
                "models": frontier[0],
                "benchmarks": frontier[1],
                "cells": frontier[2],
            },
        },
    }
