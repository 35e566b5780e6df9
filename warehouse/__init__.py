"""Everything that touches DuckDB: schema migrations, the raw payload archive, score tables and
the snapshot store. No Dagster imports, so it is usable from scripts and tests directly."""
