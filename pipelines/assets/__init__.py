"""Dagster assets, one module per stage; each asset wires a function from `pipelines.stages`."""
