-- A model's release date as the source states it (pipelines.sources.base.SCORE_SCHEMA):
-- YYYY-MM-DD (or YYYY-MM / YYYY), NULL where the row states none. Rows parsed before this
-- migration read as NULL; the parser version bump re-parses their archived payloads.
ALTER TABLE source_scores ADD COLUMN release_date VARCHAR;
ALTER TABLE normalized_scores ADD COLUMN release_date VARCHAR;
