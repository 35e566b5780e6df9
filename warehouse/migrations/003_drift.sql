-- Drift figures of a staged fit against the snapshot that was latest when it was staged.
ALTER TABLE staged_snapshots ADD COLUMN drift VARCHAR;  -- JSON, NULL when nothing was published
