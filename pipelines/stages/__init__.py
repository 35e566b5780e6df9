"""What each pipeline stage does, as plain functions over a warehouse connection.

Dagster assets only wire these together, so every stage runs (and is tested) without Dagster.
"""
