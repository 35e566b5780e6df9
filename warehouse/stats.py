"""Per-source and matrix figures for `benchpress warehouse stats` (read-only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from predictor.paths import warehouse_path
from warehouse.status import source_status


def warehouse_stats(path: Path | None = None) -> dict[str, Any]:
    target = path or warehouse_path()
    if not target.exists():
        return {"warehouse": str(target), "sources": {}, "matrix": None}
    con = duckdb.connect(str(target), read_only=True)
    try:
        sources: dict[str, dict[str, Any]] = {}
        for source, payloads, size in con.execute(
            "SELECT source, count(*), sum(size_bytes) FROM raw_payloads GROUP BY 1 ORDER BY 1"
        ).fetchall():
            sources[source] = {"payloads": payloads, "payload_bytes": int(size)}
        for source, rows, models, benchmarks in con.execute(
            "SELECT p.source, count(*), count(DISTINCT model_key), count(DISTINCT benchmark_key)"
            " FROM source_scores s JOIN parses p USING (parse_id)"
            " WHERE p.parse_id IN (SELECT parse_id FROM parses WHERE status = 'ok'"
            "   QUALIFY row_number() OVER (PARTITION BY source"
            "   ORDER BY fetched_at DESC, parse_id DESC) = 1)"
            " GROUP BY 1 ORDER BY 1"
        ).fetchall():
            sources.setdefault(source, {}).update(
                {"rows": rows, "models": models, "benchmarks": benchmarks}
            )
        for source, total, resolved, rejected, models, benchmarks in con.execute(
            "SELECT source, count(*), count(*) FILTER (WHERE resolution = 'resolved'),"
            " count(*) FILTER (WHERE resolution = 'rejected'),"
            " count(DISTINCT model_key) FILTER (WHERE model_id IS NULL),"
            " count(DISTINCT benchmark_key) FILTER (WHERE benchmark_id IS NULL)"
            " FROM normalized_scores GROUP BY 1 ORDER BY 1"
        ).fetchall():
            sources.setdefault(source, {}).update(
                {
                    "resolved_rows": resolved,
                    "rejected_rows": rejected,
                    "resolution_rate": round(resolved / total, 4) if total else None,
                    "unresolved_model_names": models,
                    "unresolved_benchmark_names": benchmarks,
                }
            )
        for source, outcome, error in con.execute(
            "SELECT source, outcome, error FROM fetch_log"
            " QUALIFY row_number() OVER (PARTITION BY source ORDER BY started_at DESC,"
            " fetch_id DESC) = 1"
        ).fetchall():
            sources.setdefault(source, {}).update({"last_fetch": outcome, "last_error": error})
        for source, facts in source_status(con).items():
            sources.setdefault(source, {}).update(
                {
                    "status": facts["status"],
                    "data_fetched_at": facts["data_fetched_at"],
                    "age_days": facts["age_days"],
                }
            )
        models, benchmarks, cells = con.execute(
            "SELECT count(DISTINCT model_id), count(DISTINCT benchmark_id), count(*)"
            " FROM matrix_cells"
        ).fetchone()
        conflicts = con.execute("SELECT count(*) FROM matrix_conflicts").fetchone()[0]
    finally:
        con.close()
    return {
        "warehouse": str(target),
        "sources": sources,
        "matrix": {
            "models": models,
            "benchmarks": benchmarks,
            "cells": cells,
            "conflicts": conflicts,
        },
    }
