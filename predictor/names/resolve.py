"""Resolve a user's or a source's name for a model or benchmark to its canonical id.

Strictest evidence first: the exact id; then the name as written, the name ignoring case, and
the folded name (`fold`), each looked up among ids, then the sources' aliases, then the
snapshot's display names (last: a model's display name is one source's spelling, often shared
by its settings). A lookup matching one id answers. One matching several ids leaves them
open: a later, looser lookup may only pick among them, and if none does the name is
ambiguous (`AmbiguousNameError`). So `MBPP` is `mbpp` (its id ignoring case; `MBPP+` is
`mbpp_plus`), and `MMLU Pro` is `mmlu_pro` (its folded id) although one leaderboard spells
`open_llm_mmlu_pro` "MMLU-PRO".

A model name that none of these lookups knows is then read as an evaluation tool writes it
(`predictor.names.model_names.public_candidates`: `openai/gpt-4o`, `hf/meta-llama/...`,
`pretrained=...`), each reviewed spelling in turn through the same lookups: the first that
names one id answers, one that names several is ambiguous (the error names the name given).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property

import polars as pl

from predictor.names.model_names import public_candidates
from predictor.util.text_safety import NAME_LIMIT, printable, quoted


class UnknownNameError(KeyError):
    """A name that no canonical id or alias matches; the message lists close matches.

    The name is shown bounded and escaped (`predictor.util.text_safety.quoted`): a 2 MB name or
    one holding newlines and terminal codes stays one short line; `.name` keeps it whole."""

    def __init__(self, kind: str, name: str, suggestions: list[str], known: str = ""):
        self.kind, self.name, self.suggestions, self.known = kind, name, suggestions, known
        super().__init__(self._message())

    def _message(self) -> str:
        known = f"; {self.known}" if self.known else ""  # e.g. "profiles: chat, ..."
        hint = f"; did you mean: {_listed(self.suggestions)}?" if self.suggestions else ""
        return f"unknown {self.kind} {quoted(self.name)}{known}{hint}"

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0])


class AmbiguousNameError(UnknownNameError):
    """A name that matches several ids equally well; `suggestions` are those ids.

    A subclass of `UnknownNameError`, so callers (CLI exit code 2, web 400/404) treat it
    alike; only the message differs: the name is known, but not which one is meant."""

    def _message(self) -> str:
        return (
            f"ambiguous {self.kind} {quoted(self.name)} could be: {_listed(self.suggestions)}; "
            "give one of these ids"
        )


def _listed(ids: list[str]) -> str:
    """Ids for a message, each escaped (a snapshot's ids are data too)."""
    return ", ".join(printable(i) for i in ids)


# Words that name a run setting, after "@" (`o3@low`) or as a headline id's last word
# (`o3-high`); "medium" only after "@": as a last word it is usually a size (mistral-medium).
SETTING_WORDS = ("low", "medium", "high", "xhigh", "minimal", "thinking", "nothinking", "auto")
SUFFIX_WORDS = ("low", "high", "xhigh", "minimal")
MIN_CONTAINED = 4  # a shorter name is inside too many ids to suggest those holding it
_NOT_FOLDED = re.compile(r"[^a-z0-9.+]+")


def settings_index(ids: Iterable[str]) -> dict[str, list[str]]:
    """fold(base model) -> its ids run in a setting: `o3@low`, `o3@thinking-32k` and headline
    ids ending in an effort word (`o3-high`), never quantisations (`@quant-q8_0`) or other
    models (`o3-mini-high` is o3-mini's)."""
    index: dict[str, set[str]] = {}
    for i in ids:
        base, at, setting = i.partition("@")
        if at and setting.split("-")[0] in SETTING_WORDS:
            index.setdefault(fold(base), set()).add(i)
        head, _, last = i.rpartition("-")
        if not at and head and last in SUFFIX_WORDS:
            index.setdefault(fold(head), set()).add(i)
    return {base: sorted(found) for base, found in index.items()}


def fold(name: str) -> str:
    """Case, spacing and punctuation-insensitive key: `GPQA Diamond` == `gpqa_diamond`.

    '+' is kept, it names another suite or model (`MBPP+`, `Command R+`); '@' only separates
    a setting (`o1@medium` is "o1 (medium)"), and a clash it hides is reported as ambiguous."""
    return _NOT_FOLDED.sub("", name.lower())


def display_names(table: pl.DataFrame, id_column: str) -> dict[str, str]:
    """id -> display `name` of a snapshot's models or benchmarks table ({} without one)."""
    if "name" not in table.columns:  # snapshots that carry no display names
        return {}
    rows = table.select(id_column, "name").iter_rows()
    return {i: n for i, n in rows if isinstance(n, str) and n.strip()}


def _index(pairs: Iterable[tuple[str, str]], key: Callable[[str], str]) -> dict[str, set[str]]:
    """key(name) -> every id spelt that way."""
    table: dict[str, set[str]] = {}
    for name, target in pairs:
        if k := key(name):
            table.setdefault(k, set()).add(target)
    return table


def _as_written(name: str) -> str:
    return name


class NameResolver:
    """Exact id; then as written, ignoring case, folded: each among ids, aliases, display
    names (see the module doc). Never a fuzzy guess: unknown names list close matches.

    `display_names`: id -> the snapshot's `name` (see `display_names()`); without them only
    ids and aliases are known."""

    def __init__(
        self,
        kind: str,
        ids: list[str],
        aliases: pl.DataFrame,
        display_names: Mapping[str, str] | None = None,
    ):
        self.kind = kind
        self.ids = set(ids)
        self._own = [(i, i) for i in ids]
        self._shown = [(n, i) for i, n in (display_names or {}).items() if i in self.ids]
        self._aliases = aliases

    # The indexes below are built on the first name that is not an id: `predict --scores
    # gpqa_diamond=80` resolves ids only and never pays for folding thousands of model names.
    @cached_property
    def _spelt(self) -> list[tuple[str, str]]:
        pairs = self._aliases.filter(pl.col("kind") == self.kind).select("name", "id").unique()
        return list(pairs.iter_rows())

    @cached_property
    def lookups(self) -> list[tuple[Callable[[str], str], dict[str, set[str]]]]:
        return [
            (key, _index(names, key))
            for key in (_as_written, str.casefold, fold)
            for names in (self._own, self._spelt, self._shown)
        ]

    @cached_property
    def folded(self) -> dict[str, set[str]]:
        return _index([*self._own, *self._shown, *self._spelt], fold)

    @cached_property
    def _settings(self) -> dict[str, list[str]]:
        return settings_index(self.ids)

    def __call__(self, name: str) -> str:
        found, variants, candidates = self._find(name)
        if found is not None:
            return found
        if len(name) > NAME_LIMIT:  # no id is that long: nothing close to look for
            raise UnknownNameError(self.kind, name, list(variants)[:5])
        close = self._close(candidates[-1]) if candidates else []  # the bare name's first
        close = list(dict.fromkeys([*variants, *close, *self._close(name)]))[:5]  # setting first
        raise UnknownNameError(self.kind, name, close)

    def find(self, name: str) -> str | None:
        """The id `name` denotes, or None when it denotes none (no close matches computed:
        for names that are often not ids, such as a user's own model's name);
        `AmbiguousNameError` as for a call."""
        return self._find(name)[0]

    def _find(self, name: str) -> tuple[str | None, list[str], list[str]]:
        """(the id or None, ids of its settings, the spellings tried after the name)."""
        if not isinstance(name, str) or not name.strip():
            raise TypeError(f"{self.kind} name must be a non-empty string, got {quoted(name)}")
        if name in self.ids:
            return name, [], []
        found, variants = self._lookup(name)
        if found is not None or self.kind != "model":
            return found, variants, []
        # as a tool wrote it: `openai/gpt-4o`, `pretrained=...`
        candidates = public_candidates(name)[1:]
        for candidate in candidates:
            found, more = self._lookup(candidate, name)
            if found is not None:
                return found, [], candidates
            variants = variants or more
        return None, variants, candidates

    def _lookup(self, spelt: str, name: str | None = None) -> tuple[str | None, list[str]]:
        """(the one id `spelt` names or None, ids of its settings for the error message);
        `AmbiguousNameError` (naming `name`, default `spelt`) when it names several."""
        if spelt in self.ids:
            return spelt, []
        open_ids: set[str] | None = None  # left open by a stricter lookup
        for key, table in self.lookups:
            found = table.get(key(spelt), set())
            if open_ids is not None:
                found = found & open_ids
            if len(found) == 1:
                return next(iter(found)), []
            if found:
                open_ids = found
        if open_ids:
            raise AmbiguousNameError(self.kind, name or spelt, sorted(open_ids))
        variants = self._settings.get(fold(spelt), []) if self.kind == "model" else []
        if len(variants) > 1:  # "o3": o3-high, o3@low, o3@medium are all o3; which is meant?
            raise AmbiguousNameError(self.kind, name or spelt, variants)
        return None, variants

    def _close(self, name: str) -> list[str]:
        """Up to 5 ids close to `name`, for the error message: ids that start with or contain
        it first (`swe_bench` -> `swe_bench_verified`, which spelling distance ranks below
        `wild_bench`), then the closest spellings."""
        close = difflib.get_close_matches(name, sorted(self.ids), n=5, cutoff=0.5)
        if not close:
            close = difflib.get_close_matches(fold(name), sorted(self.folded), n=5, cutoff=0.5)
            close = sorted({t for c in close for t in self.folded[c]})
        return list(dict.fromkeys([*self._containing(name), *close]))[:5]

    def _containing(self, name: str) -> list[str]:
        """Ids whose folded spelling (id, alias or display name) starts with or contains the
        folded `name`: those starting with it first, shortest first; none for names shorter
        than `MIN_CONTAINED` (`o` is in half the ids)."""
        key = fold(name)
        if len(key) < MIN_CONTAINED:
            return []
        found: dict[str, tuple[bool, int, str]] = {}
        for spelt, targets in self.folded.items():
            if key in spelt and spelt != key:
                for target in targets:
                    rank = (not spelt.startswith(key), len(target), target)
                    found[target] = min(found.get(target, rank), rank)
        return sorted(found, key=found.__getitem__)
