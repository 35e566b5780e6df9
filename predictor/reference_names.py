"""Reference models named the way people write them: `claude-fable-5`, `gpt-5-5`, `o3`.

`BenchPress.resolve_model` never guesses: a name without its setting that several settings
share (`o3`: o3-high, o3@low, o3@medium) is ambiguous. A reference model in
`compare_with_known_models` is only a yardstick, so there it resolves by this documented
rule, and the comparison reports the id it used (`ReferenceModel.note`):

1. The name as written, if the snapshot resolves it (id, source alias, display name).
2. Version dots written as dashes, as vendors' API ids spell them: `gpt-5-5` is `gpt-5.5`,
   `claude-opus-4-7` is `claude-opus-4.7` (each digit-dash-digit, all together and one at a
   time; several different models -> ambiguous).
3. A model named without its setting is the catalogue's headline setting: the id without
   `@setting` (`o3-high`, `gpt-5.5`: the catalogue's BenchPress id, which stands for the
   model at its headline setting, see `pipelines/identity/catalogue.py`); for a model
   without a catalogue headline (only `model@setting` ids, e.g. `claude-fable-5@high` and
   `claude-fable-5@xhigh`), the highest reasoning effort, the convention of the catalogue's
   headlines (o3-high, gpt-5.5 at xhigh, claude-opus-4.6 at max, reasoning models with
   thinking on): nothinking < any setting without an effort word (`thinking`,
   `thinking-16k`) < minimal < low < medium < high < xhigh < max. No single highest (two
   thinking budgets) stays ambiguous: `AmbiguousNameError` lists them.

Where: the snapshot being used first; a model it does not hold is looked up in the
catalogue snapshot (`BenchPress.load()`: the newest published, else the bundled one), and
ranked with that snapshot's scores for it (observed cells, else its completed cells with
their intervals), as a reference of the snapshot itself would be.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from predictor.fitted_matrix import FittedMatrix
from predictor.names.resolve import (
    SUFFIX_WORDS,
    AmbiguousNameError,
    UnknownNameError,
    fold,
    settings_index,
)
from predictor.values import Prediction

EFFORT_ORDER = ("minimal", "low", "medium", "high", "xhigh", "max")
_DIGIT_DASH = re.compile(r"(?<=\d)-(?=\d)")


def spellings(name: str) -> list[str]:
    """`name`, then with version dashes as dots (all, then each alone), without repeats."""
    found = [name, _DIGIT_DASH.sub(".", name)]
    found += [name[: m.start()] + "." + name[m.end() :] for m in _DIGIT_DASH.finditer(name)]
    return list(dict.fromkeys(found))


def _effort(model_id: str) -> int:
    """Rank of the setting of `model@setting`: its highest effort word (0-5), else -1 for
    any other setting (`thinking`, `thinking-16k`), -2 for thinking switched off."""
    _, _, setting = model_id.partition("@")
    if setting == "nothinking":
        return -2
    words = setting.split("-")
    return max((EFFORT_ORDER.index(w) for w in words if w in EFFORT_ORDER), default=-1)


def _base(model_id: str) -> str:
    """The model of an id without its setting: `o3@low` and `o3-high` are both `o3`."""
    base, at, _ = model_id.partition("@")
    head, _, last = base.rpartition("-")
    return fold(head if not at and head and last in SUFFIX_WORDS else base)


def headline(candidates: Sequence[str]) -> tuple[str | None, str]:
    """(the headline id among one model's settings, the rule that chose it); (None, why)
    when the rule leaves it open (also when the candidates are not one model's settings)."""
    if len({_base(c) for c in candidates}) != 1:
        return None, "not the settings of one model"
    bare = [c for c in candidates if "@" not in c]
    if len(bare) == 1:
        return bare[0], "the catalogue's headline setting"
    if bare:
        return None, "several ids without a setting"
    ranked = sorted(candidates, key=_effort, reverse=True)
    if len(ranked) > 1 and _effort(ranked[1]) == _effort(ranked[0]):
        return None, "no single highest reasoning effort"
    return ranked[0], "no catalogue headline: the highest reasoning effort"


@dataclass(frozen=True)
class ReferenceModel:
    """A reference name resolved: the id used, why, and the snapshot that holds it."""

    given: str
    model_id: str
    rule: str  # "as written", "version dots", or a headline rule of `headline`
    snapshot: FittedMatrix  # the snapshot holding the model
    home: bool  # True when that is the snapshot being compared in

    @property
    def note(self) -> str | None:
        """One line for the comparison's summary; None when the name was the id itself."""
        if self.given == self.model_id and self.home:
            return None
        text = f"{self.given} = {self.model_id}"
        if self.rule != "as written":
            text += f" ({self.rule})"
        if not self.home:
            text += f", from snapshot {self.snapshot.version}"
        return text

    def predictions(self, targets: Sequence[str], level: float) -> dict:
        """The model on each target in its own snapshot: its observed cell (zero-width) or
        its completed cell with the central `level` interval."""
        bp = self.snapshot
        if self.model_id not in bp.fit_models_:
            raise ValueError(
                f"reference model {self.model_id} is not in the fit of snapshot {bp.version}"
            )
        lacking = [t for t in targets if t not in bp.fit_columns]
        if lacking:
            raise ValueError(
                f"reference model {self.model_id} comes from snapshot {bp.version}, which "
                f"does not fit {', '.join(lacking)}: pass targets= among the others"
            )
        i = bp.fit_models_.index(self.model_id)
        mean, low, high = bp.fitted_values(keep_observed=True, level=level)
        observed = bp.completer_.observed_
        out = {}
        for t in targets:
            j = bp.fit_columns[t]
            m = float(mean[i, j])
            out[t] = Prediction(
                t,
                m,
                min(float(low[i, j]), m),
                max(float(high[i, j]), m),
                level,
                bool(observed[i, j]),
            )
        return out


def _in(bp: FittedMatrix, name: str) -> tuple[str, str]:
    """(id, rule) of `name` in `bp` by the module's rule; `bp`'s `UnknownNameError` for the
    name as written when no rule finds it."""
    index: dict[str, list[str]] | None = None
    found: dict[str, str] = {}
    unknown: UnknownNameError | None = None
    for k, spelt in enumerate(spellings(name)):
        rule = "as written" if k == 0 else f"version dots: {spelt}"
        try:
            model_id = bp.resolve_model(spelt)
        except AmbiguousNameError as exc:
            model_id, why = headline(exc.suggestions)
            if model_id is None:
                raise AmbiguousNameError("model", name, exc.suggestions) from None
            rule = why if k == 0 else f"{rule}, {why}"
        except UnknownNameError as exc:
            unknown = unknown or exc
            index = settings_index(bp.models) if index is None else index
            variants = index.get(fold(spelt), [])
            model_id, why = headline(variants) if variants else (None, "")
            if model_id is None:
                continue
            rule = why if k == 0 else f"{rule}, {why}"
        if k == 0:
            return model_id, rule
        found.setdefault(model_id, rule)
    if len(found) > 1:
        raise AmbiguousNameError("model", name, sorted(found))
    if not found:
        assert unknown is not None  # the name as written failed, or k == 0 returned
        raise unknown
    return next(iter(found.items()))


# `resolve_reference`'s default catalogue: `bp.catalogue()` (`BenchPress.catalogue`: the newest
# published snapshot, else the bundled one).
CATALOGUE = "catalogue"


def resolve_reference(
    bp: FittedMatrix, name: str, catalogue: Callable[[], FittedMatrix] | str | None = CATALOGUE
) -> ReferenceModel:
    """`name` as a reference model (module docstring): in `bp`, else in the catalogue
    snapshot (`catalogue()`, loaded only when needed; default `BenchPress.catalogue`; None:
    `bp` alone). Unknown there too: `bp`'s own `UnknownNameError`, with its close matches."""
    if catalogue == CATALOGUE:
        catalogue = bp.catalogue
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"model name must be a non-empty string, got {name!r}")
    try:
        return ReferenceModel(name, *_in(bp, name), bp, True)
    except AmbiguousNameError:
        raise
    except UnknownNameError as unknown:
        other = None if catalogue is None else catalogue()
        if other is None or other.manifest.get("content_hash") == bp.manifest.get("content_hash"):
            raise
        try:
            found = _in(other, name)
        except AmbiguousNameError:
            raise
        except UnknownNameError:
            raise unknown from None
        return ReferenceModel(name, *found, other, False)


def reference_notes(
    bp: FittedMatrix, names: Sequence[str] | str, resolved: dict
) -> tuple[str, ...]:
    """The summary lines saying which id each reference name stood for (names that were the
    id itself say nothing). `resolved`: the references found outside `bp` (model id ->
    `ReferenceModel`, as `compare_with_known_models` collects them; private models too)."""
    names = [names] if isinstance(names, str) else list(names)
    elsewhere = {r.given: r for r in resolved.values() if isinstance(r, ReferenceModel)}
    notes: list[str] = []
    for name in dict.fromkeys(names):
        try:
            note = resolve_reference(bp, name, catalogue=None).note
        except UnknownNameError:
            ref = elsewhere.get(name)
            note = None if ref is None else ref.note
        if note and note not in notes:
            notes.append(note)
    return tuple(notes)
