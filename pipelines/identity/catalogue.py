"""The reviewed model catalogue (`models.csv`) and the identity it gives a parsed name.

Canonical model ids (one grammar, documented here and in the README):

    model_id := benchpress_id                       the BenchPress id, at its headline setting
              | model ["@" setting]                 any other (model, setting)
    model    := catalogue stem                      `gpt-4o-20240806`, `kimi-k2-0905`, `o3`
              | base ["-" YYYYMMDD]                 a name no catalogue row covers (rule id)
    setting  := see `settings.py`                   `thinking-32k`, `high`, `nothinking` ...

A catalogue row is one snapshot of one model: its stem (`model`), the normalised names that
denote it (`keys`), the snapshot date, the BenchPress id when BenchPress has the model, the
setting that id stands for (`canonical_setting`, alternatives after `|` are equivalent spellings)
and the setting a third-party run uses when it states none (`default_setting`: the API default;
empty = the model has no setting, `?` = not known, kept as `@default`).

Lookup of a parsed (base, date):
- a full date must equal a catalogued snapshot of that base (a new snapshot of a catalogued
  model stays unresolved until reviewed);
- a month (`(Aug 2024)`) picks the newest catalogued snapshot released on or before that month;
- no date resolves only when every row with that key is the same model (undated names of a
  model with several snapshots - `gpt-4o`, `gemini-2.5-pro`, `claude-3.5-sonnet` - are moving
  aliases and stay unresolved).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from pipelines.identity.rules import normalise_base


@dataclass(frozen=True)
class CatalogueRow:
    model: str
    keys: tuple[str, ...]
    snapshot: str | None
    benchpress_id: str | None
    canonical: tuple[str, ...]  # first = the spelling, others equivalent; () = none
    default: str | None  # None = no setting; "?" = not known
    name: str | None
    note: str | None


@dataclass(frozen=True)
class Identity:
    model_id: str | None
    base: str | None
    snapshot: str | None
    setting: str | None
    route: str  # canonical | alias | catalogue | rule | unresolved | excluded
    note: str | None = None


class Catalogue:
    def __init__(self, rows: list[CatalogueRow]):
        self.rows = rows
        self.by_key: dict[str, list[CatalogueRow]] = defaultdict(list)
        self.by_model: dict[str, CatalogueRow] = {}
        self.by_benchpress: dict[str, CatalogueRow] = {}
        for row in rows:
            for key in row.keys:
                self.by_key[key].append(row)
            self.by_model.setdefault(row.model, row)
            if row.benchpress_id:
                self.by_benchpress.setdefault(row.benchpress_id, row)
        # ids a rule-built id must never take: they name a catalogued model already
        self.reserved = set(self.by_model) | set(self.by_benchpress)

    @classmethod
    def from_frame(cls, frame: pl.DataFrame) -> Catalogue:
        rows = []
        for r in frame.iter_rows(named=True):
            keys = tuple(k.strip() for k in (r["keys"] or "").split("|") if k.strip())
            bad = [k for k in keys if normalise_base(k) != k]
            if bad:
                raise ValueError(f"models.csv: keys of {r['model']} are not normalised: {bad}")
            canonical = tuple(s.strip() for s in (r["canonical_setting"] or "").split("|") if s)
            rows.append(
                CatalogueRow(
                    model=r["model"].strip(),
                    keys=keys,
                    snapshot=(r["snapshot"] or "").strip() or None,
                    benchpress_id=(r["benchpress_id"] or "").strip() or None,
                    canonical=canonical,
                    default=(r["default_setting"] or "").strip() or None,
                    name=r.get("name"),
                    note=r.get("note"),
                )
            )
        return cls(rows)

    @classmethod
    def load(cls, path: Path) -> Catalogue:
        return cls.from_frame(pl.read_csv(path, infer_schema=False))

    # --------------------------------------------------------------------------- lookup
    def lookup(self, base: str, date: str | None) -> tuple[CatalogueRow | None, str | None]:
        """(row, None) when placed; (None, reason) when the base is catalogued but the name is
        ambiguous or its snapshot unknown; (None, None) when the base is not catalogued."""
        rows = self.by_key.get(base)
        if not rows:
            return None, None
        models = {r.model for r in rows}
        if date is None:
            if len(models) == 1:
                return rows[0], None
            return None, (
                f"undated name {base!r} covers {len(models)} catalogued snapshots "
                f"({', '.join(sorted(models))}): a moving alias"
            )
        if len(date) == 10:
            for row in rows:
                if row.snapshot == date:
                    return row, None
            if len(models) == 1 and all(r.snapshot is None for r in rows):
                return rows[0], None
            return None, f"snapshot {date} of {base!r} is not in the catalogue"
        eligible = [r for r in rows if r.snapshot and r.snapshot[:7] <= date]
        if eligible:
            newest = max(r.snapshot for r in eligible if r.snapshot)
            chosen = {r.model for r in eligible if r.snapshot == newest}
            if len(chosen) == 1:
                return next(r for r in eligible if r.snapshot == newest), None
        return None, f"no catalogued snapshot of {base!r} on or before {date}"

    # ------------------------------------------------------------------------- identity
    def identity_for(
        self, row: CatalogueRow, setting: str | None, headline: bool, route: str
    ) -> Identity:
        """The model id of `row` run at the parsed `setting` (None = not stated)."""
        if setting is None:
            if headline and row.canonical:
                setting = row.canonical[0]
            elif row.default == "?":
                # not known: never the headline id's bare spelling
                setting = "default" if row.canonical else None
            else:
                setting = row.default
        has_settings = bool(row.canonical) or row.default is not None
        if not has_settings:
            if setting == "nothinking":
                setting = None
            elif setting is not None and setting.startswith("thinking"):
                return Identity(
                    None,
                    row.model,
                    row.snapshot,
                    setting,
                    "unresolved",
                    f"{row.model} has no thinking mode: {setting!r} names another model",
                )
        if setting is not None and setting in row.canonical:
            setting = row.canonical[0]
        if setting is None or (row.canonical and setting == row.canonical[0]):
            model_id = row.benchpress_id or row.model
        else:
            model_id = f"{row.model}@{setting}"
        return Identity(model_id, row.model, row.snapshot, setting, route)
