-- The publish gate: which run staged which snapshot, and what each blocking check of that run
-- said about it. `published_snapshot` publishes only what its own run (or the run it
-- re-executes) staged, and only when every blocking check of that run passed or was accepted.

-- the run that staged this content last (the per-run record is staging_runs)
ALTER TABLE staged_snapshots ADD COLUMN run_id VARCHAR;

-- one row per run that staged a snapshot: the figures and drift as that run computed them
CREATE TABLE staging_runs (
    run_id        VARCHAR PRIMARY KEY,
    content_hash  VARCHAR NOT NULL,
    staged_at     TIMESTAMPTZ NOT NULL,
    figures       VARCHAR NOT NULL,         -- JSON, as staged_snapshots.figures
    drift         VARCHAR                   -- JSON, NULL when nothing was published before
);

-- one row per blocking check evaluation, written by the check itself
CREATE TABLE check_results (
    run_id        VARCHAR NOT NULL,
    check_name    VARCHAR NOT NULL,
    asset_key     VARCHAR NOT NULL,
    content_hash  VARCHAR,                  -- the staged snapshot judged; NULL before staging
    passed        BOOLEAN NOT NULL,         -- the rule's own verdict
    accepted      BOOLEAN NOT NULL,         -- failed, but accepted by an explicit override
    description   VARCHAR,
    evaluated_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (run_id, check_name)
);

-- one row per run whose published_snapshot step succeeded (a new version, or identical content
-- that left the latest version in place), with each source's parse current at that moment:
-- the reference the next refresh's parses are compared with (a source losing rows)
CREATE TABLE publish_log (
    run_id        VARCHAR PRIMARY KEY,
    version       VARCHAR NOT NULL,
    content_hash  VARCHAR NOT NULL,
    published     BOOLEAN NOT NULL,         -- False: identical content, latest stayed
    logged_at     TIMESTAMPTZ NOT NULL,
    parses        VARCHAR NOT NULL          -- JSON {source: [parse_id, n_rows]}
);
