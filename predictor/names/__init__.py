"""Names of models: resolving what users and tools write to the snapshot's ids, derived
models and their bases, families, and look-alike characters."""
