-- Identity resolution (issue 4): how every normalized row was placed, and richer provenance
-- for published cells and conflicts. Columns only; 001 is never edited.

-- normalized_scores: the parsed identity and the route that placed it
ALTER TABLE normalized_scores ADD COLUMN model_base VARCHAR;       -- normalised base name
ALTER TABLE normalized_scores ADD COLUMN model_snapshot VARCHAR;   -- YYYY-MM-DD (or YYYY-MM)
ALTER TABLE normalized_scores ADD COLUMN model_setting VARCHAR;    -- the setting the model_id uses
ALTER TABLE normalized_scores ADD COLUMN model_route VARCHAR;      -- canonical | alias | catalogue | rule | unresolved | excluded
ALTER TABLE normalized_scores ADD COLUMN benchmark_route VARCHAR;  -- canonical | alias | unmapped | unresolved
ALTER TABLE normalized_scores ADD COLUMN reasoning_effort VARCHAR; -- as the source stated them
ALTER TABLE normalized_scores ADD COLUMN thinking_budget VARCHAR;
ALTER TABLE normalized_scores ADD COLUMN agent VARCHAR;            -- agent / scaffold / edit format
ALTER TABLE normalized_scores ADD COLUMN eval_date VARCHAR;        -- evaluation date when the source gives one
ALTER TABLE normalized_scores ADD COLUMN extra VARCHAR;            -- the source row's further facts (JSON)

-- matrix_cells: which row of which payload the published number is
ALTER TABLE matrix_cells ADD COLUMN row_ref VARCHAR;
ALTER TABLE matrix_cells ADD COLUMN model_name VARCHAR;
ALTER TABLE matrix_cells ADD COLUMN benchmark_key VARCHAR;
ALTER TABLE matrix_cells ADD COLUMN setting VARCHAR;
ALTER TABLE matrix_cells ADD COLUMN agent VARCHAR;
ALTER TABLE matrix_cells ADD COLUMN raw_value DOUBLE;
ALTER TABLE matrix_cells ADD COLUMN raw_unit VARCHAR;
ALTER TABLE matrix_cells ADD COLUMN n_sources INTEGER;

-- matrix_conflicts: both sides' provenance
ALTER TABLE matrix_conflicts ADD COLUMN chosen_model_key VARCHAR;
ALTER TABLE matrix_conflicts ADD COLUMN chosen_agent VARCHAR;
ALTER TABLE matrix_conflicts ADD COLUMN chosen_url VARCHAR;
ALTER TABLE matrix_conflicts ADD COLUMN chosen_row_ref VARCHAR;
ALTER TABLE matrix_conflicts ADD COLUMN other_model_key VARCHAR;
ALTER TABLE matrix_conflicts ADD COLUMN other_agent VARCHAR;
ALTER TABLE matrix_conflicts ADD COLUMN other_url VARCHAR;
ALTER TABLE matrix_conflicts ADD COLUMN other_row_ref VARCHAR;
