"""The one error every results reader raises: it names the file, the field and what to do."""

from __future__ import annotations


class ResultsError(ValueError):
    """A results file that cannot be used (malformed, truncated, schema violation, a score
    outside its metric's range, two models in one run file, an unknown format, ...).

    `path` is the file as the user gave it, `field` the place inside it (a JSON path such as
    `results.mmlu.acc,none`, a CSV row), `hint` what to do about it. The CLI prints the message
    and exits 2; nothing is written anywhere when it is raised."""

    def __init__(self, path: str, problem: str, field: str | None = None, hint: str | None = None):
        self.path, self.problem, self.field, self.hint = str(path), problem, field, hint
        where = f"{self.path}" + (f", {field}" if field else "")
        message = f"{where}: {problem}"
        if hint:
            message += f" ({hint})"
        super().__init__(message)
