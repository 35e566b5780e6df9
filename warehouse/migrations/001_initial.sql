-- Raw payloads are archived byte for byte before anything parses them.
CREATE SEQUENCE payload_ids START 1;
CREATE TABLE raw_payloads (
    payload_id    BIGINT PRIMARY KEY DEFAULT nextval('payload_ids'),
    source        VARCHAR NOT NULL,
    url           VARCHAR NOT NULL,
    transport     VARCHAR NOT NULL,
    status        INTEGER NOT NULL,
    fetched_at    TIMESTAMPTZ NOT NULL,
    sha256        VARCHAR NOT NULL,
    size_bytes    BIGINT NOT NULL,
    etag          VARCHAR,
    last_modified VARCHAR,
    content_type  VARCHAR,
    content       BLOB NOT NULL
);
CREATE INDEX raw_payloads_source_url ON raw_payloads (source, url);

-- One row per fetch attempt of a source: what happened, so failures are visible and dated.
CREATE SEQUENCE fetch_ids START 1;
CREATE TABLE fetch_log (
    fetch_id     BIGINT PRIMARY KEY DEFAULT nextval('fetch_ids'),
    source       VARCHAR NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL,
    outcome      VARCHAR NOT NULL,          -- new | unchanged | failed
    payload_ids  BIGINT[],                  -- the payload set this fetch stands for
    error        VARCHAR
);

-- A parse of one payload set of a source. Rows of source_scores belong to exactly one parse.
CREATE SEQUENCE parse_ids START 1;
CREATE TABLE parses (
    parse_id         BIGINT PRIMARY KEY DEFAULT nextval('parse_ids'),
    source           VARCHAR NOT NULL,
    payload_set_sha  VARCHAR NOT NULL,      -- sha256 over the sorted payload sha256s
    payload_ids      BIGINT[] NOT NULL,
    fetched_at       TIMESTAMPTZ NOT NULL,  -- newest fetched_at in the set
    parsed_at        TIMESTAMPTZ NOT NULL,
    parser_version   VARCHAR NOT NULL,
    status           VARCHAR NOT NULL,      -- ok | failed
    n_rows           BIGINT,
    error            VARCHAR
);

CREATE TABLE source_scores (
    parse_id         BIGINT NOT NULL,
    source           VARCHAR NOT NULL,
    payload_url      VARCHAR NOT NULL,
    row_ref          VARCHAR,
    model_key        VARCHAR,
    model_name       VARCHAR,
    benchmark_key    VARCHAR,
    benchmark_name   VARCHAR,
    value            DOUBLE,
    unit             VARCHAR NOT NULL,
    reasoning_effort VARCHAR,
    thinking_budget  VARCHAR,
    agent            VARCHAR,
    extra            VARCHAR
);
CREATE INDEX source_scores_parse ON source_scores (parse_id);

-- Derived tables, rebuilt wholesale by their assets inside one transaction.
CREATE TABLE normalized_scores (
    source           VARCHAR NOT NULL,
    parse_id         BIGINT NOT NULL,
    payload_url      VARCHAR NOT NULL,
    payload_sha256   VARCHAR,
    fetched_at       TIMESTAMPTZ NOT NULL,
    row_ref          VARCHAR,
    model_key        VARCHAR,
    model_name       VARCHAR,
    benchmark_key    VARCHAR,
    benchmark_name   VARCHAR,
    setting          VARCHAR,
    model_id         VARCHAR,
    benchmark_id     VARCHAR,
    raw_value        DOUBLE,
    raw_unit         VARCHAR NOT NULL,
    score            DOUBLE,
    scale            VARCHAR,
    resolution       VARCHAR NOT NULL,     -- resolved | unresolved_model | unresolved_benchmark | rejected
    note             VARCHAR
);

CREATE TABLE matrix_cells (
    model_id        VARCHAR NOT NULL,
    benchmark_id    VARCHAR NOT NULL,
    score           DOUBLE NOT NULL,
    source          VARCHAR NOT NULL,
    payload_url     VARCHAR NOT NULL,
    payload_sha256  VARCHAR,
    fetched_at      TIMESTAMPTZ NOT NULL,
    model_key       VARCHAR,
    n_observations  INTEGER NOT NULL,
    PRIMARY KEY (model_id, benchmark_id)
);

CREATE TABLE matrix_conflicts (
    model_id      VARCHAR NOT NULL,
    benchmark_id  VARCHAR NOT NULL,
    chosen_score  DOUBLE NOT NULL,
    chosen_source VARCHAR NOT NULL,
    other_score   DOUBLE NOT NULL,
    other_source  VARCHAR NOT NULL,
    difference    DOUBLE NOT NULL
);

-- Fits staged for publishing: the snapshot content they would publish, keyed by content hash.
CREATE TABLE staged_snapshots (
    content_hash  VARCHAR PRIMARY KEY,
    staged_at     TIMESTAMPTZ NOT NULL,
    path          VARCHAR NOT NULL,
    figures       VARCHAR NOT NULL          -- JSON: fit quality and structure figures
);
