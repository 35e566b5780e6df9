"""Pure Polars transforms between warehouse tables (no Dagster, no DuckDB)."""
