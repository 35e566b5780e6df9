"""Which tool wrote a file: decided from its content (and name), never from the name alone.

The formats are tried in registry order (`predictor.results.registry`): first by the name and
opening a format claims (an Inspect `.eval` zip, a `.csv` table), then, for a JSON file too
large to parse whole, by an opening a format reads only the header of (an Inspect log), then
by the parsed JSON (`looks_like`)."""

from __future__ import annotations

from predictor.results import registry
from predictor.results.errors import ResultsError
from predictor.results.jsonio import load_json
from predictor.results.paths import check_opening
from predictor.results.result_file import HEAD_BYTES, ResultFile

# the old name: the hint for a file of no known format, as the built-in formats give it
KNOWN_FORMATS = registry.known_formats()


def detect(file: ResultFile) -> tuple[str, object | None]:
    """(format id, parsed JSON document or None) of one file; an unknown format is an error."""
    told = check_opening(file.path, len(file.data), file.data[:HEAD_BYTES])
    if told is not None:
        return told.id, None
    if not file.data.strip():
        raise ResultsError(file.path, "the file is empty")
    doc = load_json(file.data, file.path)
    for fmt in registry.one_file_formats():
        if fmt.looks_like is not None and fmt.looks_like(doc):
            return fmt.id, doc
    raise ResultsError(
        file.path, "not a results file of a known format", hint=registry.known_formats()
    )
