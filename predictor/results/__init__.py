"""Results files from the tools teams evaluate with, read into one tidy frame.

lm-evaluation-harness `results_*.json`, Inspect AI logs (`.eval`, `.json`; with the
`inspect` extra), Every Eval Ever records, HELM run folders and plain `model,benchmark,score`
tables. Readers are pure (bytes in, rows out); `read_results` maps every row onto our
benchmark ids with the reviewed tables in `maps/` and keeps provenance (file, sha256, tool,
version, task, metric, n, stderr, time) and marks the rows of a run over part of the items
(lm-eval's or Inspect's `limit`: a smoke test) `limited`, which `limited_checked` refuses
unless allowed."""

from predictor.results.errors import ResultsError
from predictor.results.frame import RESULT_SCHEMA, RawResult, result_frame
from predictor.results.limited import LimitedScoresWarning, limited_checked
from predictor.results.mapping import load_map, parse_overrides
from predictor.results.paths import expand_paths
from predictor.results.probes import model_rows, models_in, probe_scores
from predictor.results.read import read_result_bytes, read_results

__all__ = [
    "RESULT_SCHEMA",
    "LimitedScoresWarning",
    "RawResult",
    "ResultsError",
    "expand_paths",
    "limited_checked",
    "load_map",
    "model_rows",
    "models_in",
    "parse_overrides",
    "probe_scores",
    "read_result_bytes",
    "read_results",
    "result_frame",
]
