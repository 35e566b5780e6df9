"""The team service: the Dagster instance on PostgreSQL (`BENCHPRESS_INSTANCE=team`) and a local
PostgreSQL server for tests and demos. See docs/operations.md, "Team service"."""
