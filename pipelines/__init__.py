"""Dagster code location: scrape leaderboards into DuckDB, build the matrix, publish snapshots."""
