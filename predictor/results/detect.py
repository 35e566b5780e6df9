"""Which tool wrote a file: decided from its content (and name), never from the name alone."""

from __future__ import annotations

from pathlib import Path, PurePath

from predictor.results import eee, inspect_log, lm_eval, tidy
from predictor.results.errors import ResultsError
from predictor.results.jsonio import load_json
from predictor.results.paths import MAX_JSON_BYTES, ResultFile, check_json_size

ZIP_MAGIC = b"PK\x03\x04"
# the files of a HELM run folder (`benchmark_output/runs/<suite>/<run>/`)
HELM_FILES = (
    "run_spec.json",
    "stats.json",
    "scenario.json",
    "per_instance_stats.json",
    "scenario_state.json",
    "instances.json",
    "display_predictions.json",
    "display_requests.json",
)
KNOWN_FORMATS = (
    "an lm-evaluation-harness results_*.json, an Inspect log (.eval or .json), an Every Eval "
    "Ever record, a HELM run folder, or a model,benchmark,score CSV or JSON"
)


def is_helm_file(path: str) -> bool:
    """A file of a HELM run folder: one of its known names, with a run_spec.json beside it."""
    p = Path(path)
    return p.name in HELM_FILES and (p.parent / "run_spec.json").is_file()


def detect(file: ResultFile) -> tuple[str, object | None]:
    """(format, parsed JSON document or None) of one file; an unknown format is an error."""
    name = PurePath(file.path).name.lower()
    if file.data.startswith(ZIP_MAGIC) or name.endswith(".eval"):
        return "inspect", None
    if name.endswith(".csv"):
        return "tidy", None
    if not file.data.strip():
        raise ResultsError(file.path, "the file is empty")
    if len(file.data) > MAX_JSON_BYTES:  # not parsed whole: only an Inspect log may be this large
        check_json_size(file)
        return "inspect", None
    doc = load_json(file.data, file.path)
    for fmt, module in (
        ("lm_eval", lm_eval),
        ("inspect", inspect_log),
        ("eee", eee),
        ("tidy", tidy),
    ):
        if module.looks_like(doc):
            return fmt, doc
    raise ResultsError(file.path, "not a results file of a known format", hint=KNOWN_FORMATS)
