"""Resolve a user's or a source's name for a model or benchmark to its canonical id."""

from __future__ import annotations

import difflib
import re

import polars as pl


class UnknownNameError(KeyError):
    """A name that no canonical id or alias matches; the message lists close matches."""

    def __init__(self, kind: str, name: str, suggestions: list[str]):
        hint = f"; did you mean: {', '.join(suggestions)}?" if suggestions else ""
        self.kind, self.name, self.suggestions = kind, name, suggestions
        super().__init__(f"unknown {kind} {name!r}{hint}")

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0])


def fold(name: str) -> str:
    """Case, spacing and punctuation-insensitive key: `GPQA Diamond` == `gpqa_diamond`."""
    return re.sub(r"[^a-z0-9.]+", "", name.lower())


class NameResolver:
    """Exact id, then exact alias, then folded id/alias; never a fuzzy guess."""

    def __init__(self, kind: str, ids: list[str], aliases: pl.DataFrame):
        self.kind = kind
        self.ids = set(ids)
        pairs = aliases.filter(pl.col("kind") == kind).select("name", "id").unique()
        self.exact: dict[str, set[str]] = {}
        self.folded: dict[str, set[str]] = {}
        for name, target in [*((i, i) for i in ids), *pairs.iter_rows()]:
            self.exact.setdefault(name, set()).add(target)
            self.folded.setdefault(fold(name), set()).add(target)

    def __call__(self, name: str) -> str:
        if not isinstance(name, str) or not name.strip():
            raise TypeError(f"{self.kind} name must be a non-empty string, got {name!r}")
        if name in self.ids:
            return name
        for table, key in ((self.exact, name), (self.folded, fold(name))):
            targets = table.get(key)
            if targets and len(targets) == 1:
                return next(iter(targets))
            if targets:
                raise UnknownNameError(self.kind, name, sorted(targets))
        close = difflib.get_close_matches(name, sorted(self.ids), n=5, cutoff=0.5)
        if not close:
            close = difflib.get_close_matches(fold(name), sorted(self.folded), n=5, cutoff=0.5)
            close = sorted({t for c in close for t in self.folded[c]})
        raise UnknownNameError(self.kind, name, close)
